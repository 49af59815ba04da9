use super::*;
use crate::opencode::launch::{self, ServerDirs, ServerKey};

fn policy(value: Value) -> SessionPolicy {
    serde_json::from_value(value).unwrap()
}

fn rules(policy: &SessionPolicy) -> Vec<String> {
    session_rules(policy)
        .iter()
        .map(|r| {
            assert_eq!(r["pattern"], "*");
            format!(
                "{}={}",
                r["permission"].as_str().unwrap(),
                r["action"].as_str().unwrap()
            )
        })
        .collect()
}

fn mcp(policy: &SessionPolicy, mode: PermissionMode) -> Vec<String> {
    mcp_permission(policy, mode)
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
        .collect()
}

#[test]
fn everything_is_honoured_and_tools_are_removed() {
    let support = support();
    assert_eq!(support.system_prompt_modes.len(), 2);
    assert_eq!(support.tools.len(), 9);
    assert!(
        support
            .tools
            .values()
            .all(|r| *r == ToolRestriction::Removed)
    );
    assert_eq!(
        support.max_turns,
        Some(sandbox_universal::TurnLimiter::Daemon)
    );
    assert!(support.env && support.mcp_transports.len() == 2);
    assert_eq!(support.image_types.len(), 4);
}

#[test]
fn denied_tools_become_deny_rules_and_prompt_tools_carrying_every_rule() {
    let open = SessionPolicy::default();
    assert!(rules(&open).is_empty());
    let mode_rules = |mode| match launch::permission_rules(mode) {
        Value::Array(rules) => rules,
        _ => unreachable!(),
    };
    assert!(prompt_tools(&open, &mode_rules(PermissionMode::Default)).is_empty());

    let deny = policy(json!({"tools": {"deny": ["shell", "write", "webSearch"]}}));
    assert_eq!(rules(&deny), ["bash=deny", "websearch=deny", "task=deny"]);
    let mut all = mode_rules(PermissionMode::AcceptEdits);
    all.extend(session_rules(&deny));
    let tools = prompt_tools(&deny, &all);
    for name in ["bash", "write", "websearch", "codesearch", "task"] {
        assert_eq!(tools[name], false, "{name}");
    }
    // The map replaces the session's rules: the mode's are in it.
    for name in ["read", "glob", "question", "edit"] {
        assert_eq!(tools[name], true, "{name}");
    }

    let both = policy(json!({"tools": {"deny": ["write", "edit"]}}));
    assert!(rules(&both).contains(&"edit=deny".to_string()));
    let mut all = mode_rules(PermissionMode::Bypass);
    all.extend(session_rules(&both));
    let tools = prompt_tools(&both, &all);
    assert_eq!(
        (&tools["edit"], &tools["bash"]),
        (&json!(false), &json!(true))
    );

    let allow = policy(json!({"tools": {"allow": ["read", "grep"]}}));
    let allowed = rules(&allow);
    for kept in ["read=deny", "grep=deny"] {
        assert!(!allowed.contains(&kept.to_string()), "{allowed:?}");
    }
    for gone in ["bash=deny", "glob=deny", "edit=deny", "webfetch=deny"] {
        assert!(allowed.contains(&gone.to_string()), "{gone}: {allowed:?}");
    }
    assert_eq!(prompt_tools(&allow, &[])["list"], false);
}

#[test]
fn mcp_tools_ask_and_are_removed_by_server_and_by_tool() {
    let servers = json!({
        "st": {"type": "stdio", "command": "python3"},
        "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
    });
    let open = policy(json!({"mcpServers": servers}));
    assert_eq!(
        mcp(&open, PermissionMode::Default),
        ["ht_*=ask", "st_*=ask"]
    );
    assert_eq!(
        mcp(&open, PermissionMode::Bypass),
        ["ht_*=allow", "st_*=allow"]
    );
    assert!(rules(&open).is_empty(), "MCP rules are the server's config");
    let deny = policy(json!({"mcpServers": servers,
        "tools": {"deny": ["mcp:st/*", "mcp:ht/delete.all"]}}));
    assert_eq!(
        mcp(&deny, PermissionMode::Default),
        ["ht_*=ask", "ht_delete_all=deny", "st_*=deny"]
    );
    let allow = policy(json!({"mcpServers": servers,
        "tools": {"allow": ["shell", "mcp:ht/echo"], "deny": ["mcp:ht/echo"]}}));
    assert_eq!(
        mcp(&allow, PermissionMode::AcceptEdits),
        ["ht_*=deny", "st_*=deny"]
    );
    let allow = policy(json!({"mcpServers": servers, "tools": {"allow": ["mcp:ht/echo"]}}));
    assert_eq!(
        mcp(&allow, PermissionMode::Default),
        ["ht_*=deny", "ht_echo=ask", "st_*=deny"]
    );
}

