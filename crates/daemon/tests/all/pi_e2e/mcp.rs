//! Pi's MCP bridge beyond the table's `mcp-http` row: with the session's built-in tools
//! restricted too (which Pi's `--tools` cannot do beside extension tools, so the bridge
//! does it), and a server that cannot be reached, which Pi goes on without.

use sandbox_testkit::mcp::HttpMcpServer;
use sandbox_universal::{
    AgentId, CreateSessionRequest, McpServer, PermissionKind, PermissionReply, StopReason,
    ToolPolicy,
};

use crate::scenarios::ctx::{Ctx, stop_reason};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_keeps_the_policys_tools_and_goes_on_without_a_dead_server() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Pi).await else {
        return;
    };
    let token = "pi-bridge-token-4d1c";
    let server = HttpMcpServer::start(token).await.unwrap();
    let servers = [
        (
            "ht".to_string(),
            McpServer::Http {
                url: server.url(),
                headers: [("Authorization".into(), format!("Bearer {token}"))].into(),
            },
        ),
        (
            "dead".to_string(),
            McpServer::Http {
                // Loopback, nothing listening.
                url: "http://127.0.0.1:1/mcp".into(),
                headers: Default::default(),
            },
        ),
    ];
    let s = ctx
        .session_with("pi-mcp-bridge", |r| CreateSessionRequest {
            mcp_servers: Some(servers.into()),
            tools: Some(ToolPolicy {
                allow: None,
                deny: vec!["shell".into(), "mcp:ht/delete_everything".into()],
            }),
            ..r
        })
        .await;
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP ht/echo (pi-bridge)", PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert_eq!(server.calls().len(), 1, "{:?}", server.calls());
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].kind, PermissionKind::McpTool);
    let offered: Vec<String> = ctx
        .subject
        .calls_with("(pi-bridge)")
        .iter()
        .flat_map(|r| r.tool_names())
        .collect();
    assert!(offered.iter().any(|t| t == "mcp__ht__echo"), "{offered:?}");
    for absent in ["bash", "mcp__ht__delete_everything"] {
        assert!(
            !offered.iter().any(|t| t == absent),
            "{absent} was offered: {offered:?}"
        );
    }
    for kept in ["read", "edit", "write"] {
        assert!(offered.iter().any(|t| t == kept), "{kept}: {offered:?}");
    }
    assert!(
        !offered.iter().any(|t| t.starts_with("mcp__dead__")),
        "{offered:?}"
    );
}
