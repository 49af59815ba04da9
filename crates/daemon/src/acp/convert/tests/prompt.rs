//! Prompts → messages, and MCP servers.

use sandbox_universal::{McpServer, MessagePart, SendMessageRequest};

use super::*;

fn embedded(uri: &str, text: &str) -> acp::ContentBlock {
    acp::ContentBlock::Resource(acp::EmbeddedResource::new(
        acp::EmbeddedResourceResource::TextResourceContents(acp::TextResourceContents::new(
            text, uri,
        )),
    ))
}

#[test]
fn a_text_prompt_is_a_text_message() {
    let prompt = ["Hello ".into(), "world".into()];
    assert_eq!(
        message_from_prompt(&prompt),
        SendMessageRequest::text("Hello world")
    );
}

#[test]
fn resources_images_and_left_out_content() {
    let prompt = [
        "Look at ".into(),
        acp::ContentBlock::ResourceLink(acp::ResourceLink::new("main.rs", "file:///w/main.rs")),
        " and ".into(),
        embedded("file:///w/a.rs", "fn a() {}"),
        acp::ContentBlock::Image(acp::ImageContent::new("AAAA", "image/png")),
        acp::ContentBlock::Audio(acp::AudioContent::new("BBBB", "audio/wav")),
        acp::ContentBlock::Resource(acp::EmbeddedResource::new(
            acp::EmbeddedResourceResource::BlobResourceContents(acp::BlobResourceContents::new(
                "CCCC",
                "file:///w/b.bin",
            )),
        )),
    ];
    assert_eq!(
        message_from_prompt(&prompt),
        SendMessageRequest {
            message: None,
            content: Some(vec![
                MessagePart::Text {
                    text: "Look at [@main.rs](file:///w/main.rs) and \nfile:///w/a.rs\n```\nfn a() {}\n```\n"
                        .into()
                },
                MessagePart::Image {
                    media_type: "image/png".into(),
                    data: Some("AAAA".into()),
                    path: None,
                },
                MessagePart::Text {
                    text: "\n[audio was left out: not supported]\n\n[binary resource file:///w/b.bin was left out]\n"
                        .into()
                },
            ]),
        }
    );
}

#[test]
fn embedded_text_gets_a_longer_fence_and_file_images_a_path() {
    let prompt = [embedded("file:///w/README.md", "```sh\nls\n```\n")];
    assert_eq!(
        message_from_prompt(&prompt),
        SendMessageRequest::text("\nfile:///w/README.md\n````\n```sh\nls\n```\n````\n")
    );
    let by_path = acp::ImageContent::new("", "image/png").uri("file:///w/shot.png".to_string());
    assert_eq!(
        message_from_prompt(&[acp::ContentBlock::Image(by_path)]),
        SendMessageRequest {
            message: None,
            content: Some(vec![MessagePart::Image {
                media_type: "image/png".into(),
                data: None,
                path: Some("/w/shot.png".into()),
            }]),
        }
    );
}

#[test]
fn mcp_servers_by_name() {
    let servers = [
        acp::McpServer::Stdio(
            acp::McpServerStdio::new("files", "/usr/bin/mcp-files")
                .args(vec!["--root".into(), "/w".into()])
                .env(vec![acp::EnvVariable::new("TOKEN", "t")]),
        ),
        acp::McpServer::Http(
            acp::McpServerHttp::new("docs", "https://docs.example/mcp")
                .headers(vec![acp::HttpHeader::new("Authorization", "Bearer x")]),
        ),
    ];
    let expected = [
        (
            "files".to_string(),
            McpServer::Stdio {
                command: "/usr/bin/mcp-files".into(),
                args: vec!["--root".into(), "/w".into()],
                env: [("TOKEN".to_string(), "t".to_string())].into(),
            },
        ),
        (
            "docs".to_string(),
            McpServer::Http {
                url: "https://docs.example/mcp".into(),
                headers: [("Authorization".to_string(), "Bearer x".to_string())].into(),
            },
        ),
    ];
    assert_eq!(mcp_servers(&servers), Ok(expected.into()));
}

#[test]
fn mcp_servers_the_daemon_refuses() {
    let stdio = |name: &str| acp::McpServer::Stdio(acp::McpServerStdio::new(name, "mcp"));
    let sse = acp::McpServer::Sse(acp::McpServerSse::new("events", "https://e.example/sse"));
    assert_eq!(
        mcp_servers(&[sse]),
        Err("MCP server `events` uses SSE, which sandbox-daemon does not support: use stdio or Streamable HTTP".to_string())
    );
    assert_eq!(
        mcp_servers(&[stdio("a"), stdio("a")]),
        Err("MCP server `a` is given twice".to_string())
    );
    assert_eq!(
        mcp_servers(&[stdio("my server")]),
        Err("MCP server name `my server` is not allowed: 1 to 64 of A-Z a-z 0-9 _ -".to_string())
    );
    let headers = acp::McpServer::Http(acp::McpServerHttp::new("h", "https://h.example").headers(
        vec![
            acp::HttpHeader::new("X-Key", "1"),
            acp::HttpHeader::new("x-key", "2"),
        ],
    ));
    assert_eq!(
        mcp_servers(&[headers]),
        Err("MCP server `h`: header `x-key` is given twice".to_string())
    );
}
