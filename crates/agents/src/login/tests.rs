use std::collections::HashMap;

use sandbox_universal::LoginEntryKind;
use serde_json::json;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).map(OsString::from)
}

fn claude_login(access: &str, expires: i64) -> Value {
    json!({"claudeAiOauth": {"accessToken": access, "refreshToken": "r", "expiresAt": expires,
        "scopes": ["user:inference"], "subscriptionType": "max"}})
}

#[test]
fn logins_are_found_where_each_agent_keeps_them_and_variables_move_them() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let write = |path: PathBuf, value: &Value| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, value.to_string()).unwrap();
    };
    write(
        home.path().join(".claude/.credentials.json"),
        &claude_login("at", 1_900_000_000_000),
    );
    write(
        elsewhere.path().join("auth.json"),
        &json!({"OPENAI_API_KEY": null, "tokens": {"access_token": "a", "refresh_token": "r", "id_token": "i", "account_id": "acc"}, "last_refresh": "2026-11-01T00:00:00Z"}),
    );
    write(
        elsewhere.path().join("opencode/auth.json"),
        &json!({"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1_900_000_000_000_i64}, "openai": {"type": "api", "key": "sk"}}),
    );
    let none = vars(&[]);
    let Discovery::Found(claude) = discover(AgentId::Claude, &none, home.path()) else {
        panic!("Claude's login was not found");
    };
    assert_eq!(claude.entries[0].kind, LoginEntryKind::Oauth);
    assert_eq!(
        claude.entries[0].expires_at.as_deref(),
        Some("2030-03-17T17:46:40Z")
    );
    assert!(matches!(
        discover(AgentId::Codex, &none, home.path()),
        Discovery::Missing(path) if path.ends_with(".codex/auth.json")
    ));
    let moved = vars(&[
        ("CODEX_HOME", elsewhere.path().to_str().unwrap()),
        ("XDG_DATA_HOME", elsewhere.path().to_str().unwrap()),
        ("CLAUDE_CONFIG_DIR", "/nonexistent"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-x"),
    ]);
    let Discovery::Found(codex) = discover(AgentId::Codex, &moved, home.path()) else {
        panic!("CODEX_HOME was not honoured");
    };
    assert_eq!(codex.entries.len(), 1);
    assert_eq!(codex.entries[0].name, "chatgpt");
    let Discovery::Found(opencode) = discover(AgentId::Opencode, &moved, home.path()) else {
        panic!("XDG_DATA_HOME was not honoured");
    };
    let kinds: Vec<_> = opencode
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("anthropic", LoginEntryKind::Oauth),
            ("openai", LoginEntryKind::ApiKey)
        ]
    );
    // No file where CLAUDE_CONFIG_DIR points: the token variable stands for the login.
    let Discovery::Found(token) = discover(AgentId::Claude, &moved, home.path()) else {
        panic!("the token was not found");
    };
    assert_eq!(token.source, "$CLAUDE_CODE_OAUTH_TOKEN");
    assert_eq!(token.login, Login::Token("sk-ant-oat01-x".into()));
    assert!(!format!("{token:?}").contains("sk-ant"));
}

#[test]
fn a_file_of_another_shape_is_not_a_login() {
    let bad = |agent, value: Value| describe(agent, &Login::File(value)).unwrap_err();
    assert!(bad(AgentId::Claude, json!({"tokens": {}})).contains("claudeAiOauth"));
    assert!(bad(AgentId::Claude, json!({"claudeAiOauth": {}})).contains("accessToken"));
    assert!(bad(AgentId::Codex, json!({"OPENAI_API_KEY": null})).contains("tokens"));
    assert!(bad(AgentId::Opencode, json!({"anthropic": {"key": "x"}})).contains("type"));
    assert!(bad(AgentId::Opencode, json!({})).contains("no login"));
    assert!(bad(AgentId::Amp, json!({"x": "y"})).contains("apiKey@"));
    assert!(bad(AgentId::Codex, json!([1])).contains("object"));
    assert!(describe(AgentId::Codex, &Login::Token("t".into())).is_err());
    assert!(describe(AgentId::Claude, &Login::Token("a b".into())).is_err());
    let amp = describe(
        AgentId::Amp,
        &Login::File(json!({"apiKey@https://amp.example/": "k"})),
    )
    .unwrap();
    assert_eq!(amp[0].name, "https://amp.example/");
}

#[test]
fn a_refresh_replaces_only_the_entries_the_agent_changed() {
    let base = json!({"anthropic": {"type": "oauth", "access": "a0", "expires": 1}, "openai": {"type": "oauth", "access": "o0", "expires": 1}});
    // This session refreshed anthropic; another one refreshed openai meanwhile.
    let theirs = json!({"anthropic": {"type": "oauth", "access": "a1", "expires": 2}, "openai": {"type": "oauth", "access": "o0", "expires": 1}});
    let stored = json!({"anthropic": {"type": "oauth", "access": "a0", "expires": 1}, "openai": {"type": "oauth", "access": "o1", "expires": 2}});
    let merged = merge(&base, &theirs, &stored);
    assert_eq!(merged["anthropic"]["access"], "a1");
    assert_eq!(merged["openai"]["access"], "o1");
    // Both refreshed the same entry: the one lasting longer stays, whoever writes last.
    let later = json!({"anthropic": {"type": "oauth", "access": "a2", "expires": 3}, "openai": base["openai"]});
    assert_eq!(merge(&base, &later, &merged)["anthropic"]["access"], "a2");
    let earlier = json!({"anthropic": {"type": "oauth", "access": "a9", "expires": 0}, "openai": base["openai"]});
    assert_eq!(merge(&base, &earlier, &merged)["anthropic"]["access"], "a1");
    // An entry the agent logged out of goes; one it added comes.
    let changed = json!({"openai": base["openai"], "google": {"type": "api", "key": "g"}});
    let merged = merge(&base, &changed, &stored);
    assert!(merged.get("anthropic").is_none());
    assert_eq!(merged["google"]["key"], "g");
    assert_eq!(merged["openai"]["access"], "o1");
}

#[test]
fn a_seeded_login_is_private_gives_back_what_changed_and_is_removed() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let spec = spec(AgentId::Claude).unwrap();
    let path = spec.session_path(home.path());
    let login = SeededLogin::new(AgentId::Claude, Login::File(claude_login("a0", 1)));
    login.seed(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    assert_eq!(login.changes(), None);
    std::fs::write(&path, claude_login("a1", 2).to_string()).unwrap();
    let change = login.changes().unwrap();
    assert_eq!(change.base["claudeAiOauth"]["accessToken"], "a0");
    assert_eq!(change.now["claudeAiOauth"]["accessToken"], "a1");
    assert_eq!(login.changes(), None, "a change is given back once");
    login.untake(&change);
    // Written again (the agent restarted) while the refresh is not stored yet: the copy
    // holds the refresh, not the original, and the refresh is still to be given back.
    login.seed(&path).unwrap();
    let again: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(again["claudeAiOauth"]["accessToken"], "a1");
    assert_eq!(login.changes(), Some(change));
    assert_eq!(login.changes(), None);
    assert!(!format!("{login:?}").contains("a1"));
    login.remove();
    assert!(!path.exists());
    assert_eq!(login.changes(), None);
}
