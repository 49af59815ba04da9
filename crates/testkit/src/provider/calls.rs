//! Which tool the fake model calls: the first offered candidate of a step, arguments
//! filled from the request, and how a chain of steps goes on after each tool result.

use serde_json::Value;

use super::script::{PlannedTool, ToolInput, ToolTemplate};
use super::view::{OfferedTool, RequestView};

/// Placeholder for the agent's working directory (`.` when the prompt does not state it).
pub const CWD: &str = "{cwd}";
/// Placeholder for the plan file the agent names (Claude Code's plan mode). A candidate
/// using it is not called when the prompt names no plan file.
pub const PLAN_FILE: &str = "{plan_file}";

/// The first call of a chain: the first step with an offered candidate.
pub fn first_call(steps: &[&[ToolTemplate]], view: &RequestView) -> Option<PlannedTool> {
    steps.iter().find_map(|step| pick_tool(step, view))
}

/// The call after a tool result, given the tools called since the user's message.
///
/// The calls are matched against the steps in order, each step taking the consecutive
/// calls of its candidates. Unless every call is matched (the calls are this chain's),
/// there is no next call. Otherwise the next call is a candidate of the last step
/// reached that is preferred over the ones it called and that the request now offers
/// (a tool the agent only reveals on demand, e.g. after a tool search), else the first
/// offered candidate of a later step. A one-step chain whose agent keeps the same tools
/// for the whole turn therefore stops after its first call.
pub fn next_call(
    steps: &[&[ToolTemplate]],
    called: &[String],
    view: &RequestView,
) -> Option<PlannedTool> {
    let mut rest = called;
    let mut reached = None;
    for (index, step) in steps.iter().enumerate() {
        let mut preferred: Option<usize> = None;
        while let Some((name, tail)) = rest.split_first()
            && let Some(position) = step.iter().position(|c| &c.name == name)
        {
            preferred = Some(preferred.map_or(position, |p| p.min(position)));
            rest = tail;
        }
        if let Some(preferred) = preferred {
            reached = Some((index, preferred));
        }
    }
    let (index, preferred) = reached?;
    if !rest.is_empty() {
        return None;
    }
    pick_tool(&steps[index][..preferred], view).or_else(|| first_call(&steps[index + 1..], view))
}

/// Picks the first candidate the request offers and resolves its arguments.
///
/// A candidate the request offers only through a code-mode tool (Codex's `exec`, see
/// [`super::view::code_mode_tools`]) becomes a call of that tool whose JavaScript calls
/// the candidate with the same arguments (see [`exec_source`]); so does a
/// [`ToolTemplate::deferred`] candidate the request does not offer at all when a
/// code-mode tool reaches deferred tools. A JSON candidate of a search tool (Codex's
/// `tool_search`) becomes a [`ToolInput::Search`].
pub fn pick_tool(candidates: &[ToolTemplate], view: &RequestView) -> Option<PlannedTool> {
    candidates.iter().find_map(|candidate| {
        // A tool offered directly is preferred over the same tool reached by code.
        let offered = view
            .tools
            .iter()
            .filter(|t| t.name == candidate.name)
            .filter(|t| candidate.namespace.is_none() || t.namespace == candidate.namespace)
            .min_by_key(|t| t.via.is_some())
            .cloned()
            .or_else(|| deferred(candidate, view))?;
        let input = match (&candidate.input, offered.freeform) {
            (ToolInput::Freeform(raw), true) => ToolInput::Freeform(fill(raw, view)?),
            (ToolInput::Json(args), false) => {
                let mut args = fill_json(args, view)?;
                if let (Value::Object(map), Some(props)) = (&mut args, &offered.properties) {
                    map.retain(|key, _| props.iter().any(|p| p == key));
                }
                if offered.search {
                    ToolInput::Search(args)
                } else {
                    ToolInput::Json(args)
                }
            }
            _ => return None,
        };
        Some(match &offered.via {
            Some(exec) => PlannedTool {
                name: exec.clone(),
                input: ToolInput::Freeform(exec_source(&offered.name, &input)),
                namespace: offered.namespace.clone(),
                nested: Some(offered.name.clone()),
            },
            None => PlannedTool {
                name: candidate.name.clone(),
                input,
                namespace: offered.namespace.clone(),
                nested: None,
            },
        })
    })
}

/// A deferred candidate as a code-mode tool that reaches deferred tools offers it: by
/// its name as a JavaScript identifier, arguments unknown.
fn deferred(candidate: &ToolTemplate, view: &RequestView) -> Option<OfferedTool> {
    if !candidate.deferred {
        return None;
    }
    let exec = view.tools.iter().find(|t| t.reaches_deferred)?;
    let name = candidate
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(OfferedTool {
        name,
        namespace: exec.namespace.clone(),
        via: Some(exec.name.clone()),
        ..OfferedTool::default()
    })
}

