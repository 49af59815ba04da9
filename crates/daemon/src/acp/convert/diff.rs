//! A unified diff → the text before and after the change, as ACP's `Diff` content wants
//! them.

/// The text before and after a change, rebuilt from a unified diff's hunks: only the lines
/// the hunks show (context and changed lines), not the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffTexts {
    /// Context and removed lines; `None` for an added file (`--- /dev/null`).
    pub old_text: Option<String>,
    /// Context and added lines; empty for a deleted file.
    pub new_text: String,
}

/// The line put between two hunks in both texts: the lines between them are unknown.
pub const HUNK_GAP: &str = "…";

/// The old and new text of a one-file unified diff: context and `-` lines make the old
/// text, context and `+` lines the new one, hunks are joined with a [`HUNK_GAP`] line, and
/// `\ No newline at end of file` markers are dropped. `None` when the diff has no hunk.
pub fn diff_texts(diff: &str) -> Option<DiffTexts> {
    let mut added = false;
    let mut old: Vec<&str> = Vec::new();
    let mut new: Vec<&str> = Vec::new();
    let mut hunks = 0;
    // Lines still expected in the current hunk (old side, new side).
    let mut left = (0usize, 0usize);
    for line in diff.lines() {
        let endless = left == (usize::MAX, usize::MAX);
        let in_hunk = (left.0 > 0 || left.1 > 0) && !(endless && line.starts_with("@@ "));
        if in_hunk {
            match line.as_bytes().first() {
                Some(b'\\') => {}
                Some(b'-') => {
                    old.push(&line[1..]);
                    left.0 = left.0.saturating_sub(1);
                }
                Some(b'+') => {
                    new.push(&line[1..]);
                    left.1 = left.1.saturating_sub(1);
                }
                // A context line, or a blank one whose leading space was trimmed.
                first => {
                    let text = if first == Some(&b' ') {
                        &line[1..]
                    } else {
                        line
                    };
                    old.push(text);
                    new.push(text);
                    left = (left.0.saturating_sub(1), left.1.saturating_sub(1));
                }
            }
            continue;
        }
        if let Some(counts) = line.strip_prefix("@@") {
            if hunks > 0 {
                old.push(HUNK_GAP);
                new.push(HUNK_GAP);
            }
            hunks += 1;
            left = hunk_lengths(counts);
        } else if line.starts_with("new file mode")
            || line.strip_prefix("--- ").is_some_and(is_dev_null)
        {
            added = true;
        }
    }
    (hunks > 0).then(|| DiffTexts {
        old_text: (!added).then(|| old.join("\n")),
        new_text: new.join("\n"),
    })
}

/// Whether a `---` / `+++` header names `/dev/null` (perhaps followed by a timestamp).
fn is_dev_null(path: &str) -> bool {
    path.split('\t')
        .next()
        .is_some_and(|p| p.trim() == "/dev/null")
}

/// The old and new line counts of a hunk header's rest (` -1,3 +1,4 @@ ...`); a count left
/// out is 1. A header that does not parse reads as an endless hunk.
fn hunk_lengths(header: &str) -> (usize, usize) {
    let mut ranges = header.split_whitespace();
    let count = |range: Option<&str>, sign: char| -> Option<usize> {
        let range = range?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, count)) => count.parse().ok(),
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    match (count(ranges.next(), '-'), count(ranges.next(), '+')) {
        (Some(old), Some(new)) => (old, new),
        _ => (usize::MAX, usize::MAX),
    }
}
