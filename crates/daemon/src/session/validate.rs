//! Checking what a client asks for when it creates a session.

use std::path::{Path, PathBuf};

use sandbox_agents::AgentDriver;
use sandbox_universal::{CreateSessionRequest, PermissionMode};

use super::SessionSettings;
use crate::error::ApiError;

/// Longest accepted session id.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// Checks a client-chosen session id: 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting
/// with a dot.
pub fn validate_session_id(id: &str) -> Result<(), ApiError> {
    let valid = !id.is_empty()
        && id.len() <= MAX_SESSION_ID_LEN
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(())
    } else {
        Err(ApiError::InvalidParameter(format!(
            "invalid session id `{id}`: use 1-{MAX_SESSION_ID_LEN} characters of A-Z a-z 0-9 . _ - (not starting with a dot)"
        )))
    }
}

/// The agent mode and permission mode must be ones the agent offers.
pub(super) fn validate_modes(
    driver: &dyn AgentDriver,
    agent_mode: Option<&str>,
    permission_mode: PermissionMode,
) -> Result<(), ApiError> {
    let agent = driver.id();
    if let Some(mode) = agent_mode {
        let modes = driver.modes();
        if driver.supported() && !modes.modes.iter().any(|m| m.id == mode) {
            let known: Vec<&str> = modes.modes.iter().map(|m| m.id.as_str()).collect();
            return Err(ApiError::InvalidSessionConfig(format!(
                "{agent} has no agent mode `{mode}`; modes: {}",
                known.join(", ")
            )));
        }
    }
    if driver.supported() && !driver.modes().permission_modes.contains(&permission_mode) {
        return Err(ApiError::InvalidSessionConfig(format!(
            "{agent} does not support permission mode `{}`",
            serde_json::to_value(permission_mode).expect("serializes")
        )));
    }
    Ok(())
}

/// The session's working directory: absolute, existing, a directory, canonical, and
/// inside the workspace root when there is one.
pub(super) fn resolve_cwd(
    settings: &SessionSettings,
    cwd: Option<&str>,
) -> Result<PathBuf, ApiError> {
    let requested = match cwd {
        None => settings.default_cwd.clone(),
        Some(path) if Path::new(path).is_absolute() => PathBuf::from(path),
        Some(path) => {
            return Err(ApiError::InvalidSessionConfig(format!(
                "cwd `{path}` must be an absolute path"
            )));
        }
    };
    let canonical = requested.canonicalize().map_err(|e| {
        ApiError::InvalidSessionConfig(format!("cwd `{}` is not usable: {e}", requested.display()))
    })?;
    if !canonical.is_dir() {
        return Err(ApiError::InvalidSessionConfig(format!(
            "cwd `{}` is not a directory",
            requested.display()
        )));
    }
    if let Some(root) = &settings.workspace_root {
        let root = root.canonicalize().unwrap_or_else(|_| root.clone());
        if !canonical.starts_with(&root) {
            return Err(ApiError::InvalidSessionConfig(format!(
                "cwd `{}` is outside the workspace root `{}`",
                requested.display(),
                root.display()
            )));
        }
    }
    Ok(canonical)
}

/// The permission mode a request asks for; `bypass` needs `dangerouslySkipPermissions`.
pub(super) fn resolve_permission_mode(
    request: &CreateSessionRequest,
) -> Result<PermissionMode, ApiError> {
    let skip = request.dangerously_skip_permissions.unwrap_or(false);
    match (request.permission_mode, skip) {
        (Some(PermissionMode::Bypass), false) => Err(ApiError::InvalidSessionConfig(
            "permissionMode `bypass` needs `dangerouslySkipPermissions: true`".into(),
        )),
        (None, true) => Ok(PermissionMode::Bypass),
        (Some(mode), true) if mode != PermissionMode::Bypass => {
            Err(ApiError::InvalidSessionConfig(format!(
                "`dangerouslySkipPermissions: true` conflicts with permissionMode `{}`",
                serde_json::to_value(mode).expect("serializes")
            )))
        }
        (mode, _) => Ok(mode.unwrap_or_default()),
    }
}
