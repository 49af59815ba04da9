//! Permission requests and questions.

use std::collections::BTreeMap;

use sandbox_universal::{
    PermissionKind, PermissionReply, PermissionRequest, Question, QuestionOption, QuestionRequest,
};
use serde_json::json;

use super::*;

fn request(always_scope: Option<&str>) -> PermissionRequest {
    PermissionRequest {
        permission_id: "perm1".into(),
        kind: PermissionKind::Command,
        title: "Run `ls -la`".into(),
        item_id: Some("t1".into()),
        tool: Some("Bash".into()),
        command: Some("ls -la".into()),
        paths: vec!["/work".into()],
        plan: None,
        input: Some(json!({"command": "ls -la"})),
        always_scope: always_scope.map(Into::into),
        mcp: None,
    }
}

#[test]
fn permission_options_offer_always_only_with_a_scope() {
    let once =
        acp::PermissionOption::new("once", "Allow once", acp::PermissionOptionKind::AllowOnce);
    let reject =
        acp::PermissionOption::new("reject", "Reject", acp::PermissionOptionKind::RejectOnce);
    assert_eq!(
        permission_options(&request(None)),
        [once.clone(), reject.clone()]
    );
    let always = acp::PermissionOption::new(
        "always",
        "Always allow (codex:command:ls)",
        acp::PermissionOptionKind::AllowAlways,
    );
    assert_eq!(
        permission_options(&request(Some("codex:command:ls"))),
        [once, always, reject]
    );
}

#[test]
fn permission_tool_call_describes_the_request() {
    let expected = acp::ToolCallUpdate::new(
        "t1".to_string(),
        acp::ToolCallUpdateFields::new()
            .title("Run `ls -la`".to_string())
            .kind(acp::ToolKind::Execute)
            .raw_input(json!({"command": "ls -la"}))
            .content(vec![text("ls -la")])
            .locations(vec![acp::ToolCallLocation::new("/work")]),
    );
    assert_eq!(permission_tool_call(&request(None)), expected);
    // No item: the permission id; no tool: the kind of request.
    let edit = PermissionRequest {
        kind: PermissionKind::FileChange,
        title: "Edit a.rs".into(),
        item_id: None,
        tool: None,
        command: None,
        paths: Vec::new(),
        input: None,
        ..request(None)
    };
    let expected = acp::ToolCallUpdate::new(
        "perm1".to_string(),
        acp::ToolCallUpdateFields::new()
            .title("Edit a.rs".to_string())
            .kind(acp::ToolKind::Edit),
    );
    assert_eq!(permission_tool_call(&edit), expected);
}

#[test]
fn permission_replies_follow_the_chosen_option() {
    let selected = |id: &str| {
        acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id.to_string()))
    };
    assert_eq!(permission_reply(&selected("once")), PermissionReply::Once);
    assert_eq!(
        permission_reply(&selected("always")),
        PermissionReply::Always
    );
    assert_eq!(
        permission_reply(&selected("reject")),
        PermissionReply::Reject
    );
    assert_eq!(
        permission_reply(&selected("whatever")),
        PermissionReply::Reject
    );
    assert_eq!(
        permission_reply(&acp::RequestPermissionOutcome::Cancelled),
        PermissionReply::Reject
    );
}

fn option(label: &str, description: Option<&str>) -> QuestionOption {
    QuestionOption {
        label: label.into(),
        description: description.map(Into::into),
    }
}

fn questions() -> QuestionRequest {
    QuestionRequest {
        question_id: "q1".into(),
        questions: vec![
            Question {
                question: "Which color?".into(),
                header: Some("Color".into()),
                options: vec![option("red", Some("warm")), option("blue", None)],
                multi_select: false,
                allow_custom: false,
            },
            Question {
                question: "Which toppings?".into(),
                header: None,
                options: vec![option("cheese", None), option("ham", None)],
                multi_select: true,
                allow_custom: true,
            },
            Question {
                question: "Your name?".into(),
                header: None,
                options: Vec::new(),
                multi_select: false,
                allow_custom: true,
            },
        ],
        item_id: None,
    }
}

#[test]
fn questions_become_one_form() {
    let (message, schema) = question_form(&questions());
    assert_eq!(message, "The agent asks 3 questions.");
    assert_eq!(
        serde_json::to_value(&schema).unwrap(),
        json!({
            "type": "object",
            "properties": {
                "q0": {
                    "type": "string",
                    "title": "Color",
                    "description": "Which color?",
                    "oneOf": [
                        {"const": "red", "title": "red", "description": "warm"},
                        {"const": "blue", "title": "blue"},
                    ],
                },
                "q1": {
                    "type": "array",
                    "title": "Which toppings?",
                    "items": {"anyOf": [
                        {"const": "cheese", "title": "cheese"},
                        {"const": "ham", "title": "ham"},
                    ]},
                },
                "q1_other": {
                    "type": "string",
                    "title": "Which toppings?: other",
                    "description": "An answer of your own, besides the choices",
                },
                "q2": {"type": "string", "title": "Your name?"},
            },
            "required": ["q0", "q2"],
        })
    );
    let one = QuestionRequest {
        questions: questions().questions[..1].to_vec(),
        ..questions()
    };
    assert_eq!(question_form(&one).0, "Which color?");
}

fn accept(content: &[(&str, acp::ElicitationContentValue)]) -> acp::ElicitationAcceptAction {
    let content: BTreeMap<_, _> = content
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    acp::ElicitationAcceptAction::new().content(content)
}

#[test]
fn form_answers_become_the_daemons_answers() {
    let content = accept(&[
        ("q0", "red".into()),
        ("q1", vec!["cheese"].into()),
        ("q1_other", "pineapple".into()),
        ("q2", "Ann".into()),
    ]);
    assert_eq!(
        question_answers(&questions(), &content),
        Ok(vec![
            vec!["red".to_string()],
            vec!["cheese".to_string(), "pineapple".to_string()],
            vec!["Ann".to_string()],
        ])
    );
}

#[test]
fn own_answer_replaces_a_single_choice() {
    let mut request = questions();
    request.questions.truncate(1);
    request.questions[0].allow_custom = true;
    let content = accept(&[("q0", "red".into()), ("q0_other", " green ".into())]);
    assert_eq!(
        question_answers(&request, &content),
        Ok(vec![vec!["green".to_string()]])
    );
    let unknown = accept(&[("q0", "green".into())]);
    assert_eq!(
        question_answers(&request, &unknown),
        Ok(vec![vec!["green".to_string()]])
    );
}

#[test]
fn wrong_answers_are_errors_naming_the_question() {
    let answers = |content: &[(&str, acp::ElicitationContentValue)]| {
        question_answers(&questions(), &accept(content))
    };
    assert_eq!(
        answers(&[
            ("q0", "green".into()),
            ("q1", vec!["ham"].into()),
            ("q2", "Ann".into())
        ]),
        Err("question 1 (Color): `green` is not one of: red, blue".to_string())
    );
    assert_eq!(
        answers(&[("q0", "red".into()), ("q1", vec!["ham"].into())]),
        Err("question 3 (Your name?): no answer".to_string())
    );
    assert_eq!(
        answers(&[("q0", true.into())]),
        Err("question 1 (Color): expected text".to_string())
    );
    assert_eq!(
        answers(&[("q0", "red".into()), ("q2", "Ann".into())]),
        Err("question 2 (Which toppings?): no answer".to_string())
    );
    assert_eq!(
        question_answers(&questions(), &acp::ElicitationAcceptAction::new()),
        Err("question 1 (Color): no answer".to_string())
    );
}
