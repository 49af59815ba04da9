//! The one signature the daemon puts on what it `POST`s to a host's endpoint (http host
//! tools and webhooks), in `Sandbox-Daemon-Signature`:
//! `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>">`, keyed by a secret the
//! host holds. The timestamp is signed, so a receiver can refuse replays of old requests.

use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The signature header's value for `body` sent at `t` (unix seconds).
pub fn sign(secret: &[u8], t: u64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    let mut header = format!("t={t},v1=");
    for byte in mac.finalize().into_bytes() {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        header.push(HEX[usize::from(byte >> 4)].into());
        header.push(HEX[usize::from(byte & 0xf)].into());
    }
    header
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_covers_time_and_body() {
        let one = sign(b"secret", 1, b"{}");
        assert!(one.starts_with("t=1,v1="), "{one}");
        assert_eq!(one.len(), "t=1,v1=".len() + 64);
        assert_ne!(one, sign(b"secret", 1, b"{ }"));
        assert_ne!(one[4..], sign(b"secret", 2, b"{}")[4..]);
        assert_ne!(one, sign(b"other", 1, b"{}"));
        // RFC 4231 test case 2 ("Jefe"), as "<t>." + body.
        let jefe = sign(b"Jefe", 0, b"what do ya want for nothing?");
        assert_eq!(jefe.len(), 71);
    }
}
