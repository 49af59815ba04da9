use super::*;
use crate::replay::tests::sample;

/// A transcript the real CLI (2.1.330) wrote for `USE_TOOL` in `/tmp/wta/ws` against the
/// test kit's provider: a Bash call, its result and the reply (the lines of its system
/// prompt snapshots and request blobs left out, the `parentUuid` chain linked again).
const REAL: &str = include_str!("../../tests/portable/claude/transcript-bash-turn.jsonl");
const REAL_CWD: &str = "/tmp/wta/ws";
const REAL_ID: &str = "11111111-2222-3333-4444-555555555555";

fn lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn project_keys_are_the_clis() {
    assert_eq!(project_key("/tmp/wta/ws"), "-tmp-wta-ws");
    assert_eq!(project_key("/a_b/c.d"), "-a-b-c-d");
    // One dash per UTF-16 unit: `é` is one, `🦀` two.
    assert_eq!(project_key("/é/🦀"), "-----");
    // What the real CLI named the project of this 239-character directory.
    let long = format!(
        "/tmp/wta/{}",
        (0..10)
            .map(|i| format!("segment_{i:02}_abcdefghij"))
            .collect::<Vec<_>>()
            .join("/")
    );
    assert_eq!(
        project_key(&long),
        "-tmp-wta-segment-00-abcdefghij-segment-01-abcdefghij-segment-02-abcdefghij-segment-03-abcdefghij-segment-04-abcdefghij-segment-05-abcdefghij-segment-06-abcdefghij-segment-07-abcdefghij-segment-08-abcd-fpgsba"
    );
}

