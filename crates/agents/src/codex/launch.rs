//! What a Codex session is configured with: the private `CODEX_HOME` and its
//! `config.toml`, the process environment, and the approval/sandbox policy of each
//! permission mode.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sandbox_universal::PermissionMode;
use serde_json::{Value, json};

use crate::SessionConfig;
use crate::process::{ProcessSpec, base_env};

/// The id of the model provider the daemon writes into `config.toml`.
pub const PROVIDER_ID: &str = "sandbox_daemon";

/// The OpenAI API, when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_OPENAI_BASE_URL: &str = crate::validate::OPENAI_DEFAULT_BASE_URL;

/// `CODEX_HOME` inside a session's state directory.
pub fn codex_home(state_dir: &Path) -> PathBuf {
    state_dir.join(".codex")
}

/// The `config.toml` of a session.
///
/// - A custom provider speaking the Responses API over HTTP(S) at `base_url`; the
///   built-in `openai` provider ignores `OPENAI_BASE_URL` and first tries a websocket
///   (about 11 s lost per turn). `requires_openai_auth` makes it use the key given with
///   `account/login/start`, and `cli_auth_credentials_store = "ephemeral"` keeps that key
///   in the app-server's memory only: it is never written to disk nor put in an
///   environment variable a shell command could read.
/// - Features that reach out on their own are off: plugin and app sync (git and GitHub
///   calls, ~5 s at exit), remote plugins, connector suggestions, MCP dependency
///   installs; analytics and the update check too. Thread goals are off: the daemon has
///   no API for them.
/// - `default_mode_request_user_input` lets the model ask questions outside Plan mode;
///   the warning about it being unstable is silenced.
pub fn config_toml(base_url: &str) -> String {
    format!(
        r#"# Written by sandbox-daemon for one session.
model_provider = "{PROVIDER_ID}"
cli_auth_credentials_store = "ephemeral"
check_for_update_on_startup = false
suppress_unstable_features_warning = true

[model_providers.{PROVIDER_ID}]
name = "OpenAI (sandbox-daemon)"
base_url = {base_url}
wire_api = "responses"
requires_openai_auth = true

[analytics]
enabled = false

[features]
plugins = false
apps = false
remote_plugin = false
tool_suggest = false
skill_mcp_dependency_install = false
goals = false
default_mode_request_user_input = true
"#,
        base_url = toml_string(base_url),
    )
}

/// A TOML basic string (JSON string escapes are valid TOML escapes).
fn toml_string(value: &str) -> String {
    serde_json::to_string(value).expect("strings serialize")
}

/// Creates `CODEX_HOME` under `state_dir` with its `config.toml`.
pub fn write_codex_home(state_dir: &Path, base_url: &str) -> std::io::Result<PathBuf> {
    let home = codex_home(state_dir);
    std::fs::create_dir_all(&home)?;
    std::fs::write(home.join("config.toml"), config_toml(base_url))?;
    Ok(home)
}

/// The app-server's environment: the allow-listed variables, `HOME` = the state dir,
/// `CODEX_HOME`, and quiet logs. No credential: the key goes through the login request.
pub fn environment(state_dir: &Path) -> BTreeMap<String, String> {
    let mut env = base_env(state_dir);
    env.insert(
        "CODEX_HOME".into(),
        codex_home(state_dir).display().to_string(),
    );
    env.insert("RUST_LOG".into(), "warn".into());
    env
}

/// The `codex app-server` process of a session: in its working directory, with
/// [`environment`] (write `CODEX_HOME` first with [`write_codex_home`]).
pub fn app_server(program: PathBuf, session: &SessionConfig) -> ProcessSpec {
    ProcessSpec {
        program,
        args: vec![OsString::from("app-server")],
        cwd: session.cwd.clone(),
        env: environment(&session.state_dir),
    }
}

/// How a permission mode is enforced by Codex.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `approvalPolicy` (`untrusted`: every command that is not known to be read-only and
    /// every patch asks; `never`: nothing asks).
    pub approval: &'static str,
    /// `sandboxPolicy` of every turn.
    pub sandbox: Value,
    /// Patches inside the working directory are approved by the driver without asking.
    pub auto_accept_edits: bool,
}

/// The policy of a permission mode.
///
/// The daemon itself runs inside a sandbox, so `default` and `acceptEdits` use Codex's
/// `externalSandbox` policy: Codex asks before acting but does not wrap commands in its
/// own bubblewrap/seccomp sandbox (which needs user namespaces that many containers
/// forbid). `plan` is enforced by Codex's `readOnly` sandbox with nothing to approve;
/// `bypass` runs everything unsandboxed without asking.
pub fn policy(mode: PermissionMode) -> Policy {
    let external = json!({"type": "externalSandbox", "networkAccess": "enabled"});
    match mode {
        PermissionMode::Default => Policy {
            approval: "untrusted",
            sandbox: external,
            auto_accept_edits: false,
        },
        PermissionMode::AcceptEdits => Policy {
            approval: "untrusted",
            sandbox: external,
            auto_accept_edits: true,
        },
        PermissionMode::Plan => Policy {
            approval: "never",
            sandbox: json!({"type": "readOnly"}),
            auto_accept_edits: false,
        },
        PermissionMode::Bypass => Policy {
            approval: "never",
            sandbox: json!({"type": "dangerFullAccess"}),
            auto_accept_edits: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_points_the_custom_provider_at_the_base_url_and_escapes_it() {
        let toml = config_toml("http://127.0.0.1:9/v1\"x");
        assert!(toml.contains(r#"base_url = "http://127.0.0.1:9/v1\"x""#));
        assert!(toml.contains(r#"cli_auth_credentials_store = "ephemeral""#));
        assert!(toml.contains("requires_openai_auth = true"));
        assert!(toml.contains("plugins = false"));
        assert!(
            !toml.contains("env_key"),
            "the key never travels by environment"
        );
    }

    #[test]
    fn environment_has_codex_home_and_no_credentials() {
        let env = environment(Path::new("/state/s1"));
        assert_eq!(env["CODEX_HOME"], "/state/s1/.codex");
        assert_eq!(env["HOME"], "/state/s1");
        assert!(
            env.keys()
                .all(|k| !k.contains("KEY") && !k.contains("TOKEN"))
        );
    }

    #[test]
    fn every_mode_has_a_policy() {
        assert_eq!(policy(PermissionMode::Default).approval, "untrusted");
        assert!(policy(PermissionMode::AcceptEdits).auto_accept_edits);
        assert_eq!(policy(PermissionMode::Plan).sandbox["type"], "readOnly");
        assert_eq!(policy(PermissionMode::Bypass).approval, "never");
    }
}
