//! What an `opencode serve` process is started with: a private HOME and XDG dirs per
//! server, the providers and credentials of its isolation key, a generated config that
//! makes every tool ask (so the daemon sees every permission), and everything that reaches
//! out on its own switched off.
//!
//! Secrets: the config itself carries none. Each key is a file in the server's private
//! directory (mode 0600) that the config names with OpenCode's `{file:…}` substitution, so
//! no key is in the server's environment. The server's password has to be there
//! (`OPENCODE_SERVER_PASSWORD` is OpenCode's only way to set it), and the tools the agent
//! runs inherit it: an agent can call its own server. That is why a session with its own
//! `token` gets a server of its own.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use sandbox_universal::PermissionMode;

use super::policy::ConfigRefs;
use crate::ProviderEnv;
use crate::process::{ProcessSpec, base_env};

/// The variable OpenCode reads its server password from (user `opencode`).
pub const PASSWORD_ENV: &str = "OPENCODE_SERVER_PASSWORD";
/// The basic-auth user name of the server.
pub const USER: &str = "opencode";

/// Variables that switch off model-list fetches, updates, LSP downloads, default plugins,
/// sharing and Claude Code config discovery.
pub const QUIET_ENV: &[(&str, &str)] = &[
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
    ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
    ("OPENCODE_DISABLE_SHARE", "1"),
    ("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
];

/// Every permission key of the pinned OpenCode (`PermissionConfig`): each is set to `ask`
/// explicitly, so a repository's own `opencode.json` (merged key by key below the inline
/// config) cannot turn one into `allow` behind the daemon's back.
pub const PERMISSION_KEYS: &[&str] = &[
    "read",
    "edit",
    "glob",
    "grep",
    "list",
    "bash",
    "task",
    "external_directory",
    "todowrite",
    "question",
    "webfetch",
    "websearch",
    "lsp",
    "doom_loop",
    "skill",
];

/// A model provider a server is configured with.
#[derive(Clone, PartialEq, Eq)]
pub struct Provider {
    /// OpenCode's provider id (`anthropic`, `openai`).
    pub id: &'static str,
    /// The API key.
    pub key: String,
    /// The base URL as OpenCode's AI SDK wants it (with `/v1`), when not the default.
    pub base_url: Option<String>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("id", &self.id)
            .field("key", &"<redacted>")
            .field("base_url", &self.base_url)
            .finish()
    }
}

/// The providers of a session: Anthropic and OpenAI from the daemon's environment; a
/// session's `token` replaces the key of `token_provider` (the provider of its model, or
/// the first one configured).
pub fn providers(
    env: &ProviderEnv,
    token: Option<&str>,
    token_provider: Option<&str>,
) -> Vec<Provider> {
    let anthropic_url = env
        .get("ANTHROPIC_BASE_URL")
        .map(|url| format!("{}/v1", url.trim_end_matches('/')));
    let openai_url = env.get("OPENAI_BASE_URL").map(str::to_string);
    let mut providers: Vec<Provider> = [
        ("anthropic", "ANTHROPIC_API_KEY", anthropic_url),
        ("openai", "OPENAI_API_KEY", openai_url),
    ]
    .into_iter()
    .filter_map(|(id, var, base_url)| {
        env.get(var).map(|key| Provider {
            id,
            key: key.to_string(),
            base_url,
        })
    })
    .collect();
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        let target = token_provider
            .or_else(|| providers.first().map(|p| p.id))
            .unwrap_or("anthropic");
        match providers.iter_mut().find(|p| p.id == target) {
            Some(provider) => provider.key = token.to_string(),
            None => providers.push(Provider {
                id: if target == "openai" {
                    "openai"
                } else {
                    "anthropic"
                },
                key: token.to_string(),
                base_url: None,
            }),
        }
    }
    providers
}

/// What makes two sessions able to share a server: the same providers, keys and endpoints.
/// Its [`ServerKey::id`] names the server's directory (stable across daemon restarts, so a
/// restored session finds its conversation in the same `opencode.db`); it reveals nothing
/// of the keys.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ServerKey(String);