#[test]
fn a_real_transcript_moves_to_another_home_and_cwd_and_back() {
    let old_state = tempfile::tempdir().unwrap();
    let path = transcript_path(old_state.path(), REAL_CWD, REAL_ID);
    write_private(&path, REAL.as_bytes()).unwrap();
    assert!(path.ends_with(format!("home/.claude/projects/-tmp-wta-ws/{REAL_ID}.jsonl")));
    let exported = export(old_state.path(), REAL_CWD, Some(REAL_ID)).unwrap();
    assert_eq!(exported.native_session_id.as_deref(), Some(REAL_ID));
    assert_eq!(exported.cwd, REAL_CWD);
    assert_eq!(exported.file(TRANSCRIPT_FILE), Some(REAL.as_bytes()));

    let new_state = tempfile::tempdir().unwrap();
    let id = import(new_state.path(), "/srv/other/place", &exported).unwrap();
    assert_eq!(id, REAL_ID);
    let filed = transcript_path(new_state.path(), "/srv/other/place", REAL_ID);
    assert!(filed.ends_with(format!("projects/-srv-other-place/{REAL_ID}.jsonl")));
    let mode = std::os::unix::fs::PermissionsExt::mode(&filed.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let moved = std::fs::read(&filed).unwrap();
    let (before, after) = (lines(REAL.as_bytes()), lines(&moved));
    assert_eq!(before.len(), after.len());
    let mut with_cwd = 0;
    for (old, new) in before.iter().zip(&after) {
        if old.get("cwd").is_some() {
            with_cwd += 1;
            assert_eq!(new["cwd"], "/srv/other/place");
        }
        // Nothing else changes: not the ids, nor the environment snapshot Claude compares
        // with the new directory to tell the model it moved.
        let mut old = old.clone();
        if let Some(cwd) = old.get_mut("cwd") {
            *cwd = json!("/srv/other/place");
        }
        assert_eq!(&old, new);
    }
    assert_eq!(with_cwd, 5);
    // Lines without a cwd are the same bytes.
    let first = REAL.lines().next().unwrap();
    assert!(std::str::from_utf8(&moved).unwrap().starts_with(first));

    // It exports from its new home as it was filed there, and found under any key.
    let again = export(new_state.path(), "/srv/other/place", Some(REAL_ID)).unwrap();
    assert_eq!(again.file(TRANSCRIPT_FILE), Some(moved.as_slice()));
    assert!(find_transcript(new_state.path(), "/elsewhere", REAL_ID).is_some());
}

#[test]
fn cwds_below_the_old_one_move_and_others_stay() {
    let bytes = b"{\"cwd\":\"/w/sub\",\"a\":1}\n{\"cwd\":\"/wx\"}\n{\"cwd\":\"/w\"}\nnot json\n";
    let moved = String::from_utf8(move_cwd(bytes, "/w", "/n")).unwrap();
    // Keys keep the order Claude wrote them in.
    assert_eq!(
        moved,
        "{\"cwd\":\"/n/sub\",\"a\":1}\n{\"cwd\":\"/wx\"}\n{\"cwd\":\"/n\"}\nnot json\n"
    );
}

#[test]
fn export_and_import_say_what_is_missing() {
    let state = tempfile::tempdir().unwrap();
    let none = export(state.path(), "/w", None).unwrap_err();
    assert!(none.to_string().contains("no Claude session id"), "{none}");
    let missing = export(state.path(), "/w", Some(REAL_ID)).unwrap_err();
    assert!(
        missing.to_string().contains("not in the session's state"),
        "{missing}"
    );
    let no_file = NativeState::single(Some(REAL_ID.into()), "/w", "other", Vec::new());
    assert!(import(state.path(), "/w", &no_file).is_err());
    let bad_id = NativeState::single(Some("../x".into()), "/w", TRANSCRIPT_FILE, Vec::new());
    let error = import(state.path(), "/w", &bad_id).unwrap_err();
    assert!(
        error.to_string().contains("not a Claude session id"),
        "{error}"
    );
    // Without an id in the state, the transcript's own.
    let unnamed = NativeState::single(None, REAL_CWD, TRANSCRIPT_FILE, REAL.as_bytes().to_vec());
    assert_eq!(import(state.path(), "/w", &unnamed).unwrap(), REAL_ID);
}

#[test]
fn a_history_becomes_a_chained_transcript_in_messages_form() {
    let state = native_history(&sample(), "/work/here");
    let id = state.native_session_id.clone().unwrap();
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    assert_eq!(state.cwd, "/work/here");
    let lines = lines(state.require(TRANSCRIPT_FILE).unwrap());
    let mut parent = Value::Null;
    for line in &lines {
        assert_eq!(line["parentUuid"], parent);
        assert_eq!(line["sessionId"], id.as_str());
        assert_eq!(line["cwd"], "/work/here");
        assert!(line["timestamp"].as_str().unwrap().ends_with('Z'));
        parent = line["uuid"].clone();
    }
    let roles: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["type"].as_str().unwrap(),
                l["message"]["role"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("user", "user"),
            ("assistant", "assistant"),
            ("user", "user"),
            ("assistant", "assistant"),
            ("user", "user"),
            ("assistant", "assistant"),
            ("user", "user"),
        ]
    );
    assert_eq!(lines[0]["message"]["content"], "remember the word platypus");

    // The command: a Bash call and its result.
    let first = &lines[1]["message"];
    assert_eq!(first["stop_reason"], "tool_use");
    assert_eq!(
        first["content"][0],
        json!({"type": "text", "text": "noted"})
    );
    let bash = &first["content"][1];
    assert_eq!(bash["type"], "tool_use");
    assert_eq!(bash["name"], "Bash");
    assert_eq!(bash["input"], json!({"command": "echo marsupial"}));
    assert!(bash["id"].as_str().unwrap().starts_with("toolu_"));
    let result = &lines[2]["message"]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], bash["id"]);
    assert_eq!(result["content"], "marsupial-output");
    assert_eq!(result["is_error"], false);

    // A tool Claude lacks keeps its call, and its failure.
    let lookup = &lines[3]["message"]["content"][0];
    assert_eq!(lookup["name"], "host_lookup");
    let failed = &lines[4]["message"]["content"][0];
    assert_eq!(failed["tool_use_id"], lookup["id"]);
    assert_eq!(failed["is_error"], true);
    assert_eq!(failed["content"], "lookup failed");

    // The file change and the unanswered call as text, with the reply.
    let texts: Vec<&str> = lines[5]["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(texts[0], "[added b.txt]");
    assert!(texts[1].starts_with("[called tool `Read`"), "{texts:?}");
    assert_eq!(texts[2], "all done wombat");
    assert_eq!(lines[5]["message"]["model"], SYNTHETIC_MODEL);
    assert_eq!(lines[6]["message"]["content"][0]["is_error"], true);
    let all = serde_json::to_string(&lines).unwrap();
    assert!(!all.contains("hidden thought"), "reasoning is left out");
}
