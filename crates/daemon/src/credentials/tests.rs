use std::os::unix::fs::PermissionsExt;

use sandbox_agents::login::{Login, SeededLogin};
use serde_json::{Value, json};

use super::*;

fn opencode_login() -> Value {
    json!({
        "anthropic": {"type": "oauth", "access": "a0", "refresh": "ra0", "expires": 1},
        "openai": {"type": "oauth", "access": "o0", "refresh": "ro0", "expires": 1},
    })
}

#[test]
fn a_stored_login_is_private_and_described_without_its_secret() {
    let data = tempfile::tempdir().unwrap();
    let store = CredentialStore::new(data.path());
    let (info, replaced) = store
        .put(
            AgentId::Opencode,
            Login::File(opencode_login()),
            Some("/home/u/.local/share/opencode/auth.json".into()),
        )
        .unwrap();
    assert!(!replaced);
    assert_eq!(
        info.file.as_deref(),
        Some(".local/share/opencode/auth.json")
    );
    assert_eq!(info.entries.len(), 2);
    let shown = serde_json::to_string(&info).unwrap();
    assert!(!shown.contains("a0") && !shown.contains("ra0"), "{shown}");
    let file = data.path().join("credentials/opencode.json");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let dir = data.path().join("credentials");
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        store.login(AgentId::Opencode).unwrap(),
        Some(Login::File(opencode_login()))
    );
    assert!(
        store
            .put(AgentId::Opencode, Login::File(opencode_login()), None)
            .unwrap()
            .1
    );
    assert_eq!(store.list().len(), 1);
    // Not a login of that agent: refused, the stored one stays.
    let refused = store
        .put(AgentId::Codex, Login::File(opencode_login()), None)
        .unwrap_err();
    assert!(
        matches!(refused, CredentialError::Invalid { .. }),
        "{refused}"
    );
    assert!(store.remove(AgentId::Opencode).unwrap());
    assert!(!store.remove(AgentId::Opencode).unwrap());
    assert_eq!(store.info(AgentId::Opencode).unwrap(), None);
}

#[test]
fn two_sessions_refreshing_at_once_both_keep_their_refresh() {
    let data = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(CredentialStore::new(data.path()));
    store
        .put(AgentId::Opencode, Login::File(opencode_login()), None)
        .unwrap();
    // Each session's agent refreshes one provider in its own copy.
    let homes: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let sessions: Vec<_> = homes
        .iter()
        .map(|home| {
            let seeded = SeededLogin::new(
                AgentId::Opencode,
                store.login(AgentId::Opencode).unwrap().unwrap(),
            );
            let path = home.path().join("auth.json");
            seeded.seed(&path).unwrap();
            (seeded, path)
        })
        .collect();
    for ((_, path), provider) in sessions.iter().zip(["anthropic", "openai"]) {
        let mut login = opencode_login();
        login[provider]["access"] = json!(format!("{provider}-refreshed"));
        login[provider]["expires"] = json!(2);
        std::fs::write(path, login.to_string()).unwrap();
    }
    std::thread::scope(|scope| {
        for (seeded, _) in &sessions {
            let store = store.clone();
            scope.spawn(move || {
                let change = seeded.changes().unwrap();
                assert!(store.refresh(AgentId::Opencode, &change).unwrap());
            });
        }
    });
    let Some(Login::File(now)) = store.login(AgentId::Opencode).unwrap() else {
        panic!("the login is gone");
    };
    assert_eq!(now["anthropic"]["access"], "anthropic-refreshed");
    assert_eq!(now["openai"]["access"], "openai-refreshed");
    assert!(
        store
            .info(AgentId::Opencode)
            .unwrap()
            .unwrap()
            .refreshed_at
            .is_some()
    );
}

#[test]
fn a_session_uses_its_token_then_the_environment_then_a_stored_login() {
    let data = tempfile::tempdir().unwrap();
    let store = CredentialStore::new(data.path());
    let bare = Credentials::new(CredentialStore::new(data.path()), ProviderEnv::default());
    let error = bare.for_session(AgentId::Codex, None).unwrap_err();
    let AgentError::TokenError { message } = error else {
        panic!("not a token error: {error:?}");
    };
    for way in [
        "`token`",
        "OPENAI_API_KEY",
        "credentials import --agent codex",
        "PUT /credentials/codex",
    ] {
        assert!(message.contains(way), "{message}");
    }
    assert!(bare.for_session(AgentId::Mock, None).unwrap().is_none());
    assert!(
        bare.for_session(AgentId::Codex, Some("sk"))
            .unwrap()
            .is_none()
    );
    assert_eq!(bare.available(AgentId::Codex).available, []);
    store
        .put(
            AgentId::Codex,
            Login::File(json!({"tokens": {"access_token": "at", "refresh_token": "rt"}})),
            None,
        )
        .unwrap();
    let seeded = bare.for_session(AgentId::Codex, None).unwrap().unwrap();
    assert!(seeded.is_file());
    assert_eq!(
        bare.available(AgentId::Codex).available,
        [CredentialKind::StoredLogin]
    );
    let keyed = Credentials::new(
        CredentialStore::new(data.path()),
        ProviderEnv::default().with("OPENAI_API_KEY", "sk"),
    );
    assert!(keyed.for_session(AgentId::Codex, None).unwrap().is_none());
    assert_eq!(
        keyed.available(AgentId::Codex).available,
        [CredentialKind::ApiKey, CredentialKind::StoredLogin]
    );
    let oauth = Credentials::new(
        CredentialStore::new(data.path()),
        ProviderEnv::default().with("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat"),
    );
    assert_eq!(
        oauth.available(AgentId::Claude).available,
        [CredentialKind::OauthToken]
    );
    assert!(!oauth.available(AgentId::Mock).required);
}
