//! A host application's http tool endpoint, for tests: [`HttpToolServer`] receives the
//! daemon's signed `POST`s of host tool calls, and [`verify_signature`] is the check a
//! host writes to know a call came from the daemon.

mod server;
#[cfg(test)]
mod tests;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

pub use server::{HttpToolServer, ReceivedRequest, ToolReply, echo_output};

/// How far (in seconds) a signature's timestamp may be from the verifier's clock, either
/// way: older calls are refused as replays.
pub const SIGNATURE_TOLERANCE_SECS: u64 = 5 * 60;

/// Checks a `Sandbox-Daemon-Signature` header against the raw request body: the reference
/// verification a host application writes.
///
/// The header is `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256>`; the MAC is keyed by
/// the operator's secret and taken over the bytes `<t>.<body>` (`t` exactly as sent, a
/// `.`, then the body exactly as received — verify before parsing it). The call is
/// accepted when `t` is within [`SIGNATURE_TOLERANCE_SECS`] of `now` (unix seconds) and
/// any `v1` matches (several `v1` may be sent while a secret is rotated; other schemes
/// are ignored); the MAC is compared in constant time. `Err` says what was wrong.
pub fn verify_signature(secret: &[u8], header: &str, body: &[u8], now: u64) -> Result<(), String> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        let Some((key, value)) = part.trim().split_once('=') else {
            return Err(format!("`{part}` is not `key=value`"));
        };
        match key {
            "t" if timestamp.is_some() => return Err("more than one `t=`".into()),
            "t" => timestamp = Some(value),
            "v1" => signatures.push(value),
            _ => {}
        }
    }
    let t = timestamp.ok_or("no `t=` timestamp")?;
    let seconds: u64 = t
        .parse()
        .map_err(|_| format!("the timestamp `{t}` is not unix seconds"))?;
    if signatures.is_empty() {
        return Err("no `v1=` signature".into());
    }
    let skew = now.abs_diff(seconds);
    if skew > SIGNATURE_TOLERANCE_SECS {
        return Err(format!(
            "the timestamp is {skew} s from now (at most {SIGNATURE_TOLERANCE_SECS} s)"
        ));
    }
    let matches = signatures.iter().filter_map(|s| hex_decode(s)).any(|mac| {
        let mut expected =
            Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
        expected.update(t.as_bytes());
        expected.update(b".");
        expected.update(body);
        expected.verify_slice(&mac).is_ok()
    });
    if matches {
        Ok(())
    } else {
        Err("no `v1=` signature matches the body".into())
    }
}

/// Hex digits to bytes; `None` if `text` is not an even number of hex digits.
fn hex_decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
