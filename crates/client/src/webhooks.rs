//! Webhooks: `/webhooks...`.

use reqwest::Method;
use sandbox_universal::{
    CreateWebhookRequest, CreatedWebhook, Webhook, WebhookDeliveryList, WebhookList,
};

use crate::{Client, ClientError};

impl Client {
    /// `POST /webhooks`: registers a webhook for every session.
    pub async fn create_webhook(
        &self,
        request: &CreateWebhookRequest,
    ) -> Result<CreatedWebhook, ClientError> {
        Self::send(self.request(Method::POST, &["webhooks"]).json(request)).await
    }

    /// `GET /webhooks`.
    pub async fn list_webhooks(&self) -> Result<WebhookList, ClientError> {
        Self::send(self.request(Method::GET, &["webhooks"])).await
    }

    /// `GET /webhooks/{id}`.
    pub async fn get_webhook(&self, id: &str) -> Result<Webhook, ClientError> {
        Self::send(self.request(Method::GET, &["webhooks", id])).await
    }

    /// `DELETE /webhooks/{id}`.
    pub async fn delete_webhook(&self, id: &str) -> Result<(), ClientError> {
        Self::send_empty(self.request(Method::DELETE, &["webhooks", id])).await
    }

    /// `GET /webhooks/{id}/deliveries`: one page (`cursor`: the last page's `nextCursor`).
    pub async fn webhook_deliveries(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: Option<usize>,
    ) -> Result<WebhookDeliveryList, ClientError> {
        let mut query = Vec::new();
        if let Some(cursor) = cursor {
            query.push(("cursor", cursor.to_string()));
        }
        if let Some(limit) = limit {
            query.push(("limit", limit.to_string()));
        }
        Self::send(
            self.request(Method::GET, &["webhooks", id, "deliveries"])
                .query(&query),
        )
        .await
    }
}
