//! `sandbox-daemon sessions tool-calls result|reject`: answering a client host tool call
//! (`toolCallRequested`).

use clap::Subcommand;
use sandbox_client::Client;
use sandbox_universal::{ToolCallRejectRequest, ToolCallResultRequest, ToolOutput};

use super::client::ClientArgs;

/// `sandbox-daemon sessions tool-calls ...`.
#[derive(Debug, Subcommand)]
pub enum ToolCallsCommand {
    /// POST /sessions/{id}/tool-calls/{callId}/result.
    Result {
        /// Session id.
        id: String,
        /// Tool call id (`toolCallRequested.callId`).
        call_id: String,
        /// The output as text.
        #[arg(long, conflicts_with = "parts", required_unless_present = "parts")]
        output: Option<String>,
        /// The output as JSON parts instead, e.g.
        /// '[{"type":"text","text":"see"},{"type":"image","mediaType":"image/png","path":"shot.png"}]'.
        #[arg(long, value_parser = parse_parts)]
        parts: Option<ToolOutput>,
        /// The tool failed: the model sees the output as an error.
        #[arg(long)]
        is_error: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// POST /sessions/{id}/tool-calls/{callId}/reject.
    Reject {
        /// Session id.
        id: String,
        /// Tool call id.
        call_id: String,
        /// Why, for the model.
        #[arg(long)]
        reason: Option<String>,
        #[command(flatten)]
        client: ClientArgs,
    },
}

fn parse_parts(text: &str) -> Result<ToolOutput, String> {
    serde_json::from_str(text)
        .map(ToolOutput::Parts)
        .map_err(|e| format!("--parts must be a JSON array of text and image parts: {e}"))
}

impl ToolCallsCommand {
    /// How to reach the daemon.
    pub fn client(&self) -> &ClientArgs {
        match self {
            Self::Result { client, .. } | Self::Reject { client, .. } => client,
        }
    }

    /// Sends the answer.
    pub async fn run(self, client: &Client) -> Result<(), sandbox_client::ClientError> {
        match self {
            Self::Result {
                id,
                call_id,
                output,
                parts,
                is_error,
                ..
            } => {
                let output = match (output, parts) {
                    (Some(text), _) => ToolOutput::Text(text),
                    (None, Some(parts)) => parts,
                    (None, None) => ToolOutput::Text(String::new()),
                };
                client
                    .tool_call_result(&id, &call_id, &ToolCallResultRequest { output, is_error })
                    .await
            }
            Self::Reject {
                id,
                call_id,
                reason,
                ..
            } => {
                client
                    .tool_call_reject(&id, &call_id, &ToolCallRejectRequest { reason })
                    .await
            }
        }
    }
}
