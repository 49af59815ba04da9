//! Which tool the fake model calls: the first offered candidate of a step, arguments
//! filled from the request, and how a chain of steps goes on after each tool result.

use serde_json::Value;

use super::script::{PlannedTool, ToolInput, ToolTemplate};
use super::view::RequestView;

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
pub fn pick_tool(candidates: &[ToolTemplate], view: &RequestView) -> Option<PlannedTool> {
    candidates.iter().find_map(|candidate| {
        let offered = view.tools.iter().find(|t| t.name == candidate.name)?;
        let input = match (&candidate.input, offered.freeform) {
            (ToolInput::Freeform(raw), true) => ToolInput::Freeform(fill(raw, view)?),
            (ToolInput::Json(args), false) => {
                let mut args = fill_json(args, view)?;
                if let (Value::Object(map), Some(props)) = (&mut args, &offered.properties) {
                    map.retain(|key, _| props.iter().any(|p| p == key));
                }
                ToolInput::Json(args)
            }
            _ => return None,
        };
        Some(PlannedTool {
            name: candidate.name.clone(),
            input,
        })
    })
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
    use crate::provider::view::{LastTurn, OfferedTool};

    fn view(tools: &[&str], plan_file: Option<&str>) -> RequestView {
        RequestView {
            last: LastTurn::Nothing,
            tools: tools
                .iter()
                .map(|name| OfferedTool {
                    name: (*name).to_owned(),
                    freeform: false,
                    properties: None,
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
}
