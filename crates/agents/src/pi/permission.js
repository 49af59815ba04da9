// sandbox-daemon's permission extension for Pi (written into the session's agent dir and
// loaded with `--extension`). Pi has no permission system of its own; this asks the
// daemon before every tool call that is not read-only, through Pi's extension UI: a
// `confirm` whose title is the marker below and whose message is the call as JSON. The
// daemon turns it into `permissionAsked` and answers with the user's decision. The
// permission mode's rules are filled in by the daemon where `__RULES__` stands.
const MARKER = "sandbox-daemon: permission";
const RULES = __RULES__;

export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    const rule = RULES[event.toolName] ?? RULES["*"] ?? "ask";
    if (rule === "allow") return undefined;
    if (rule === "deny") {
      return { block: true, reason: `The ${RULES.mode} permission mode does not allow ${event.toolName}.` };
    }
    const call = { toolCallId: event.toolCallId, toolName: event.toolName, input: event.input };
    const allowed = await ctx.ui.confirm(MARKER, JSON.stringify(call));
    if (!allowed) return { block: true, reason: "The user rejected this tool call." };
    return undefined;
  });
}
