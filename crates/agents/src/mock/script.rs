//! What the mock does in a turn, decided by keywords in the user's message.

/// Default number of deltas for `flood` without a number.
pub const DEFAULT_FLOOD: usize = 100;
/// Number of deltas of a `slow` message without a number.
pub const SLOW_DELTAS: usize = 50;
/// The most deltas `slow N` streams (N × [`SLOW_INTERVAL_MS`] is at most 20 s).
pub const MAX_SLOW_DELTAS: usize = 1_000;
/// Pause between `slow` deltas.
pub const SLOW_INTERVAL_MS: u64 = 20;

/// The behaviours a message asks for. Several may combine; they run in field order, and the
/// `echo: <message>` reply always closes the turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnScript {
    /// `crash`: the worker dies right after the user message.
    pub crash: bool,
    /// `unparsed`: one `unparsed` item with a raw JSON payload.
    pub unparsed: bool,
    /// `tool`: tool call + result, a command execution and a file change.
    pub tool: bool,
    /// `permission`: a command that needs permission.
    pub permission: bool,
    /// `write`: writes [`super::WRITTEN_FILE`] in the working directory, asking first as
    /// the permission mode says.
    pub write: bool,
    /// `question`: two questions, the second multi-select.
    pub question: bool,
    /// `slow` or `slow N`: N deltas (default 50, at most [`MAX_SLOW_DELTAS`]) 20 ms apart.
    pub slow: Option<usize>,
    /// `flood N`: N deltas as fast as possible.
    pub flood: Option<usize>,
    /// `recall`: first a message naming every earlier user message it remembers.
    pub recall: bool,
}

impl TurnScript {
    /// Reads the keywords (whole words, case-insensitive) of a message.
    pub fn parse(message: &str) -> Self {
        let words: Vec<String> = message
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        let has = |k: &str| words.iter().any(|w| w == k);
        let count_after = |keyword: &str, default: usize| {
            words.iter().position(|w| w == keyword).map(|i| {
                words
                    .get(i + 1)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(default)
            })
        };
        Self {
            crash: has("crash"),
            unparsed: has("unparsed"),
            tool: has("tool"),
            permission: has("permission"),
            write: has("write"),
            question: has("question"),
            slow: count_after("slow", SLOW_DELTAS).map(|n: usize| n.min(MAX_SLOW_DELTAS)),
            flood: count_after("flood", DEFAULT_FLOOD),
            recall: has("recall"),
        }
    }
}

/// Splits `text` into at least `min_parts` non-empty chunks on character boundaries (fewer
/// only when the text has fewer characters).
pub fn chunks(text: &str, min_parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let parts = min_parts.clamp(1, chars.len());
    let size = chars.len().div_ceil(parts);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_combine() {
        let s = TurnScript::parse("please use a TOOL, then ask a question; flood 250");
        assert!(s.tool && s.question && !s.permission && !s.crash);
        assert_eq!(s.flood, Some(250));
        assert_eq!(TurnScript::parse("flood").flood, Some(DEFAULT_FLOOD));
        assert_eq!(TurnScript::parse("be slow").slow, Some(SLOW_DELTAS));
        assert_eq!(TurnScript::parse("slow 200").slow, Some(200));
        assert_eq!(TurnScript::parse("slow 99999").slow, Some(MAX_SLOW_DELTAS));
        assert_eq!(TurnScript::parse("hello"), TurnScript::default());
        assert!(!TurnScript::parse("tools").tool, "whole words only");
    }

    #[test]
    fn chunks_split_into_at_least_three() {
        let c = chunks("echo: hi", 3);
        assert!(c.len() >= 3);
        assert_eq!(c.concat(), "echo: hi");
        assert_eq!(chunks("ab", 3), vec!["a", "b"]);
        assert!(chunks("", 3).is_empty());
    }
}
