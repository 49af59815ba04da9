//! Helpers of the workspace tests (files, processes): a session in a directory of the
//! test's own, and a problem's status and slug.

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
