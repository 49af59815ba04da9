//! `sandbox-daemon webhooks create|list|get|delete|deliveries`: the webhooks API.

use std::process::ExitCode;

use clap::Subcommand;
use sandbox_universal::CreateWebhookRequest;

use super::client::{ClientArgs, connect, fail, finish};

/// `sandbox-daemon webhooks ...`.
#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// POST /webhooks: deliver every session's events of these types to a URL, signed.
    /// Prints the webhook (and the secret, when the daemon made it: shown once).
    Create {
        /// Where deliveries are `POST`ed (http or https).
        url: String,
        /// An event type to deliver (repeatable; `*` for all but `itemDelta`).
        #[arg(long = "event", value_name = "TYPE", required = true)]
        events: Vec<String>,
        /// Read the signing secret from standard input (default: the daemon makes one).
        #[arg(long)]
        secret_stdin: bool,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /webhooks.
    List(ClientArgs),
    /// GET /webhooks/{webhookId}.
    Get {
        /// Webhook id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// DELETE /webhooks/{webhookId}.
    Delete {
        /// Webhook id.
        id: String,
        #[command(flatten)]
        client: ClientArgs,
    },
    /// GET /webhooks/{webhookId}/deliveries: one page of deliveries, oldest first.
    Deliveries {
        /// Webhook id.
        id: String,
        /// The `nextCursor` of the previous page.
        #[arg(long)]
        cursor: Option<String>,
        /// Page size (1-500).
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        client: ClientArgs,
    },
}

/// Runs a `webhooks` subcommand.
pub async fn run(command: WebhooksCommand) -> ExitCode {
    let args = match &command {
        WebhooksCommand::Create { client, .. }
        | WebhooksCommand::List(client)
        | WebhooksCommand::Get { client, .. }
        | WebhooksCommand::Delete { client, .. }
        | WebhooksCommand::Deliveries { client, .. } => client.clone(),
    };
    let client = match connect(&args) {
        Ok(client) => client,
        Err(e) => return fail(e),
    };
    match command {
        WebhooksCommand::Create {
            url,
            events,
            secret_stdin,
            ..
        } => {
            let secret = if secret_stdin {
                let mut secret = String::new();
                if let Err(error) = std::io::stdin().read_line(&mut secret) {
                    eprintln!("error: reading the secret from standard input: {error}");
                    return ExitCode::FAILURE;
                }
                Some(secret.trim().to_string())
            } else {
                None
            };
            let request = CreateWebhookRequest {
                url,
                events,
                secret,
            };
            finish(client.create_webhook(&request).await)
        }
        WebhooksCommand::List(_) => finish(client.list_webhooks().await),
        WebhooksCommand::Get { id, .. } => finish(client.get_webhook(&id).await),
        WebhooksCommand::Delete { id, .. } => match client.delete_webhook(&id).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => fail(error),
        },
        WebhooksCommand::Deliveries {
            id, cursor, limit, ..
        } => finish(
            client
                .webhook_deliveries(&id, cursor.as_deref(), limit)
                .await,
        ),
    }
}
