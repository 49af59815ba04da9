//! Unified diff → old and new text.

use super::*;

fn texts(old: Option<&str>, new: &str) -> Option<DiffTexts> {
    Some(DiffTexts {
        old_text: old.map(Into::into),
        new_text: new.into(),
    })
}

#[test]
fn an_added_file_has_no_old_text() {
    let diff = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n";
    assert_eq!(diff_texts(diff), texts(None, "one\ntwo"));
    let git = "diff --git a/x b/x\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+hi\n";
    assert_eq!(diff_texts(git), texts(None, "hi"));
}

#[test]
fn an_update_keeps_context_on_both_sides() {
    let diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    assert_eq!(diff_texts(diff), texts(Some("a\nb\nc"), "a\nB\nc"));
}

#[test]
fn a_deleted_file_has_empty_new_text() {
    let diff = "--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n";
    assert_eq!(diff_texts(diff), texts(Some("x\ny"), ""));
}

#[test]
fn hunks_are_joined_with_a_gap_line() {
    let diff = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -10,2 +10,2 @@\n y\n-z\n+Z\n";
    assert_eq!(
        diff_texts(diff),
        texts(Some("a\nb\n…\ny\nz"), "a\nB\n…\ny\nZ")
    );
}

#[test]
fn no_newline_markers_are_ignored() {
    let diff =
        "@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n";
    assert_eq!(diff_texts(diff), texts(Some("old"), "new"));
}

#[test]
fn hunk_lengths_tell_changed_lines_from_headers() {
    // Inside a hunk, `---` and `+++` lines are a removed and an added line.
    let diff = "@@ -1 +1 @@\n--- not a header\n+++ not one either\n";
    assert_eq!(
        diff_texts(diff),
        texts(Some("-- not a header"), "++ not one either")
    );
    // A blank context line whose leading space was trimmed.
    let trimmed = "@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n";
    assert_eq!(diff_texts(trimmed), texts(Some("a\n\nb"), "a\n\nc"));
}

#[test]
fn text_without_hunks_is_no_diff() {
    assert_eq!(diff_texts("written by fake model\n"), None);
    assert_eq!(diff_texts(""), None);
}
