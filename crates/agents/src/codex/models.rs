//! `GET /agents/codex/models`: `model/list` of a short-lived app-server with a throwaway
//! `CODEX_HOME` (the catalog is bundled in the binary, so this works offline).

use std::path::Path;
use std::time::Duration;

use sandbox_universal::{AgentError, ModelInfo, ModelsResponse, PermissionMode};
use serde::Deserialize;
use serde_json::json;

use super::convert::Converter;
use super::launch::{self, CodexLaunch, TurnSettings};
use super::native::{Model, ModelList, method};
use crate::AgentSession;
use crate::cache::BinaryCache;
use crate::kernel::ChildSession;
use crate::process::ProcessSpec;

/// How long listing may take in all.
const LIST_TIMEOUT: Duration = Duration::from_secs(60);

/// The models of one binary, listed once per binary version.
#[derive(Debug, Default)]
pub struct ModelCache {
    cache: BinaryCache<ModelsResponse>,
}

impl ModelCache {
    /// The models of `binary`, listed once per binary version.
    pub async fn get(&self, binary: &Path, base_url: &str) -> Result<ModelsResponse, AgentError> {
        self.cache
            .get(binary, || async {
                tokio::time::timeout(LIST_TIMEOUT, list(binary, base_url))
                    .await
                    .map_err(|_| AgentError::Timeout {
                        message: "codex did not list its models in time".into(),
                    })?
            })
            .await
    }
}

async fn list(binary: &Path, base_url: &str) -> Result<ModelsResponse, AgentError> {
    let dir = tempfile::tempdir().map_err(|e| AgentError::SpawnFailed {
        message: format!("no temporary CODEX_HOME: {e}"),
    })?;
    launch::write_codex_home(dir.path(), Some(base_url), launch::AuthStore::Ephemeral).map_err(
        |e| AgentError::SpawnFailed {
            message: format!("writing a temporary CODEX_HOME: {e}"),
        },
    )?;
    let spec = ProcessSpec {
        program: binary.to_path_buf(),
        args: vec!["app-server".into()],
        cwd: dir.path().to_path_buf(),
        env: launch::environment(dir.path()),
    };
    // No sink and no thread: only the answers of this throwaway process are read.
    let settings = TurnSettings::in_mode(PermissionMode::Default, dir.path().display().to_string());
    let (mut session, _) = ChildSession::start(
        CodexLaunch::threadless(spec, None),
        Converter::new(settings),
        None,
        None,
    )
    .await?;
    let mut models = Vec::new();
    let mut cursor: Option<String> = None;
    let result = loop {
        let params = json!({"cursor": cursor, "includeHidden": false});
        let page = match session
            .request(method::MODEL_LIST, params, LIST_TIMEOUT)
            .await
            .and_then(|v| {
                ModelList::deserialize(&v)
                    .map_err(|e| AgentError::protocol(format!("unexpected model/list result: {e}")))
            }) {
            Ok(page) => page,
            Err(error) => break Err(error),
        };
        models.extend(page.data);
        match page.next_cursor {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => break Ok(models_response(models)),
        }
    };
    session.shutdown().await;
    result
}

/// Maps the catalog: efforts become variants.
pub fn models_response(models: Vec<Model>) -> ModelsResponse {
    let default_model = models.iter().find(|m| m.is_default).map(|m| m.id.clone());
    let models = models
        .into_iter()
        .filter(|m| !m.hidden)
        .map(|m| ModelInfo {
            name: if m.display_name.is_empty() {
                m.id.clone()
            } else {
                m.display_name
            },
            id: m.id,
            variants: m
                .supported_reasoning_efforts
                .into_iter()
                .map(|e| e.reasoning_effort)
                .collect(),
            default_variant: m.default_reasoning_effort,
        })
        .collect();
    ModelsResponse {
        models,
        default_model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efforts_become_variants_and_the_default_is_kept() {
        let models: Vec<Model> = serde_json::from_value(json!([
            {"id": "gpt-a", "model": "gpt-a", "displayName": "GPT-A", "hidden": false,
             "isDefault": true, "defaultReasoningEffort": "low", "description": "",
             "supportedReasoningEfforts": [{"reasoningEffort": "low", "description": ""},
                                           {"reasoningEffort": "high", "description": ""}]},
            {"id": "gpt-hidden", "model": "gpt-hidden", "displayName": "", "hidden": true,
             "isDefault": false, "defaultReasoningEffort": "medium", "description": "",
             "supportedReasoningEfforts": []}
        ]))
        .unwrap();
        let response = models_response(models);
        assert_eq!(response.default_model.as_deref(), Some("gpt-a"));
        assert_eq!(response.models.len(), 1);
        assert_eq!(response.models[0].name, "GPT-A");
        assert_eq!(response.models[0].variants, ["low", "high"]);
        assert_eq!(response.models[0].default_variant.as_deref(), Some("low"));
    }
}