/// The JavaScript of a code-mode call that calls `tool` with `input` (a JSON object, or a
/// string for a freeform tool) and returns its result as the call's output:
///
/// ```text
/// const result = await tools.exec_command({"cmd":"echo hi"});
/// text(result);
/// ```
pub fn exec_source(tool: &str, input: &ToolInput) -> String {
    // JSON is a JavaScript expression: the arguments need no other quoting.
    let argument = match input {
        ToolInput::Json(args) | ToolInput::Search(args) => args.to_string(),
        ToolInput::Freeform(raw) => Value::String(raw.clone()).to_string(),
    };
    format!("const result = await tools.{tool}({argument});\ntext(result);\n")
}

/// Replaces the placeholders; `None` when a needed value is unknown.
fn fill(text: &str, view: &RequestView) -> Option<String> {
    let text = match view.cwd.as_deref() {
        Some(cwd) => text.replace(CWD, cwd.trim_end_matches('/')),
        None => text.replace("{cwd}/", "").replace(CWD, "."),
    };
    if text.contains(PLAN_FILE) {
        return Some(text.replace(PLAN_FILE, view.plan_file.as_deref()?));
    }
    Some(text)
}

fn fill_json(value: &Value, view: &RequestView) -> Option<Value> {
    Some(match value {
        Value::String(s) => Value::String(fill(s, view)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| fill_json(v, view))
                .collect::<Option<_>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Some((k.clone(), fill_json(v, view)?)))
                .collect::<Option<_>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::view::LastTurn;

    fn view(tools: &[&str], plan_file: Option<&str>) -> RequestView {
        RequestView {
            last: LastTurn::Nothing,
            tools: tools
                .iter()
                .map(|name| OfferedTool {
                    name: (*name).to_owned(),
                    ..OfferedTool::default()
                })
                .collect(),
            cwd: None,
            plan_file: plan_file.map(str::to_owned),
        }
    }

    fn called(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    fn name(tool: Option<PlannedTool>) -> Option<String> {
        tool.map(|t| t.name)
    }

    #[test]
    fn steps_run_in_order_and_a_revealed_preferred_tool_is_called() {
        let write = [ToolTemplate::json("Write", json!({"file_path": PLAN_FILE}))];
        let exit = [
            ToolTemplate::json("Exit", json!({})),
            ToolTemplate::json("Search", json!({})),
        ];
        let steps: [&[ToolTemplate]; 2] = [&write, &exit];
        let before = view(&["Write", "Search"], Some("/p/plan.md"));
        let first = first_call(&steps, &before).unwrap();
        assert_eq!(
            first.input,
            ToolInput::Json(json!({"file_path": "/p/plan.md"}))
        );
        let next = next_call(&steps, &called(&["Write"]), &before);
        assert_eq!(name(next).as_deref(), Some("Search"));
        let after = view(&["Write", "Search", "Exit"], Some("/p/plan.md"));
        let next = next_call(&steps, &called(&["Write", "Search"]), &after);
        assert_eq!(name(next).as_deref(), Some("Exit"));
        assert!(next_call(&steps, &called(&["Write", "Search", "Exit"]), &after).is_none());
        // No plan file named: the write step is skipped.
        let unnamed = view(&["Write", "Search"], None);
        assert_eq!(
            name(first_call(&steps, &unnamed)).as_deref(),
            Some("Search")
        );
    }

    #[test]
    fn calls_that_are_not_the_chains_end_it() {
        let bash = [ToolTemplate::json("Bash", json!({}))];
        let steps: [&[ToolTemplate]; 1] = [&bash];
        let offered = view(&["Bash", "Write"], None);
        assert!(next_call(&steps, &called(&["Bash"]), &offered).is_none());
        assert!(next_call(&steps, &called(&["Write"]), &offered).is_none());
        assert!(next_call(&steps, &called(&["Bash", "Write"]), &offered).is_none());
        assert!(next_call(&steps, &[], &offered).is_none());
    }

    mod code_mode {
        use serde_json::{Value, json};

        use crate::provider::script::{
            AFTER_TOOL_TEXT, Script, THINKING_TEXT, TOOL_COMMAND, ToolInput, ToolTemplate,
        };
        use crate::provider::view::{self, OfferedTool, RequestView};

        use super::super::{exec_source, pick_tool};

        /// The view of the captured default-model request, its prompt replaced.
        fn captured(prompt: &str) -> RequestView {
            let mut request = view::tests::code_mode_capture()["request"].clone();
            let input = request["input"].as_array_mut().unwrap();
            let last = input.last_mut().unwrap();
            last["content"][0]["text"] = json!(prompt);
            view::responses(&request)
        }

        fn script(tool: &crate::provider::script::PlannedTool) -> &str {
            match &tool.input {
                ToolInput::Freeform(source) => source,
                ToolInput::Json(_) | ToolInput::Search(_) => panic!("exec takes JavaScript"),
            }
        }

        #[test]
        fn use_tool_runs_exec_command_from_javascript() {
            let plan = Script::default().plan(&captured("USE_TOOL now"));
            assert_eq!(plan.label, "tool:exec(exec_command)");
            let tool = plan.tool.expect("a call");
            assert_eq!(tool.name, "exec");
            assert_eq!(tool.namespace.as_deref(), Some("functions"));
            assert_eq!(tool.nested.as_deref(), Some("exec_command"));
            assert_eq!(
                script(&tool),
                format!(
                    "const result = await tools.exec_command({});\ntext(result);\n",
                    json!({"cmd": TOOL_COMMAND})
                )
            );
        }

        #[test]
        fn use_write_runs_apply_patch_with_the_patch_as_a_string() {
            let plan = Script::default().plan(&captured("USE_WRITE now"));
            let tool = plan.tool.expect("a call");
            assert_eq!(
                (tool.name.as_str(), tool.nested.as_deref()),
                ("exec", Some("apply_patch"))
            );
            let source = script(&tool);
            let argument = source
                .strip_prefix("const result = await tools.apply_patch(")
                .and_then(|s| s.strip_suffix(");\ntext(result);\n"))
                .expect("one apply_patch call");
            let patch: String = serde_json::from_str(argument).expect("a JSON string literal");
            assert!(patch.starts_with("*** Begin Patch\n*** Add File: fake_written.txt\n"));
        }

        #[test]
        fn ask_question_calls_the_direct_request_user_input() {
            let plan = Script::default().plan(&captured("ASK_QUESTION please"));
            assert_eq!(plan.label, "tool:request_user_input");
            let tool = plan.tool.expect("a call");
            assert_eq!(tool.namespace.as_deref(), Some("functions"));
            assert!(tool.nested.is_none());
            let ToolInput::Json(args) = &tool.input else {
                panic!("JSON arguments");
            };
            assert_eq!(args["questions"].as_array().map(Vec::len), Some(2));
        }

        #[test]
        fn modifiers_shape_the_reply_and_the_exec_result_gets_the_final_text() {
            let plan = Script::default().plan(&captured("THINK then USE_TOOL"));
            assert_eq!(plan.thinking.as_deref(), Some(THINKING_TEXT));
            assert_eq!(plan.label, "tool:exec(exec_command)");
            let capture = view::tests::code_mode_capture();
            for name in ["exec_command", "exec_command_declined", "apply_patch"] {
                let mut request = capture["request"].clone();
                let after: Vec<Value> = capture["after"][name].as_array().unwrap().clone();
                request["input"].as_array_mut().unwrap().extend(after);
                let plan = Script::default().plan(&view::responses(&request));
                assert_eq!(plan.text.as_deref(), Some(AFTER_TOOL_TEXT), "{name}");
                assert!(plan.tool.is_none());
            }
            let failing = Script::default().plan(&captured("FAIL now"));
            assert_eq!(failing.failure.map(|f| f.status), Some(500));
        }

        #[test]
        fn a_direct_tool_is_preferred_over_the_same_tool_reached_by_code() {
            let tool = |via: Option<&str>| OfferedTool {
                name: "exec_command".to_owned(),
                via: via.map(str::to_owned),
                ..OfferedTool::default()
            };
            let mut view = captured("x");
            view.tools = vec![tool(Some("exec")), tool(None)];
            let candidates = [ToolTemplate::json("exec_command", json!({"cmd": "ls"}))];
            let picked = pick_tool(&candidates, &view).unwrap();
            assert_eq!(
                (picked.name.as_str(), picked.nested),
                ("exec_command", None)
            );
            // A JSON template does not fit a freeform nested tool.
            view.tools = vec![OfferedTool {
                freeform: true,
                ..tool(Some("exec"))
            }];
            assert!(pick_tool(&candidates, &view).is_none());
        }

        #[test]
        fn javascript_quotes_what_it_passes() {
            let raw = "line \"one\"\n`two` ${three} \\ end";
            let source = exec_source("apply_patch", &ToolInput::Freeform(raw.to_owned()));
            let literal = &source["const result = await tools.apply_patch(".len()
                ..source.len() - ");\ntext(result);\n".len()];
            assert_eq!(serde_json::from_str::<String>(literal).unwrap(), raw);
        }
    }
}
