//! Failures in each API's own shape: FAIL, REFUSE, FLAKY, refused and missing keys.

use sandbox_testkit::provider::script::{FLAKY_MESSAGE, REFUSAL_MESSAGE, REPLY_TEXT};
use sandbox_testkit::provider::{BAD_KEY_MARKER, FakeProvider};
use serde_json::{Value, json};

use super::*;

#[tokio::test]
async fn fail_answers_500_with_no_retry_headers() {
    let provider = FakeProvider::start().await.unwrap();
    let response = post(
        &provider,
        "/v1/messages",
        anthropic_request("FAIL now", true),
    )
    .await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["x-should-retry"], "false");
    assert_eq!(response.headers()["retry-after-ms"], "0");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(provider.requests()[0].reply, "error:500");
}

/// A one-message request in each dialect: `(path, body)`, Anthropic first.
fn dialect_requests(text: &str) -> [(&'static str, Value); 3] {
    [
        ("/v1/messages", anthropic_request(text, true)),
        (
            "/v1/responses",
            json!({"model": "gpt-5.5", "stream": true,
                   "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
                   "tools": [{"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}}]}),
        ),
        (
            "/v1/chat/completions",
            json!({"model": "fake-model", "stream": true,
                   "messages": [{"role": "user", "content": text}],
                   "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]}),
        ),
    ]
}

#[tokio::test]
async fn refuse_answers_400_in_each_apis_own_error_shape() {
    let provider = FakeProvider::start().await.unwrap();
    for (path, request) in dialect_requests("REFUSE this") {
        let response = post(&provider, path, request).await;
        assert_eq!(response.status(), 400, "{path}");
        assert_ne!(
            response
                .headers()
                .get("x-should-retry")
                .and_then(|v| v.to_str().ok()),
            Some("true"),
            "{path}"
        );
        assert!(response.headers().get("retry-after-ms").is_none(), "{path}");
        assert!(response.headers().get("retry-after").is_none(), "{path}");
        let body: Value = response.json().await.unwrap();
        let expected = if path == "/v1/messages" {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": REFUSAL_MESSAGE}})
        } else {
            json!({"error": {"message": REFUSAL_MESSAGE, "type": "invalid_request_error",
                             "param": null, "code": null}})
        };
        assert_eq!(body, expected, "{path}");
    }
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(replies, ["error:400"; 3]);
}

#[tokio::test]
async fn flaky_fails_the_first_call_of_a_prompt_with_retry_headers() {
    let provider = FakeProvider::start().await.unwrap();
    for i in 0..3 {
        // A prompt per dialect: the provider remembers prompts, whatever the dialect.
        let (path, request) = dialect_requests(&format!("FLAKY please {i}"))[i].clone();
        let anthropic = path == "/v1/messages";
        let failed = post(&provider, path, request.clone()).await;
        assert_eq!(failed.status(), if anthropic { 529 } else { 503 }, "{path}");
        assert_eq!(failed.headers()["x-should-retry"], "true");
        let delay: u64 = failed.headers()["retry-after-ms"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=1000).contains(&delay), "{delay}");
        let body: Value = failed.json().await.unwrap();
        if anthropic {
            assert_eq!(body["type"], "error");
            assert_eq!(body["error"]["type"], "overloaded_error");
            assert_eq!(body["error"]["message"], FLAKY_MESSAGE);
        } else {
            assert_eq!(body["error"]["type"], "server_error");
            assert_eq!(body["error"]["message"], FLAKY_MESSAGE);
            assert_eq!(body["error"]["code"], Value::Null);
        }
        // The retry of the same prompt streams the normal reply.
        let retried = post(&provider, path, request).await;
        assert_eq!(retried.status(), 200, "{path}");
        let text = retried.text().await.unwrap();
        let joined: String = json_frames(&text)
            .iter()
            .filter_map(|f| {
                f["delta"]["text"]
                    .as_str()
                    .or_else(|| f["delta"].as_str())
                    .or_else(|| f["choices"][0]["delta"]["content"].as_str())
            })
            .collect();
        assert_eq!(joined, REPLY_TEXT, "{path}");
    }
    // Another provider has its own memory: the prompt fails there again.
    let fresh = FakeProvider::start().await.unwrap();
    let [(path, request), ..] = dialect_requests("FLAKY please 0");
    assert_eq!(post(&fresh, path, request).await.status(), 529);
}

#[tokio::test]
async fn flaky_failures_are_recorded_with_their_label() {
    let provider = FakeProvider::start().await.unwrap();
    let [(anthropic, a), (responses, r), _] = dialect_requests("FLAKY one");
    post(&provider, anthropic, a.clone()).await;
    post(&provider, anthropic, a).await;
    let [_, _, (chat, c)] = dialect_requests("FLAKY two");
    post(&provider, chat, c.clone()).await;
    post(&provider, chat, c).await;
    // Same prompt as the Anthropic one: already failed once in this provider.
    post(&provider, responses, r).await;
    let replies: Vec<String> = provider
        .model_requests()
        .into_iter()
        .map(|r| r.reply)
        .collect();
    assert_eq!(
        replies,
        [
            "error:529 (once)",
            "text",
            "error:503 (once)",
            "text",
            "text"
        ]
    );
}

#[tokio::test]
async fn a_bad_key_gets_401_in_each_dialect() {
    let provider = FakeProvider::start().await.unwrap();
    let bad = format!("sk-ant-{BAD_KEY_MARKER}");
    let models = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .header("x-api-key", &bad)
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 401);
    let body: Value = models.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error");
    let chat = client()
        .post(format!("{}/v1/chat/completions", provider.base_url()))
        .bearer_auth(&bad)
        .json(&json!({"model": "m", "messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(chat.status(), 401);
    let body: Value = chat.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_api_key");
    let good = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .header("x-api-key", "sk-ant-fine")
        .send()
        .await
        .unwrap();
    assert_eq!(good.status(), 200);
    let replies: Vec<String> = provider
        .requests()
        .iter()
        .map(|r| r.reply.clone())
        .collect();
    assert_eq!(replies, ["unauthorized", "unauthorized", "models"]);
}

#[tokio::test]
async fn a_required_key_rejects_model_calls_without_it() {
    let provider = FakeProvider::builder()
        .require_api_key("sk-right")
        .start()
        .await
        .unwrap();
    let call = |key: &'static str| {
        client()
            .post(format!("{}/v1/responses", provider.base_url()))
            .bearer_auth(key)
            .json(&json!({"model": "m", "stream": false, "input": []}))
            .send()
    };
    assert_eq!(call("sk-wrong").await.unwrap().status(), 401);
    assert_eq!(call("sk-right").await.unwrap().status(), 200);
    // x-api-key (Anthropic) is accepted too; non-model routes need no key.
    let anthropic = client()
        .post(format!("{}/v1/messages", provider.base_url()))
        .header("x-api-key", "sk-right")
        .json(&anthropic_request("hi", false))
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic.status(), 200);
    let models = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(replies[0], "error:401");
}
