use super::*;
use crate::replay::tests::sample;

/// A session file the real Pi (0.73.1) wrote for `USE_TOOL zebra` in `/tmp/wta/piws`
/// against the test kit's provider: a `bash` call, its result and the reply.
const REAL: &str = include_str!("../../tests/portable/pi/session-bash-turn.jsonl");
const REAL_ID: &str = "01a21b8e-5cf5-7400-b26d-c951349c4eae";
const REAL_NAME: &str = "2026-11-27T05-50-44-470Z_01a21b8e-5cf5-7400-b26d-c951349c4eae.jsonl";

fn lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_real_session_file_moves_to_another_home_and_cwd_and_back() {
    let old_state = tempfile::tempdir().unwrap();
    let sessions = PiDirs::new(old_state.path()).sessions;
    write_private(&sessions.join(REAL_NAME), REAL.as_bytes()).unwrap();
    let exported = export(old_state.path(), "/tmp/wta/piws", Some(REAL_ID)).unwrap();
    assert_eq!(exported.native_session_id.as_deref(), Some(REAL_ID));
    assert_eq!(exported.file(SESSION_FILE), Some(REAL.as_bytes()));

    let new_state = tempfile::tempdir().unwrap();
    let id = import(new_state.path(), "/srv/other", &exported).unwrap();
    assert_eq!(id, REAL_ID);
    let filed = PiDirs::new(new_state.path()).sessions.join(REAL_NAME);
    let mode = std::os::unix::fs::PermissionsExt::mode(&filed.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let moved = std::fs::read(&filed).unwrap();
    let (before, after) = (lines(REAL.as_bytes()), lines(&moved));
    assert_eq!(after[0]["cwd"], "/srv/other");
    let mut head = before[0].clone();
    head["cwd"] = json!("/srv/other");
    assert_eq!(after[0], head);
    // The entries are the same bytes.
    let tail = |text: &str| text.split_once('\n').unwrap().1.to_string();
    assert_eq!(tail(std::str::from_utf8(&moved).unwrap()), tail(REAL));

    let again = export(new_state.path(), "/srv/other", Some(REAL_ID)).unwrap();
    assert_eq!(again.file(SESSION_FILE), Some(moved.as_slice()));
}

#[test]
fn a_session_file_is_found_by_its_header_too() {
    let state = tempfile::tempdir().unwrap();
    let sessions = PiDirs::new(state.path()).sessions;
    write_private(&sessions.join("renamed.jsonl"), REAL.as_bytes()).unwrap();
    write_private(&sessions.join("notes.txt"), b"x").unwrap();
    assert_eq!(
        find_session(&sessions, REAL_ID),
        Some(sessions.join("renamed.jsonl"))
    );
    assert_eq!(find_session(&sessions, "0000"), None);
}

#[test]
fn export_and_import_say_what_is_wrong() {
    let state = tempfile::tempdir().unwrap();
    let none = export(state.path(), "/w", None).unwrap_err();
    assert!(none.to_string().contains("never reported"), "{none}");
    let missing = export(state.path(), "/w", Some(REAL_ID)).unwrap_err();
    assert!(missing.to_string().contains("not in"), "{missing}");
    let headless = NativeState::single(
        None,
        "/w",
        SESSION_FILE,
        b"{\"type\":\"message\"}\n".to_vec(),
    );
    let error = import(state.path(), "/w", &headless).unwrap_err();
    assert!(error.to_string().contains("session header"), "{error}");
    let escape = NativeState::single(
        None,
        "/w",
        SESSION_FILE,
        b"{\"type\":\"session\",\"id\":\"../x\"}\n".to_vec(),
    );
    assert!(import(state.path(), "/w", &escape).is_err());
    let other = NativeState::single(
        Some("x".into()),
        "/w",
        SESSION_FILE,
        REAL.as_bytes().to_vec(),
    );
    let error = import(state.path(), "/w", &other).unwrap_err();
    assert!(error.to_string().contains("not x"), "{error}");
}

#[test]
fn a_history_becomes_a_session_file_of_pi_messages() {
    let state = native_history(&sample(), "/work/here", Some("anthropic/claude-x"));
    let id = state.native_session_id.clone().unwrap();
    let lines = lines(state.require(SESSION_FILE).unwrap());
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    assert_eq!(lines[0]["id"], id.as_str());
    assert_eq!(lines[0]["cwd"], "/work/here");
    let mut parent = Value::Null;
    for line in &lines[1..] {
        assert_eq!(line["type"], "message");
        assert_eq!(line["parentId"], parent);
        assert_eq!(line["id"].as_str().unwrap().len(), 8);
        parent = line["id"].clone();
    }
    let roles: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["message"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult"
        ]
    );
    let user = &lines[1]["message"];
    assert_eq!(
        user["content"],
        json!([{"type": "text", "text": "remember the word platypus"}])
    );
    let first = &lines[2]["message"];
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(first["provider"], "anthropic");
    assert_eq!(first["model"], "claude-x");
    assert_eq!(first["api"], HISTORY_API);
    let bash = &first["content"][1];
    assert_eq!(bash["type"], "toolCall");
    assert_eq!(bash["name"], "bash");
    assert_eq!(bash["arguments"], json!({"command": "echo marsupial"}));
    let result = &lines[3]["message"];
    assert_eq!(result["toolCallId"], bash["id"]);
    assert_eq!(result["toolName"], "bash");
    assert_eq!(result["content"][0]["text"], "marsupial-output");
    assert_eq!(result["isError"], false);
    let lookup = &lines[4]["message"]["content"][0];
    assert_eq!(lookup["name"], "host_lookup");
    let failed = &lines[5]["message"];
    assert_eq!(failed["toolCallId"], lookup["id"]);
    assert_eq!(failed["isError"], true);
    let reply = &lines[6]["message"]["content"];
    assert_eq!(reply[0]["text"], "[added b.txt]");
    assert_eq!(reply[2]["text"], "all done wombat");
    assert!(
        !serde_json::to_string(&lines)
            .unwrap()
            .contains("hidden thought")
    );

    // Without a model, a provider no model has: Pi falls back to its default.
    let state = native_history(&sample(), "/w", None);
    let lines = super::tests::lines(state.require(SESSION_FILE).unwrap());
    assert_eq!(lines[2]["message"]["provider"], "sandbox-daemon");
}

