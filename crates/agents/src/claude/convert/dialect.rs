//! What differs between the agents that print Claude Code's stream JSON (Claude Code itself,
//! and Amp): their name, and which tools run commands or change files with which inputs.
//! The conversion is the same; each agent brings its [`Dialect`].

/// One agent's flavour of Claude Code's stream JSON.
#[derive(Debug)]
pub struct Dialect {
    /// The agent's display name, for messages.
    pub agent: sandbox_universal::AgentId,
    /// Tools whose result is a command execution (input `command`).
    pub command_tools: &'static [&'static str],
    /// Tools whose successful result is a file change.
    pub file_tools: &'static [FileTool],
    /// How a tool result says the tool did not run (a permission rule or the user refused
    /// it): such a result is a failed `toolResult`, not a command or a file change.
    pub not_run_prefixes: &'static [&'static str],
}

/// A tool that changes a file, and the inputs that say how.
#[derive(Debug)]
pub struct FileTool {
    /// The tool's name.
    pub name: &'static str,
    /// Input keys naming the file (the first present wins).
    pub path: &'static [&'static str],
    /// Input key of the file's whole new content (a tool that writes a file).
    pub content: Option<&'static str>,
    /// Input keys of one replacement `(old, new)`; an `edits` array of such objects also
    /// works.
    pub replace: Option<(&'static str, &'static str)>,
    /// Input key of a patch in the Codex patch format (`*** Begin Patch` …), which may
    /// change several files.
    pub patch: Option<&'static str>,
}

impl Dialect {
    /// Whether `tool` runs a command.
    pub fn is_command(&self, tool: &str) -> bool {
        self.command_tools.contains(&tool)
    }

    /// The file tool named `tool`.
    pub fn file_tool(&self, tool: &str) -> Option<&FileTool> {
        self.file_tools.iter().find(|t| t.name == tool)
    }

    /// Whether a tool result's text says the tool did not run.
    pub fn not_run(&self, output: &str) -> bool {
        self.not_run_prefixes.iter().any(|p| output.starts_with(p))
    }
}

/// Claude Code's tools.
pub const CLAUDE: Dialect = Dialect {
    agent: sandbox_universal::AgentId::Claude,
    command_tools: &["Bash"],
    file_tools: &[
        FileTool {
            name: "Write",
            path: &["file_path"],
            content: Some("content"),
            replace: None,
            patch: None,
        },
        FileTool {
            name: "Edit",
            path: &["file_path"],
            content: None,
            replace: Some(("old_string", "new_string")),
            patch: None,
        },
        FileTool {
            name: "MultiEdit",
            path: &["file_path"],
            content: None,
            replace: Some(("old_string", "new_string")),
            patch: None,
        },
        FileTool {
            name: "NotebookEdit",
            path: &["notebook_path"],
            content: None,
            replace: None,
            patch: None,
        },
    ],
    // Claude marks such results in `tool_result_meta`.
    not_run_prefixes: &[],
};
