//! Asking the installed CLI what it knows, offline: a throw-away process answers
//! `initialize` (models with their effort levels, built-in agents, version) without any
//! model call, in a private temporary HOME.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sandbox_universal::{AgentError, ModelInfo, ModelsResponse};
use serde_json::Value;

use super::convert::Converter;
use super::launch::{ClaudeLaunch, LaunchPlan, STREAM_ARGS, environment};
use crate::Credentials;
use crate::kernel::ChildSession;

/// Runs the CLI at `program` just long enough to answer `initialize`; returns the answer.
pub async fn initialize(program: &Path) -> Result<Value, AgentError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let home: PathBuf = std::env::temp_dir().join(format!(
        "sandbox-daemon-claude-probe-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&home).map_err(|e| AgentError::SpawnFailed {
        message: format!("creating {}: {e}", home.display()),
    })?;
    let plan = LaunchPlan {
        program: program.to_path_buf(),
        cwd: home.clone(),
        env: environment(&home, &Credentials::None, None, false),
        args: STREAM_ARGS.iter().map(|a| (*a).to_string()).collect(),
        permission_mode: sandbox_universal::PermissionMode::Default,
        files: Vec::new(),
    };
    let id = uuid::Uuid::new_v4().to_string();
    let converter = Converter::new(home.display().to_string());
    let answer = match ChildSession::start(ClaudeLaunch::new(plan, id), converter, None, None).await
    {
        Ok((mut session, answer)) => {
            crate::AgentSession::shutdown(&mut session).await;
            Ok(answer)
        }
        Err(error) => Err(error),
    };
    let _ = std::fs::remove_dir_all(&home);
    answer
}

/// The models of an `initialize` answer: each model alias with its effort levels as
/// variants; `default` is the default model when the CLI lists it.
pub fn models(init: &Value) -> ModelsResponse {
    let models: Vec<ModelInfo> = init["models"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m["value"].as_str()?.to_string();
            Some(ModelInfo {
                name: m["displayName"].as_str().unwrap_or(&id).to_string(),
                variants: m["supportedEffortLevels"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                default_variant: None,
                id,
            })
        })
        .collect();
    let default_model = models
        .iter()
        .find(|m| m.id == "default")
        .map(|m| m.id.clone());
    ModelsResponse {
        models,
        default_model,
    }
}

/// The model `default` resolves to, per an `initialize` answer.
pub fn resolved_model(init: &Value, alias: &str) -> Option<String> {
    init["models"]
        .as_array()?
        .iter()
        .find(|m| m["value"] == alias)
        .and_then(|m| m["resolvedModel"].as_str())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn models_come_with_effort_levels() {
        let init = json!({"models": [
            {"value": "default", "resolvedModel": "claude-x", "displayName": "Default (recommended)",
             "supportedEffortLevels": ["low", "high"]},
            {"value": "haiku", "displayName": "Haiku"}
        ]});
        let models = models(&init);
        assert_eq!(models.default_model.as_deref(), Some("default"));
        assert_eq!(models.models[0].variants, ["low", "high"]);
        assert_eq!(models.models[1].name, "Haiku");
        assert!(models.models[1].variants.is_empty());
        assert_eq!(
            resolved_model(&init, "default").as_deref(),
            Some("claude-x")
        );
        assert_eq!(resolved_model(&init, "opus"), None);
    }
}
