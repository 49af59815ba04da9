//! What of a conversation goes into spans when content capture is on: the user's message
//! and the agent's text as GenAI messages (JSON), tool arguments and results, each clipped
//! so one span stays small whatever the agent wrote.

use sandbox_universal::{ContentPart, Item};
use serde_json::{Value, json};

/// The most of one captured text (a message, arguments, a result) kept, in bytes.
pub const MAX_CAPTURED: usize = 16 << 10;
/// The most of a turn's captured agent text kept, in bytes.
pub const MAX_OUTPUT: usize = 64 << 10;

/// `text` cut to at most `max` bytes on a character boundary, marked when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[truncated]", &text[..end])
}

/// The parts of a user's message as GenAI message parts: text, and images by their type
/// (never their bytes).
fn parts(item: &Item) -> Vec<Value> {
    item.content
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } => {
                Some(json!({"type": "text", "content": clip(text, MAX_CAPTURED)}))
            }
            ContentPart::Image { media_type, .. } => {
                Some(json!({"type": "blob", "modality": "image", "mime_type": media_type}))
            }
            _ => None,
        })
        .collect()
}

/// `gen_ai.input.messages`: the user's message.
pub fn input_messages(item: &Item) -> String {
    json!([{"role": "user", "parts": parts(item)}]).to_string()
}

/// `gen_ai.output.messages`: the agent's text of the turn, and why it stopped.
pub fn output_messages(texts: &[String], finish_reason: &str) -> String {
    let parts: Vec<Value> = texts
        .iter()
        .map(|text| json!({"type": "text", "content": text}))
        .collect();
    json!([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}]).to_string()
}

/// A tool's arguments as JSON text.
pub fn arguments(arguments: &Value) -> String {
    clip(&arguments.to_string(), MAX_CAPTURED)
}

/// What a result-bearing item says: a tool's output, a command's output, changed paths.
pub fn result(item: &Item) -> Option<String> {
    let text: Vec<&str> = item
        .content
        .iter()
        .filter_map(|part| match part {
            ContentPart::ToolResult { output, .. } => Some(output.as_str()),
            ContentPart::CommandExecution { output, .. } => output.as_deref(),
            ContentPart::FileChange { path, .. } => Some(path.as_str()),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| clip(&text.join("\n"), MAX_CAPTURED))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandbox_universal::{ItemKind, ItemStatus};

    #[test]
    fn clips_on_a_character_boundary() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("héllo", 2), "h…[truncated]");
    }

    #[test]
    fn messages_are_genai_json() {
        let item = Item::new("i", ItemKind::Message, ItemStatus::Completed)
            .with_content(ContentPart::Text { text: "hi".into() })
            .with_content(ContentPart::Image {
                media_type: "image/png".into(),
                data: Some("AAAA".into()),
                path: None,
            });
        let input: Value = serde_json::from_str(&input_messages(&item)).unwrap();
        assert_eq!(input[0]["role"], "user");
        assert_eq!(input[0]["parts"][0]["content"], "hi");
        assert!(!input.to_string().contains("AAAA"), "no image bytes");
        let output: Value =
            serde_json::from_str(&output_messages(&["a".into(), "b".into()], "completed")).unwrap();
        assert_eq!(output[0]["parts"][1]["content"], "b");
        assert_eq!(output[0]["finish_reason"], "completed");
    }
}
