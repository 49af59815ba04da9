//! An agent's stdout as JSON lines.

use serde_json::Value;
use tokio::io::{AsyncBufRead, Lines};
use tokio::sync::watch;

use crate::process::ExitInfo;
use crate::{AgentEvent, SessionIds};

/// One non-blank line of an agent's stdout.
#[derive(Debug)]
pub enum Line {
    /// A JSON value.
    Json(Value),
    /// Not JSON: kept whole, with why it did not parse.
    NotJson {
        /// The line as it came.
        raw: String,
        /// The parse error.
        error: String,
    },
}

impl Line {
    /// A JSON value, or the text kept whole with why it is not JSON.
    pub fn parse(text: String) -> Line {
        match serde_json::from_str(&text) {
            Ok(value) => Line::Json(value),
            Err(error) => Line::NotJson {
                raw: text,
                error: error.to_string(),
            },
        }
    }

    /// The `unparsed` item events of a line that is not JSON (nothing for a JSON line).
    pub fn unparsed(&self, sink: &dyn SessionIds) -> Vec<AgentEvent> {
        match self {
            Line::Json(_) => Vec::new(),
            Line::NotJson { raw, error } => crate::items::unparsed_item(
                sink,
                &Value::String(raw.clone()),
                format!("not JSON: {error}"),
            ),
        }
    }
}

/// An agent's stdout read as JSON lines, skipping blank ones.
pub struct JsonLines<R> {
    lines: Lines<R>,
}

impl<R: AsyncBufRead + Unpin> JsonLines<R> {
    /// Reads `lines`.
    pub fn new(lines: Lines<R>) -> Self {
        Self { lines }
    }

    /// The next non-blank line, or `None` once the stream has ended or broken.
    pub async fn next(&mut self) -> Option<Line> {
        loop {
            let line = self.lines.next_line().await.ok()??;
            if line.trim().is_empty() {
                continue;
            }
            return Some(Line::parse(line));
        }
    }
}

/// Waits for the process behind `exit` to have exited, and answers how.
pub async fn wait_exit(exit: &mut watch::Receiver<Option<ExitInfo>>) -> ExitInfo {
    match exit.wait_for(Option::is_some).await {
        Ok(info) => info.clone().unwrap_or_default(),
        Err(_) => ExitInfo::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, BufReader};

    #[tokio::test]
    async fn lines_are_json_or_kept_whole() {
        let input: &[u8] = b"{\"a\":1}\n\n  \nnot json\n[2]\n";
        let mut lines = JsonLines::new(BufReader::new(input).lines());
        let mut seen = Vec::new();
        while let Some(line) = lines.next().await {
            seen.push(line);
        }
        assert_eq!(seen.len(), 3);
        assert!(matches!(&seen[0], Line::Json(v) if v["a"] == 1));
        assert!(matches!(&seen[1], Line::NotJson { raw, .. } if raw == "not json"));
        assert!(matches!(&seen[2], Line::Json(v) if v[0] == 2));
    }
}
