//! What an OpenCode server offers, asked of the server itself: its models (`GET
//! /config/providers`, with each model's variants), its agents (`GET /agent`, OpenCode's own
//! modes such as `build` and `plan`) and its version (`GET /global/health`).

use sandbox_universal::{AgentError, AgentModeInfo, ModelInfo, ModelsResponse};
use serde_json::Value;

use crate::transport::HttpPeer;

/// OpenCode's own default agent.
pub const DEFAULT_AGENT: &str = "build";

/// The models, agents and version of one OpenCode server.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    /// Models as `provider/model`, with their variants.
    pub models: ModelsResponse,
    /// The agents a session can run as (primary, not hidden).
    pub modes: Vec<AgentModeInfo>,
    /// The server's version.
    pub version: Option<String>,
}

impl Catalog {
    /// Asks `peer`'s server.
    pub async fn fetch(peer: &HttpPeer) -> Result<Self, AgentError> {
        let ask = |path: &'static str| async move {
            peer.get_json(path)
                .await
                .map_err(|e| e.into_agent_error(&format!("asking OpenCode for {path}")))
        };
        let providers = ask("/config/providers").await?;
        let agents = ask("/agent").await?;
        let health = ask("/global/health").await?;
        Self::parse(&providers, &agents, &health)
    }

    /// Reads the three answers.
    pub fn parse(providers: &Value, agents: &Value, health: &Value) -> Result<Self, AgentError> {
        let list = providers["providers"].as_array().ok_or_else(|| {
            AgentError::protocol(format!(
                "OpenCode's /config/providers has no `providers` list: {}",
                truncate(providers)
            ))
        })?;
        let mut models = Vec::new();
        let mut default_model = None;
        for provider in list {
            let Some(provider_id) = provider["id"].as_str() else {
                continue;
            };
            if let Some(model) = providers["default"][provider_id].as_str() {
                default_model.get_or_insert_with(|| format!("{provider_id}/{model}"));
            }
            let Some(entries) = provider["models"].as_object() else {
                continue;
            };
            for (model_id, model) in entries {
                let variants = model["variants"]
                    .as_object()
                    .map(|v| v.keys().cloned().collect())
                    .unwrap_or_default();
                models.push(ModelInfo {
                    id: format!("{provider_id}/{model_id}"),
                    name: model["name"].as_str().unwrap_or(model_id).to_string(),
                    variants,
                    default_variant: None,
                });
            }
        }
        let modes = agents
            .as_array()
            .ok_or_else(|| {
                AgentError::protocol(format!(
                    "OpenCode's /agent is not a list: {}",
                    truncate(agents)
                ))
            })?
            .iter()
            .filter(|agent| {
                matches!(agent["mode"].as_str(), Some("primary" | "all"))
                    && !agent["hidden"].as_bool().unwrap_or(false)
            })
            .filter_map(|agent| {
                let name = agent["name"].as_str()?;
                Some(AgentModeInfo {
                    id: name.to_string(),
                    name: name.to_string(),
                    description: agent["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect();
        Ok(Self {
            models: ModelsResponse {
                models,
                default_model,
            },
            modes,
            version: health["version"].as_str().map(str::to_string),
        })
    }

    /// The default agent, when the server offers it.
    pub fn default_mode(&self) -> Option<String> {
        self.modes
            .iter()
            .any(|m| m.id == DEFAULT_AGENT)
            .then(|| DEFAULT_AGENT.to_string())
    }

    /// Checks a session's model (`provider/model`) and variant; the model used is the
    /// given one or the default. The message says what is offered.
    pub fn check(&self, model: Option<&str>, variant: Option<&str>) -> Result<(), String> {
        let Some(id) = model.or(self.models.default_model.as_deref()) else {
            return match (model, variant) {
                (_, Some(variant)) => Err(format!(
                    "OpenCode has no model configured, so variant `{variant}` cannot be checked; name a model"
                )),
                _ => Ok(()),
            };
        };
        let Some(info) = self.models.models.iter().find(|m| m.id == id) else {
            if split_model(id).is_none() {
                return Err(format!(
                    "OpenCode models are named `provider/model` (e.g. {}); got `{id}`",
                    self.models
                        .default_model
                        .as_deref()
                        .unwrap_or("anthropic/claude-sonnet-4-6")
                ));
            }
            return Err(format!(
                "OpenCode offers no model `{id}` with the providers this daemon has credentials for; see GET /agents/opencode/models"
            ));
        };
        match variant {
            Some(variant) if !info.variants.iter().any(|v| v == variant) => {
                Err(if info.variants.is_empty() {
                    format!("OpenCode's model `{id}` has no variants; got `{variant}`")
                } else {
                    format!(
                        "OpenCode's model `{id}` has no variant `{variant}`; variants: {}",
                        info.variants.join(", ")
                    )
                })
            }
            _ => Ok(()),
        }
    }
}

/// `provider/model` → `(provider, model)`.
pub fn split_model(id: &str) -> Option<(&str, &str)> {
    id.split_once('/')
        .filter(|(provider, model)| !provider.is_empty() && !model.is_empty())
}

fn truncate(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(300) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        let providers = json!({
            "providers": [
                {"id": "anthropic", "models": {
                    "claude-haiku-4-5": {"name": "Claude Haiku 4.5", "variants": {"high": {}, "max": {}}},
                    "claude-sonnet-4-6": {"name": "Claude Sonnet 4.6", "variants": {}}
                }},
                {"id": "openai", "models": {"gpt-5.4": {"name": "GPT-5.4"}}}
            ],
            "default": {"openai": "gpt-5.4", "anthropic": "claude-sonnet-4-6"}
        });
        let agents = json!([
            {"name": "build", "description": "The default agent.", "mode": "primary"},
            {"name": "title", "mode": "primary", "hidden": true},
            {"name": "general", "description": "Subagent", "mode": "subagent"},
            {"name": "plan", "description": "Plan mode.", "mode": "primary"}
        ]);
        Catalog::parse(
            &providers,
            &agents,
            &json!({"healthy": true, "version": "1.18.33"}),
        )
        .unwrap()
    }

    #[test]
    fn models_modes_and_version_come_from_the_server() {
        let catalog = catalog();
        let ids: Vec<_> = catalog
            .models
            .models
            .iter()
            .map(|m| m.id.as_str())
            .collect();
        assert_eq!(
            ids,
            [
                "anthropic/claude-haiku-4-5",
                "anthropic/claude-sonnet-4-6",
                "openai/gpt-5.4"
            ]
        );
        assert_eq!(catalog.models.models[0].variants, ["high", "max"]);
        assert_eq!(
            catalog.models.default_model.as_deref(),
            Some("anthropic/claude-sonnet-4-6"),
            "the first provider's default"
        );
        let modes: Vec<_> = catalog.modes.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(modes, ["build", "plan"], "primary, not hidden");
        assert_eq!(catalog.default_mode().as_deref(), Some("build"));
        assert_eq!(catalog.version.as_deref(), Some("1.18.33"));
    }

    #[test]
    fn unknown_models_and_variants_are_refused_with_what_is_offered() {
        let catalog = catalog();
        assert_eq!(catalog.check(None, None), Ok(()));
        assert_eq!(
            catalog.check(Some("anthropic/claude-haiku-4-5"), Some("max")),
            Ok(())
        );
        let wrong = catalog
            .check(Some("anthropic/claude-haiku-4-5"), Some("ultra"))
            .unwrap_err();
        assert!(wrong.contains("variants: high, max"), "{wrong}");
        let none = catalog.check(None, Some("high")).unwrap_err();
        assert!(none.contains("has no variants"), "{none}");
        let unknown = catalog.check(Some("anthropic/nope"), None).unwrap_err();
        assert!(unknown.contains("no model `anthropic/nope`"), "{unknown}");
        let bare = catalog.check(Some("gpt-5.4"), None).unwrap_err();
        assert!(bare.contains("provider/model"), "{bare}");
    }

    #[test]
    fn a_server_that_answers_nonsense_is_a_protocol_error() {
        let error = Catalog::parse(&json!({"oops": 1}), &json!([]), &json!({})).unwrap_err();
        assert_eq!(error.kind(), "protocolError");
        assert!(Catalog::parse(&json!({"providers": []}), &json!({}), &json!({})).is_err());
    }
}