impl ServerKey {
    /// The key of a set of providers.
    pub fn of(providers: &[Provider]) -> Self {
        let mut hash = Sha256::new();
        for provider in providers {
            for part in [
                provider.id,
                provider.key.as_str(),
                provider.base_url.as_deref().unwrap_or(""),
            ] {
                hash.update(part.len().to_le_bytes());
                hash.update(part.as_bytes());
            }
        }
        let digest = hash.finalize();
        Self(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
    }

    /// The key of a server of one session's own (MCP servers, environment, agents):
    /// named by the session, so a restored session finds its conversation again.
    pub fn own(session_id: &str) -> Self {
        let digest = Sha256::digest(format!("own:{session_id}").as_bytes());
        Self(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
    }

    /// A short hex name for the server's directory.
    pub fn id(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerKey({})", self.0)
    }
}

/// The directories of one server under `root` (`<data>/opencode/<key id>`).
#[derive(Debug, Clone)]
pub struct ServerDirs {
    /// HOME (the XDG dirs are inside; OpenCode keeps its sessions in
    /// `$XDG_DATA_HOME/opencode/opencode.db`).
    pub home: PathBuf,
    /// The key files (mode 0700, files 0600).
    pub secrets: PathBuf,
}

impl ServerDirs {
    /// The directories of the server with `key` under `root`.
    pub fn new(root: &Path, key: &ServerKey) -> Self {
        let dir = root.join(key.id());
        Self {
            home: dir.join("home"),
            secrets: dir.join("keys"),
        }
    }

    /// Creates the directories and writes one key file per provider. With `--agent-user`
    /// the server runs as that user: HOME and the key files become its own, and the
    /// directories above them only let it pass (0711).
    pub fn write(&self, providers: &[Provider]) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let user = crate::user::agent_user();
        std::fs::create_dir_all(&self.home)?;
        std::fs::create_dir_all(&self.secrets)?;
        let passable = if user.is_some() { 0o711 } else { 0o700 };
        let key_dir = self.home.parent().expect("the key's directory");
        for dir in [key_dir, key_dir.parent().expect("the servers' root")] {
            std::fs::set_permissions(dir, PermissionsExt::from_mode(passable))?;
        }
        std::fs::set_permissions(&self.secrets, PermissionsExt::from_mode(0o700))?;
        for provider in providers {
            let path = self.key_file(provider.id);
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&path)?;
            file.write_all(provider.key.as_bytes())?;
        }
        if let Some(user) = user {
            user.own_tree(&self.home)?;
            user.own_tree(&self.secrets)?;
        }
        Ok(())
    }

    /// The file holding a provider's key.
    pub fn key_file(&self, provider: &str) -> PathBuf {
        self.secrets.join(format!("{provider}.key"))
    }
}

/// The inline config (`OPENCODE_CONFIG_CONTENT`, which wins over the user's and the
/// repository's configs key by key): only the given providers, their keys read from the
/// key files, every permission `ask`, no auto-update, no sharing.
pub fn config(providers: &[Provider], dirs: &ServerDirs, refs: &ConfigRefs) -> Value {
    let mut configured = Map::new();
    for provider in providers {
        let mut options = json!({
            "apiKey": refs.file(&dirs.key_file(provider.id)),
        });
        if let Some(url) = &provider.base_url {
            options["baseURL"] = json!(url);
        }
        configured.insert(provider.id.into(), json!({"options": options}));
    }
    let permission: Map<String, Value> = PERMISSION_KEYS
        .iter()
        .map(|key| ((*key).to_string(), json!("ask")))
        .collect();
    json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "enabled_providers": providers.iter().map(|p| p.id).collect::<Vec<_>>(),
        "provider": configured,
        "permission": permission,
    })
}

/// Tools that only read: they never ask, as in every agent's default mode.
const READ_ONLY: &[&str] = &["read", "glob", "grep", "list", "lsp"];
/// Tools that touch nothing but the conversation (asking the user a question, keeping the
/// agent's todo list): asking permission for them would only ask the user twice.
const CONVERSATIONAL: &[&str] = &["question", "todowrite"];

/// The rules a session is created with (`POST /session {permission}`): they override the
/// server's `ask` for that session only, so sessions of different permission modes share a
/// server. `default` lets read-only and conversational tools run and asks for the rest; `acceptEdits` also lets
/// edits run (outside the cwd still asks, through `external_directory`); `plan` forbids
/// edits and commands (OpenCode then does not even offer them); `bypass` lets everything run.
pub fn permission_rules(mode: PermissionMode) -> Value {
    let rule = |permission: &str, action: &str| json!({"permission": permission, "pattern": "*", "action": action});
    let mut rules: Vec<Value> = READ_ONLY
        .iter()
        .chain(CONVERSATIONAL)
        .map(|p| rule(p, "allow"))
        .collect();
    match mode {
        PermissionMode::Default => {}
        PermissionMode::AcceptEdits => rules.push(rule("edit", "allow")),
        PermissionMode::Plan => {
            rules.push(rule("edit", "deny"));
            rules.push(rule("bash", "deny"));
        }
        PermissionMode::Bypass => {
            rules = PERMISSION_KEYS.iter().map(|p| rule(p, "allow")).collect();
        }
    }
    Value::Array(rules)
}

