//! Moving an agent's native session files to another working directory: every mention of
//! the old directory as a path (alone, or as the start of a longer path, also inside text
//! such as `<cwd>/old</cwd>` or `file:///old/x`) becomes the new one. A mention inside a
//! longer name (`/old-2`, `/x/old`) is left alone.

use serde_json::Value;

/// Replaces the directory `from` by `to` in every string of `value` (keys are left as
/// they are). Answers how many strings changed. Nothing changes when `from` is `/`, empty,
/// or equal to `to`.
pub fn rewrite_paths(value: &mut Value, from: &str, to: &str) -> usize {
    let from = from.trim_end_matches('/');
    let to = to.trim_end_matches('/');
    if from.is_empty() || from == to {
        return 0;
    }
    rewrite(value, from, if to.is_empty() { "/" } else { to })
}

fn rewrite(value: &mut Value, from: &str, to: &str) -> usize {
    match value {
        Value::String(text) => match replace_path(text, from, to) {
            Some(changed) => {
                *text = changed;
                1
            }
            None => 0,
        },
        Value::Array(items) => items.iter_mut().map(|v| rewrite(v, from, to)).sum(),
        Value::Object(map) => map.values_mut().map(|v| rewrite(v, from, to)).sum(),
        _ => 0,
    }
}

/// `text` with each path-bounded `from` replaced by `to`, or `None` when there is none.
pub fn replace_path(text: &str, from: &str, to: &str) -> Option<String> {
    if from.is_empty() || !text.contains(from) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    let mut previous: Option<char> = None;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back().or(previous);
        let after = rest[at + from.len()..].chars().next();
        let bounded = !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char);
        out.push_str(&rest[..at]);
        if bounded {
            out.push_str(to);
            changed = true;
        } else {
            out.push_str(from);
        }
        previous = from.chars().next_back();
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// A character that continues a file name (so a match next to it is part of another name).
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '~')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_move_and_longer_names_stay() {
        let mut value = json!({
            "cwd": "/w/a",
            "roots": ["/w/a", "/w/a/src/x.rs", "/w/ab", "/x/w/a", "/w/a-2"],
            "text": "<cwd>/w/a</cwd> see file:///w/a/b and '/w/a'.",
            "n": 3,
        });
        assert_eq!(rewrite_paths(&mut value, "/w/a/", "/n/b"), 4);
        assert_eq!(
            value,
            json!({
                "cwd": "/n/b",
                "roots": ["/n/b", "/n/b/src/x.rs", "/w/ab", "/x/w/a", "/w/a-2"],
                "text": "<cwd>/n/b</cwd> see file:///n/b/b and '/n/b'.",
                "n": 3,
            })
        );
    }

    #[test]
    fn nothing_changes_for_the_root_or_the_same_directory() {
        let mut value = json!({"cwd": "/w"});
        assert_eq!(rewrite_paths(&mut value, "/", "/n"), 0);
        assert_eq!(rewrite_paths(&mut value, "/w", "/w/"), 0);
        assert_eq!(value, json!({"cwd": "/w"}));
        assert_eq!(replace_path("/w/w", "/w", "/n").as_deref(), Some("/n/w"));
    }
}
