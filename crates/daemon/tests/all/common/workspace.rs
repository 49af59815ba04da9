//! Helpers of the workspace tests (files, processes, terminals): a session in a directory
//! of the test's own, a problem's status and slug, and whether a process lives.

use sandbox_client::Client;
use sandbox_universal::CreateSessionRequest;

/// Creates a mock session working in `cwd`.
pub async fn session_in(client: &Client, id: &str, cwd: &std::path::Path) {
    client
        .create_session(
            id,
            &CreateSessionRequest {
                agent: "mock".into(),
                cwd: Some(cwd.display().to_string()),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap();
}

/// A client error's status and problem `type` slug.
pub fn problem_slug(error: sandbox_client::ClientError) -> (u16, String) {
    let problem = error.problem().expect("problem details").clone();
    (
        problem.status,
        problem
            .type_uri
            .trim_start_matches("urn:sandbox-daemon:problem:")
            .to_string(),
    )
}

/// Whether a process with this pid is alive (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}
