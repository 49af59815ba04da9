//! Human in the loop: permission requests ↔ `session/request_permission`, and questions ↔
//! `elicitation/create` forms.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema as acp;
use sandbox_universal::{
    PermissionKind, PermissionReply, PermissionRequest, Question, QuestionRequest,
};

use super::tools::{text_content, tool_kind};

/// The option id that allows once.
pub const ALLOW_ONCE: &str = "once";
/// The option id that allows for the rest of the session (the request's `alwaysScope`).
pub const ALLOW_ALWAYS: &str = "always";
/// The option id that rejects.
pub const REJECT: &str = "reject";

/// The options of a permission request: allow once, allow always (only when the request
/// offers a lasting approval; its name says the scope), reject.
pub fn permission_options(request: &PermissionRequest) -> Vec<acp::PermissionOption> {
    let mut options = vec![acp::PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        acp::PermissionOptionKind::AllowOnce,
    )];
    if let Some(scope) = &request.always_scope {
        options.push(acp::PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow ({scope})"),
            acp::PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(acp::PermissionOption::new(
        REJECT,
        "Reject",
        acp::PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The tool call a permission request is about: the gated item's (the permission id when
/// there is none), titled by the request, its kind from the tool (else from what is
/// asked), its input as raw input, its command or plan as content and its paths as
/// locations.
pub fn permission_tool_call(request: &PermissionRequest) -> acp::ToolCallUpdate {
    let id = request
        .item_id
        .clone()
        .unwrap_or_else(|| request.permission_id.clone());
    let tool = request.mcp.as_ref().map(|mcp| mcp.tool.as_str());
    let kind = match tool.or(request.tool.as_deref()).map(tool_kind) {
        Some(kind) if kind != acp::ToolKind::Other => kind,
        _ => permission_kind(request.kind),
    };
    let mut fields = acp::ToolCallUpdateFields::new()
        .title(request.title.clone())
        .kind(kind)
        .raw_input(request.input.clone());
    let content: Vec<_> = [&request.command, &request.plan]
        .into_iter()
        .flatten()
        .map(|text| text_content(text))
        .collect();
    if !content.is_empty() {
        fields = fields.content(content);
    }
    if !request.paths.is_empty() {
        let locations = request.paths.iter().map(acp::ToolCallLocation::new);
        fields = fields.locations(locations.collect::<Vec<_>>());
    }
    acp::ToolCallUpdate::new(id, fields)
}

/// The ACP kind of what a permission request asks, for requests whose tool says nothing.
fn permission_kind(kind: PermissionKind) -> acp::ToolKind {
    match kind {
        PermissionKind::Command => acp::ToolKind::Execute,
        PermissionKind::FileChange => acp::ToolKind::Edit,
        PermissionKind::FileRead => acp::ToolKind::Read,
        PermissionKind::Network => acp::ToolKind::Fetch,
        PermissionKind::PlanApproval => acp::ToolKind::SwitchMode,
        PermissionKind::McpTool | PermissionKind::HostTool | PermissionKind::Tool => {
            acp::ToolKind::Other
        }
    }
}

/// The daemon's reply for the editor's answer: the option chosen; a cancelled request or
/// an unknown option rejects.
pub fn permission_reply(outcome: &acp::RequestPermissionOutcome) -> PermissionReply {
    match outcome {
        acp::RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            ALLOW_ONCE => PermissionReply::Once,
            ALLOW_ALWAYS => PermissionReply::Always,
            _ => PermissionReply::Reject,
        },
        _ => PermissionReply::Reject,
    }
}

/// The form property of question `index`.
fn key(index: usize) -> String {
    format!("q{index}")
}

/// The form property of question `index`'s own answer (questions that allow one).
fn other_key(index: usize) -> String {
    format!("q{index}_other")
}

/// The message and form of an `elicitation/create` asking a question request.
///
/// One property per question, `q0`, `q1`, …, titled by its header (else the question, which
/// is otherwise the description): a question without options is free text; a single
/// choice a string with `oneOf` its labels; a multi-select an array of them (`anyOf`
/// items). A question that allows its own answer gets an optional `q<i>_other` text, and
/// its choice is optional too (one of the two is needed); every other property is
/// required.
pub fn question_form(request: &QuestionRequest) -> (String, acp::ElicitationSchema) {
    let message = match request.questions.as_slice() {
        [one] => one.question.clone(),
        many => format!("The agent asks {} questions.", many.len()),
    };
    let mut schema = acp::ElicitationSchema::new();
    for (index, question) in request.questions.iter().enumerate() {
        let title = title(question).to_string();
        let description = question.header.as_ref().map(|_| question.question.clone());
        if question.options.is_empty() {
            let text = acp::StringPropertySchema::new()
                .title(title)
                .description(description);
            schema = schema.property(key(index), text, true);
            continue;
        }
        let options: Vec<_> = question
            .options
            .iter()
            .map(|option| {
                acp::EnumOption::new(option.label.clone(), option.label.clone())
                    .description(option.description.clone())
            })
            .collect();
        let choice: acp::ElicitationPropertySchema = if question.multi_select {
            acp::MultiSelectPropertySchema::titled(options)
                .title(title.clone())
                .description(description)
                .into()
        } else {
            acp::StringPropertySchema::new()
                .one_of(options)
                .title(title.clone())
                .description(description)
                .into()
        };
        schema = schema.property(key(index), choice, !question.allow_custom);
        if question.allow_custom {
            let hint = if question.multi_select {
                "An answer of your own, besides the choices"
            } else {
                "An answer of your own, instead of a choice"
            };
            let other = acp::StringPropertySchema::new()
                .title(format!("{title}: other"))
                .description(hint.to_string());
            schema = schema.property(other_key(index), other, false);
        }
    }
    (message, schema)
}

/// The daemon's answers (one list of labels per question, in order) from an accepted
/// [`question_form`]. A single choice must be one of the labels unless the question allows
/// its own answer, which then replaces the choice (and is added to a multi-select's);
/// a free-text answer is an answer of its own. A missing answer, a value of the wrong
/// type or an unknown label is an error naming the question.
pub fn question_answers(
    request: &QuestionRequest,
    accepted: &acp::ElicitationAcceptAction,
) -> Result<Vec<Vec<String>>, String> {
    let empty = BTreeMap::new();
    let content = accepted.content.as_ref().unwrap_or(&empty);
    request
        .questions
        .iter()
        .enumerate()
        .map(|(index, question)| answer(index, question, content))
        .collect()
}

fn title(question: &Question) -> &str {
    question.header.as_deref().unwrap_or(&question.question)
}

fn answer(
    index: usize,
    question: &Question,
    content: &BTreeMap<String, acp::ElicitationContentValue>,
) -> Result<Vec<String>, String> {
    let name = || format!("question {} ({})", index + 1, title(question));
    let picked = match content.get(&key(index)) {
        None => None,
        Some(acp::ElicitationContentValue::String(text)) if text.trim().is_empty() => None,
        Some(acp::ElicitationContentValue::String(text)) => Some(vec![text.clone()]),
        Some(acp::ElicitationContentValue::StringArray(labels)) => Some(labels.clone()),
        Some(_) => return Err(format!("{}: expected text", name())),
    };
    let other = match content.get(&other_key(index)) {
        _ if !question.allow_custom || question.options.is_empty() => None,
        Some(acp::ElicitationContentValue::String(text)) if !text.trim().is_empty() => {
            Some(text.trim().to_string())
        }
        None | Some(acp::ElicitationContentValue::String(_)) => None,
        Some(_) => return Err(format!("{}: expected text as your own answer", name())),
    };
    let no_answer = || format!("{}: no answer", name());
    if question.options.is_empty() {
        return match picked.as_deref() {
            Some([text]) => Ok(vec![text.trim().to_string()]),
            Some([]) | None => Err(no_answer()),
            Some(_) => Err(format!("{}: expected one answer", name())),
        };
    }
    let labels: Vec<&str> = question.options.iter().map(|o| o.label.as_str()).collect();
    if let Some(label) = picked
        .iter()
        .flatten()
        .find(|l| !labels.contains(&l.as_str()))
        && !question.allow_custom
    {
        return Err(format!(
            "{}: `{label}` is not one of: {}",
            name(),
            labels.join(", ")
        ));
    }
    if question.multi_select {
        if picked.is_none() && other.is_none() {
            return Err(no_answer());
        }
        let mut answers = picked.unwrap_or_default();
        answers.extend(other);
        return Ok(answers);
    }
    match (other, picked.as_deref()) {
        (Some(own), _) => Ok(vec![own]),
        (None, Some([label])) => Ok(vec![label.clone()]),
        (None, Some([]) | None) => Err(no_answer()),
        (None, Some(_)) => Err(format!("{}: choose one answer", name())),
    }
}