/// `opencode serve` on a free loopback port, in the server's HOME, with its password and
/// config (rendered by [`ConfigRefs::render`]); nothing else of the daemon's environment
/// but the allow-listed variables, and a session's own `env` (for a server of its own).
pub fn serve(
    program: PathBuf,
    dirs: &ServerDirs,
    config: &str,
    password: &str,
    session_env: &BTreeMap<String, String>,
) -> ProcessSpec {
    let mut env: BTreeMap<String, String> = base_env(&dirs.home);
    for (name, value) in QUIET_ENV {
        env.insert((*name).into(), (*value).into());
    }
    env.insert("OPENCODE_CONFIG_CONTENT".into(), config.to_string());
    env.insert(PASSWORD_ENV.into(), password.into());
    crate::process::add_session_env(&mut env, session_env);
    ProcessSpec {
        program,
        args: ["serve", "--hostname", "127.0.0.1", "--port", "0"]
            .map(OsString::from)
            .to_vec(),
        cwd: dirs.home.clone(),
        env,
    }
}

/// A shared server's `opencode serve` (no session's own settings): [`config`] rendered.
pub fn serve_shared(
    program: PathBuf,
    dirs: &ServerDirs,
    providers: &[Provider],
    password: &str,
) -> ProcessSpec {
    let refs = ConfigRefs::default();
    let config = refs.render(&config(providers, dirs, &refs));
    serve(program, dirs, &config, password, &BTreeMap::new())
}

/// A random password for one server start.
pub fn password() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> ProviderEnv {
        ProviderEnv::default()
            .with("ANTHROPIC_API_KEY", "sk-ant-1")
            .with("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
            .with("OPENAI_API_KEY", "sk-oa-1")
    }

    #[test]
    fn providers_come_from_the_environment_and_a_token_replaces_one_key() {
        let all = providers(&env(), None, None);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(all[1].base_url, None);
        let token = providers(&env(), Some("sk-own"), Some("openai"));
        assert_eq!(token[0].key, "sk-ant-1");
        assert_eq!(token[1].key, "sk-own");
        let only = providers(&ProviderEnv::default(), Some("sk-own"), None);
        assert_eq!((only[0].id, only[0].key.as_str()), ("anthropic", "sk-own"));
        assert!(providers(&ProviderEnv::default(), None, None).is_empty());
    }

    #[test]
    fn the_server_key_separates_credentials_and_hides_them() {
        let shared = ServerKey::of(&providers(&env(), None, None));
        assert_eq!(shared, ServerKey::of(&providers(&env(), None, None)));
        let own = ServerKey::of(&providers(&env(), Some("sk-own"), None));
        assert_ne!(shared, own);
        assert_eq!(shared.id().len(), 16);
        assert!(!format!("{shared:?}").contains("sk-"));
        assert!(!format!("{:?}", providers(&env(), None, None)).contains("sk-"));
    }

    #[test]
    fn permission_modes_become_session_rules() {
        let actions = |mode| {
            permission_rules(mode)
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    format!(
                        "{}={}",
                        r["permission"].as_str().unwrap(),
                        r["action"].as_str().unwrap()
                    )
                })
                .collect::<Vec<_>>()
        };
        let default = actions(PermissionMode::Default);
        assert!(default.contains(&"read=allow".to_string()));
        assert!(default.contains(&"question=allow".to_string()));
        assert!(
            !default
                .iter()
                .any(|r| r.starts_with("bash") || r.starts_with("edit"))
        );
        assert!(actions(PermissionMode::AcceptEdits).contains(&"edit=allow".to_string()));
        let plan = actions(PermissionMode::Plan);
        assert!(plan.contains(&"edit=deny".to_string()) && plan.contains(&"bash=deny".to_string()));
        assert_eq!(actions(PermissionMode::Bypass).len(), PERMISSION_KEYS.len());
    }

    #[test]
    fn the_config_carries_no_key_and_asks_for_everything() {
        let dir = tempfile::tempdir().unwrap();
        let all = providers(&env(), None, None);
        let dirs = ServerDirs::new(dir.path(), &ServerKey::of(&all));
        dirs.write(&all).unwrap();
        let refs = ConfigRefs::default();
        let config = config(&all, &dirs, &refs);
        let text = refs.render(&config);
        assert!(
            !text.contains("sk-ant-1") && !text.contains("sk-oa-1"),
            "{text}"
        );
        assert_eq!(config["enabled_providers"], json!(["anthropic", "openai"]));
        let rendered: Value = serde_json::from_str(&text).unwrap();
        let key_ref = rendered["provider"]["anthropic"]["options"]["apiKey"]
            .as_str()
            .unwrap();
        let path = key_ref
            .strip_prefix("{file:")
            .and_then(|p| p.strip_suffix('}'))
            .unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "sk-ant-1");
        let mode = std::fs::metadata(path).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
        for key in PERMISSION_KEYS {
            assert_eq!(config["permission"][key], "ask");
        }
        let spec = serve("/bin/opencode".into(), &dirs, &text, "pw", &BTreeMap::new());
        assert_eq!(spec.env[PASSWORD_ENV], "pw");
        assert!(
            spec.env
                .iter()
                .all(|(k, v)| !v.contains("sk-ant-1") && !k.ends_with("API_KEY")),
            "no key in the server's environment"
        );
        assert_eq!(spec.env["HOME"], dirs.home.display().to_string());
    }
}