#[test]
fn only_process_settings_need_a_server_of_its_own() {
    let state = Path::new("/state");
    let none = |p: &SessionPolicy| {
        OwnServer::of("s1", state, p, None, PermissionMode::Default, None).is_none()
    };
    assert!(none(&policy(json!({"systemPrompt": "x", "maxTurns": 2,
        "tools": {"deny": ["shell"]}}))));
    assert!(!none(&policy(json!({"env": {"A": "b"}}))));
    assert!(!none(&policy(
        json!({"mcpServers": {"st": {"type": "stdio", "command": "sh"}}})
    )));
    let replace = policy(json!({"systemPrompt": "x", "systemPromptMode": "replace"}));
    let own = OwnServer::of(
        "s1",
        state,
        &replace,
        Some("plan"),
        PermissionMode::Default,
        None,
    )
    .unwrap();
    assert_eq!(own.prompt, Some(("plan".into(), "x".into())));
    assert_eq!(own.root, state.join("opencode"));
    assert_eq!(replaced_agent(&replace, None).as_deref(), Some("build"));
    assert_ne!(ServerKey::own("s1"), ServerKey::own("s2"));
}

#[test]
fn the_own_config_holds_references_and_session_texts_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let session = policy(json!({
        "systemPrompt": "Be {env:HOME} and {file:/etc/passwd}",
        "systemPromptMode": "replace",
        "env": {"EXTRA": "x-value"},
        "mcpServers": {
            "st": {"type": "stdio", "command": "python3", "args": ["{env:PATH}"],
                   "env": {"ST_KEY": "st-secret"}},
            "ht": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer ht-secret"}},
            "host": {"type": "http", "url": "http://127.0.0.1:9/sessions/s1/mcp",
                     "headers": {"Authorization": "Bearer host-secret"}},
        },
    }));
    let own = OwnServer::of(
        "s1",
        dir.path(),
        &session,
        None,
        PermissionMode::Default,
        None,
    )
    .unwrap();
    let key = ServerKey::own("s1");
    let dirs = ServerDirs::new(&own.root, &key);
    dirs.write(&[]).unwrap();
    let refs = ConfigRefs::default();
    let mut config = launch::config(&[], &dirs, &refs);
    let written = own.configure(&mut config, &dirs.secrets, &refs).unwrap();
    assert_eq!(written.len(), 3);
    let text = refs.render(&config);
    for secret in ["st-secret", "ht-secret", "host-secret", "x-value"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    // The session's texts never reach OpenCode's substitution; the daemon's references do.
    assert!(!text.contains("{env:HOME}") && !text.contains("{file:/etc/passwd}"));
    assert!(!text.contains("{env:PATH}"));
    assert_eq!(text.matches("{file:").count(), 3, "{text}");
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        parsed["agent"]["build"]["prompt"],
        "Be {env:HOME} and {file:/etc/passwd}"
    );
    let st = &parsed["mcp"]["st"];
    assert_eq!(st["type"], "local");
    assert_eq!(st["command"], json!(["python3", "{env:PATH}"]));
    assert_eq!(parsed["permission"]["st_*"], "ask");
    assert_eq!(parsed["permission"]["bash"], "ask");
    let ht = &parsed["mcp"]["ht"];
    assert_eq!(ht["timeout"], json!(super::MCP_TIMEOUT_MS));
    // A client host tool waits for a person.
    assert_eq!(
        parsed["mcp"]["host"]["timeout"],
        json!(super::HOST_TOOL_TIMEOUT_MS)
    );
    assert_eq!(
        (ht["type"].as_str(), &ht["oauth"]),
        (Some("remote"), &json!(false))
    );
    let header = ht["headers"]["Authorization"].as_str().unwrap();
    let path = header
        .strip_prefix("{file:")
        .and_then(|p| p.strip_suffix('}'))
        .unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), "Bearer ht-secret");
    let mode = std::fs::metadata(path).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );

    let spec = launch::serve("/bin/opencode".into(), &dirs, &text, "pw", &own.env);
    assert_eq!(spec.env["EXTRA"], "x-value");
    let argv = format!("{:?}", spec.args);
    assert!(!argv.contains("secret") && !argv.contains("x-value"));
    assert!(
        spec.env
            .values()
            .all(|v| !v.contains("st-secret") && !v.contains("ht-secret")),
        "MCP secrets are files, not environment"
    );
    assert!(!format!("{own:?}").contains("secret"));
}
