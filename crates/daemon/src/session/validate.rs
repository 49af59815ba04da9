//! Checking what a client asks for when it creates a session.

use std::path::{Path, PathBuf};

use sandbox_agents::{AgentDriver, ConfigError};
use sandbox_universal::constraints::SESSION_ID;
use sandbox_universal::{Constrained, CreateSessionRequest, PermissionMode};

use super::{ConfigField, SessionError, SessionSettings};

/// Checks a client-chosen session id: 1–128 characters of `A-Z a-z 0-9 . _ -`, not starting
/// with a dot (`constraints::SESSION_ID`, which the OpenAPI document states).
pub fn validate_session_id(id: &str) -> Result<(), SessionError> {
    if SESSION_ID.matches(id) {
        Ok(())
    } else {
        Err(SessionError::InvalidId(id.to_string()))
    }
}

/// The agent mode, permission mode, model and variant must be ones the agent offers, and
/// a key check (`validateToken`) one it can make: a request is never silently ignored.
pub(super) async fn validate_choices(
    driver: &dyn AgentDriver,
    request: &CreateSessionRequest,
    permission_mode: PermissionMode,
) -> Result<(), SessionError> {
    if request.validate_token == Some(true) && !driver.capabilities().validate_token {
        return Err(SessionError::TokenCheckUnsupported(driver.id()));
    }
    // Every agent supports the default permission mode; the modes are only asked for (an
    // agent may list them live) when there is something to check.
    if request.agent_mode.is_some() || permission_mode != PermissionMode::Default {
        check_modes(driver, request.agent_mode.as_deref(), permission_mode).await?;
    }
    driver
        .check_model(request.model.as_deref(), request.variant.as_deref())
        .await
        .map_err(|error| match error {
            ConfigError::Invalid(message) => SessionError::config(ConfigField::Model, message),
            ConfigError::Agent(error) => SessionError::Agent(error),
        })
}

async fn check_modes(
    driver: &dyn AgentDriver,
    agent_mode: Option<&str>,
    permission_mode: PermissionMode,
) -> Result<(), SessionError> {
    let agent = driver.id();
    let modes = driver.modes().await.map_err(SessionError::Agent)?;
    if let Some(mode) = agent_mode
        && !modes.modes.iter().any(|m| m.id == mode)
    {
        let known: Vec<&str> = modes.modes.iter().map(|m| m.id.as_str()).collect();
        return Err(SessionError::config(
            ConfigField::AgentMode,
            format!(
                "{agent} has no agent mode `{mode}`; modes: {}",
                known.join(", ")
            ),
        ));
    }
    if !modes.permission_modes.contains(&permission_mode) {
        return Err(SessionError::config(
            ConfigField::PermissionMode,
            format!(
                "{agent} does not support permission mode `{}`",
                serde_json::to_value(permission_mode).expect("serializes")
            ),
        ));
    }
    Ok(())
}

/// The session's working directory: absolute, existing, a directory, canonical, and
/// inside the workspace root when there is one.
pub(super) fn resolve_cwd(
    settings: &SessionSettings,
    cwd: Option<&str>,
) -> Result<PathBuf, SessionError> {
    let requested = match cwd {
        None => settings.default_cwd.clone(),
        Some(path) if Path::new(path).is_absolute() => PathBuf::from(path),
        Some(path) => {
            return Err(SessionError::config(
                ConfigField::Cwd,
                format!("cwd `{path}` must be an absolute path"),
            ));
        }
    };
    let canonical = requested.canonicalize().map_err(|e| {
        SessionError::config(
            ConfigField::Cwd,
            format!("cwd `{}` is not usable: {e}", requested.display()),
        )
    })?;
    if !canonical.is_dir() {
        return Err(SessionError::config(
            ConfigField::Cwd,
            format!("cwd `{}` is not a directory", requested.display()),
        ));
    }
    let root = settings
        .workspace_root
        .as_ref()
        .map(|root| root.canonicalize().unwrap_or_else(|_| root.clone()));
    if let Some(root) = &root
        && !canonical.starts_with(root)
    {
        return Err(SessionError::config(
            ConfigField::Cwd,
            format!(
                "cwd `{}` is outside the workspace root `{}`",
                requested.display(),
                root.display()
            ),
        ));
    }
    if let Some(user) = &settings.agent_user
        && !user.can_write(&canonical)
    {
        // The workspace root is the daemon's to hand over; anything else is the user's call.
        match &root {
            Some(root) if canonical.starts_with(root) => {
                user.own_tree(&canonical).map_err(|e| {
                    SessionError::Internal(format!(
                        "giving `{}` to the agent user `{}`: {e}",
                        canonical.display(),
                        user.name
                    ))
                })?;
            }
            _ => {
                return Err(SessionError::config(
                    ConfigField::Cwd,
                    format!(
                        "cwd `{}` is not writable by the agent user `{}`: give it to that user (e.g. `chown -R {} {}`), or use a directory under --workspace-root, which the daemon hands over itself",
                        canonical.display(),
                        user.name,
                        user.name,
                        canonical.display()
                    ),
                ));
            }
        }
    }
    Ok(canonical)
}

/// Checks a stored session's cwd again, exactly as at creation, before its agent starts: it
/// must still resolve to the same directory (a symlink swapped in meanwhile is refused),
/// inside the workspace root, usable by the agent user.
pub(super) fn recheck_cwd(settings: &SessionSettings, stored: &Path) -> Result<(), String> {
    let stored_text = stored.to_str().ok_or("the stored cwd is not UTF-8")?;
    let resolved = resolve_cwd(settings, Some(stored_text)).map_err(|e| e.to_string())?;
    if resolved != stored {
        return Err(format!(
            "cwd `{}` now leads to `{}` (a symbolic link changed)",
            stored.display(),
            resolved.display()
        ));
    }
    Ok(())
}

/// The permission mode a request asks for: `dangerouslySkipPermissions` means `bypass`.
/// A request whose two fields disagree breaks a constraint of its schema (answered as
/// `ApiJson` answers a broken constraint).
pub(super) fn resolve_permission_mode(
    request: &CreateSessionRequest,
) -> Result<PermissionMode, SessionError> {
    if let Some(broken) = request.broken_relation() {
        return Err(SessionError::ContradictoryRequest(broken));
    }
    Ok(if request.dangerously_skip_permissions == Some(true) {
        PermissionMode::Bypass
    } else {
        request.permission_mode.unwrap_or_default()
    })
}

/// A valid session id, as taken from a request path (400 otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionId(String);

impl std::ops::Deref for SessionId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        validate_session_id(&id).map_err(serde::de::Error::custom)?;
        Ok(Self(id))
    }
}