#[test]
fn paths_in_the_old_directory_move_with_the_session() {
    let file = concat!(
        "{\"type\":\"session\",\"version\":3,\"id\":\"abc\",\"timestamp\":\"2026-01-02T03:04:05.678Z\",\"cwd\":\"/old\"}\n",
        "{\"type\":\"message\",\"id\":\"1\",\"message\":{\"role\":\"toolResult\",\"content\":[{\"type\":\"text\",\"text\":\"wrote /old/a.txt, not /older\"}]}}\n",
        "{\"type\":\"message\",\"id\":\"2\",\"parentId\":\"1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    let state = tempfile::tempdir().unwrap();
    let native = NativeState::single(Some("abc".into()), "/old", SESSION_FILE, file.into());
    assert_eq!(import(state.path(), "/new/place", &native).unwrap(), "abc");
    let filed = PiDirs::new(state.path())
        .sessions
        .join("2026-01-02T03-04-05-678Z_abc.jsonl");
    let moved = std::fs::read_to_string(filed).unwrap();
    let moved: Vec<&str> = moved.lines().collect();
    assert!(moved[0].contains("\"cwd\":\"/new/place\""), "{}", moved[0]);
    assert!(
        moved[1].contains("wrote /new/place/a.txt, not /older"),
        "{}",
        moved[1]
    );
    assert_eq!(moved[2], file.lines().nth(2).unwrap());
}
