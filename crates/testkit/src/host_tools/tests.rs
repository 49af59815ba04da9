//! The reference verification against signatures made here, and the server driven by a
//! plain HTTP client.

use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sandbox_universal::{HostToolCall, SIGNATURE_HEADER, ToolCallResultRequest, ToolOutput};
use serde_json::json;
use sha2::Sha256;

use super::*;

const SECRET: &[u8] = b"host-tool-secret";
const NOW: u64 = 1_750_000_000;

/// `t=<t>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, written independently of the verifier.
fn sign(secret: &[u8], t: u64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={t},v1={hex}")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn verify_accepts_the_signed_body() {
    let body = br#"{"callId":"c1"}"#;
    assert_eq!(
        verify_signature(SECRET, &sign(SECRET, NOW, body), body, NOW),
        Ok(())
    );
    let in_tolerance = NOW + SIGNATURE_TOLERANCE_SECS;
    assert_eq!(
        verify_signature(SECRET, &sign(SECRET, NOW, body), body, in_tolerance),
        Ok(())
    );
    let spaced = sign(SECRET, NOW, body).replace(',', ", ");
    assert_eq!(verify_signature(SECRET, &spaced, body, NOW), Ok(()));
}

#[test]
fn verify_accepts_any_matching_v1() {
    let body = b"{}";
    let good = sign(SECRET, NOW, body);
    let other = sign(b"old secret", NOW, body);
    let v1 = |header: &str| header.split_once(",v1=").unwrap().1.to_owned();
    let header = format!("t={NOW},v1={},v1={},v0=legacy", v1(&other), v1(&good));
    assert_eq!(verify_signature(SECRET, &header, body, NOW), Ok(()));
}

#[test]
fn verify_refuses_what_it_must() {
    let body = br#"{"callId":"c1"}"#;
    let good = sign(SECRET, NOW, body);
    let refused = |secret: &[u8], header: &str, body: &[u8], now: u64| {
        verify_signature(secret, header, body, now).unwrap_err()
    };
    assert!(refused(b"wrong", &good, body, NOW).contains("matches"));
    assert!(refused(SECRET, &good, br#"{"callId":"c2"}"#, NOW).contains("matches"));
    let late = NOW + SIGNATURE_TOLERANCE_SECS + 1;
    assert!(refused(SECRET, &good, body, late).contains("301 s"));
    let early = NOW - SIGNATURE_TOLERANCE_SECS - 1;
    assert!(refused(SECRET, &good, body, early).contains("301 s"));
    let v1 = good.split_once(',').unwrap().1;
    assert!(refused(SECRET, v1, body, NOW).contains("no `t=`"));
    assert!(refused(SECRET, &format!("t={NOW}"), body, NOW).contains("no `v1=`"));
    assert!(refused(SECRET, &format!("t=soon,{v1}"), body, NOW).contains("unix seconds"));
    assert!(refused(SECRET, &format!("t={NOW},t={NOW},{v1}"), body, NOW).contains("more than"));
    assert!(refused(SECRET, "garbage", body, NOW).contains("key=value"));
    let not_hex = format!("t={NOW},v1=+f{}", &v1[5..]);
    assert!(refused(SECRET, &not_hex, body, NOW).contains("matches"));
    // The timestamp is signed as sent: a reformatted one does not verify.
    let padded = good.replacen("t=", "t=0", 1);
    assert!(refused(SECRET, &padded, body, NOW).contains("matches"));
}

fn call(id: &str) -> HostToolCall {
    HostToolCall {
        session_id: "s1".into(),
        call_id: id.into(),
        tool: "lookup".into(),
        input: json!({"q": "rust"}),
    }
}

/// POSTs `call` to the server, signed with `secret` (or unsigned); status and body.
async fn post(
    server: &HttpToolServer,
    call: &HostToolCall,
    secret: Option<&[u8]>,
) -> (u16, String) {
    let body = serde_json::to_vec(call).unwrap();
    let mut request = reqwest::Client::new().post(server.url()).body(body.clone());
    if let Some(secret) = secret {
        request = request.header(SIGNATURE_HEADER, sign(secret, now(), &body));
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn server_refuses_unsigned_and_wrongly_signed_calls() {
    let server = HttpToolServer::start(SECRET).await.unwrap();
    assert_eq!(post(&server, &call("c1"), None).await.0, 401);
    let (status, body) = post(&server, &call("c2"), Some(b"wrong")).await;
    assert_eq!((status, body.contains("matches")), (401, true));
    assert!(server.calls().is_empty());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.refused.is_some()));
}

#[tokio::test]
async fn server_echoes_a_verified_call_and_records_it() {
    let server = HttpToolServer::start(SECRET).await.unwrap();
    let (status, body) = post(&server, &call("c1"), Some(SECRET)).await;
    assert_eq!(status, 200);
    let result: ToolCallResultRequest = serde_json::from_str(&body).unwrap();
    let expected = r#"host-tool-ok {"q":"rust"}"#;
    assert_eq!(echo_output(&json!({"q": "rust"})), expected);
    assert_eq!(result.output, ToolOutput::Text(expected.into()));
    assert_eq!(server.calls(), vec![call("c1")]);
    let request = &server.requests()[0];
    assert!(
        request
            .headers
            .contains_key(&SIGNATURE_HEADER.to_ascii_lowercase())
    );
}

#[tokio::test]
async fn server_fails_the_first_calls_then_replies_as_told() {
    let server = HttpToolServer::start(SECRET).await.unwrap();
    server.fail_first(2);
    let failed = ToolCallResultRequest {
        output: ToolOutput::Text("no such thing".into()),
        is_error: true,
    };
    server.reply_with(ToolReply::Result(failed.clone()));
    assert_eq!(post(&server, &call("c1"), Some(SECRET)).await.0, 503);
    assert_eq!(post(&server, &call("c1"), Some(SECRET)).await.0, 503);
    let (status, body) = post(&server, &call("c1"), Some(SECRET)).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<ToolCallResultRequest>(&body).unwrap(),
        failed
    );
    assert_eq!(server.calls().len(), 3);

    server.reply_with(ToolReply::Raw {
        status: 418,
        body: "teapot".into(),
    });
    assert_eq!(
        post(&server, &call("c2"), Some(SECRET)).await,
        (418, "teapot".into())
    );
}
