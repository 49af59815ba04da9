//! `ask_user`: the question tool the daemon offers agents that have none of their own,
//! so `questionAsked` works for every agent. A call becomes a question request of the
//! daemon's; the client's answer (or rejection) is what the model reads back.

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use sandbox_universal::{ASK_USER_TOOL, Question, QuestionOption, QuestionRequest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::call::Failure;
use crate::session::SessionCore;
use crate::session::host_calls::DaemonAnswer;

/// The most questions one call may ask.
const MAX_QUESTIONS: usize = 8;

/// The MCP tool.
pub fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_QUESTIONS,
                "description": "The questions to ask the user, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The question."},
                        "header": {"type": "string", "description": "A short label (a few words)."},
                        "options": {
                            "type": "array",
                            "description": "Choices; leave empty for a free-form answer.",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string"},
                                    "description": {"type": "string"}
                                },
                                "required": ["label"]
                            }
                        },
                        "multiSelect": {"type": "boolean", "description": "Several options may be chosen."}
                    },
                    "required": ["question"]
                }
            }
        },
        "required": ["questions"]
    });
    let Value::Object(schema) = schema else {
        unreachable!("the schema is an object literal")
    };
    Tool::new(
        ASK_USER_TOOL,
        "Ask the user one or more questions and wait for the answers. Use it when you need a decision or information only the user has.",
        schema,
    )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Input {
    questions: Vec<InputQuestion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputQuestion {
    question: String,
    #[serde(default)]
    header: Option<String>,
    #[serde(default)]
    options: Vec<QuestionOption>,
    #[serde(default)]
    multi_select: bool,
}

/// The question request an `ask_user` input asks.
fn questions(input: Value) -> Result<Vec<Question>, Failure> {
    let input: Input = serde_json::from_value(input).map_err(|e| {
        Failure(format!(
            "`ask_user` takes {{questions: [{{question, options?, multiSelect?}}]}}: {e}"
        ))
    })?;
    if input.questions.is_empty() || input.questions.len() > MAX_QUESTIONS {
        return Err(Failure(format!(
            "`ask_user` asks 1 to {MAX_QUESTIONS} questions"
        )));
    }
    Ok(input
        .questions
        .into_iter()
        .map(|q| Question {
            allow_custom: q.options.is_empty(),
            question: q.question,
            header: q.header,
            options: q.options,
            multi_select: q.multi_select,
        })
        .collect())
}

/// Asks the user and answers what they said.
pub async fn run(
    core: &SessionCore,
    input: Value,
    item_id: Option<String>,
) -> Result<CallToolResult, Failure> {
    let questions = questions(input)?;
    let asked = core
        .ask_question(QuestionRequest {
            question_id: String::new(),
            questions: questions.clone(),
            item_id,
        })
        .map_err(|e| Failure(e.to_string()))?;
    match asked.answer.await {
        Ok(DaemonAnswer::Question(Some(answers))) => {
            let answered: Vec<Value> = questions
                .iter()
                .zip(answers)
                .map(|(q, a)| json!({"question": q.question, "answer": a}))
                .collect();
            Ok(CallToolResult::success(vec![ContentBlock::text(
                serde_json::to_string(&answered).expect("answers serialise"),
            )]))
        }
        Ok(DaemonAnswer::Question(None)) => {
            Err(Failure("The user declined to answer.".to_string()))
        }
        _ => Err(Failure(
            "The question was cancelled: the turn ended before an answer.".to_string(),
        )),
    }
}
