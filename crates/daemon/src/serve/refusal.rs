//! The daemon's answer to what hyper refuses before the application runs: a request head it
//! cannot parse or frame, one over its limits, one that does not arrive in time. hyper
//! writes a bare status for some (kept off the wire by `last_word.rs`) and nothing for a
//! timeout; this writes problem details on the socket instead, with `Connection: close`,
//! then closes it.

use std::error::Error as StdError;
use std::time::Duration;

use axum::body::to_bytes;
use axum::http::header;
use axum::response::IntoResponse;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::last_word::Handback;
use crate::error::ApiError;
use crate::guard::{MAX_URI_BYTES, headers_too_large};

/// How long a closing connection's remaining input is read and dropped, so the client
/// reads the answer instead of a reset (the rest of a huge head may still be arriving).
const LINGER: Duration = Duration::from_secs(2);

/// Most bytes read and dropped while lingering.
const MAX_LINGER_BYTES: usize = 8 << 20;

/// The problem that answers a connection that ended with `error`, when the daemon has one
/// to give: hyper refused the head (its own answer was kept back), or the head stopped
/// arriving before the header-read timeout. Only `hyper::Error`s are answered.
pub fn problem<S>(
    error: &(dyn StdError + 'static),
    handback: &Handback<S>,
    header_read: Duration,
) -> Option<ApiError> {
    let error = error.downcast_ref::<hyper::Error>()?;
    if error.is_timeout() {
        return handback.unanswered.then_some(ApiError::RequestTimeout {
            part: "head",
            after: header_read,
        });
    }
    let status = handback.refusal.as_ref()?.status;
    let uri_too_long = ApiError::UriTooLong {
        limit: MAX_URI_BYTES,
    };
    if !error.is_parse() {
        return None;
    }
    // hyper tells its parse errors apart only in their text (`hyper::Error::description`);
    // a text this does not know still gets the problem of hyper's own status.
    Some(match error.to_string().as_str() {
        "invalid HTTP method parsed" => ApiError::MalformedRequest("invalid method".into()),
        "invalid URI" => ApiError::MalformedRequest("invalid request target".into()),
        "invalid HTTP header parsed" => ApiError::MalformedRequest(
            "a line of the head is invalid (the request line ends after its version; header names are tokens, header values have no control characters)".into(),
        ),
        "invalid HTTP version parsed" if names_another_version(&handback.line_end) => {
            ApiError::HttpVersionNotSupported
        }
        "invalid HTTP version parsed" => ApiError::MalformedRequest(
            "the request line is not `<method> <target> HTTP/1.1`".into(),
        ),
        "invalid content-length parsed" => ApiError::InvalidFraming(
            "`Content-Length` is not a number, or several disagree".into(),
        ),
        "invalid transfer-encoding parsed" => {
            ApiError::InvalidFraming("`Transfer-Encoding` does not end with `chunked`".into())
        }
        "unexpected transfer-encoding parsed" => ApiError::InvalidFraming(
            "`Transfer-Encoding` is not allowed in an HTTP/1.0 request".into(),
        ),
        "URI too long" => uri_too_long,
        // Over hyper's buffer before the request line ended: that line is what is too long.
        "message head is too large" if handback.line_open => uri_too_long,
        "message head is too large" => headers_too_large(),
        other => match status {
            414 => uri_too_long,
            431 if handback.line_open => uri_too_long,
            431 => headers_too_large(),
            _ => ApiError::MalformedRequest(other.to_string()),
        },
    })
}

/// Whether a request line hyper could not read a version from ends with a well-formed one
/// (`HTTP/<digit>.<digit>`) other than HTTP/1.0 and HTTP/1.1: a version this daemon does
/// not speak, rather than a malformed line (such as a target with a space in it).
fn names_another_version(line_end: &[u8]) -> bool {
    let version = line_end.rsplit(|&b| b == b' ').next().unwrap_or_default();
    let well_formed = matches!(version, [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
        if major.is_ascii_digit() && minor.is_ascii_digit());
    well_formed && version != b"HTTP/1.0" && version != b"HTTP/1.1"
}

/// Ends a connection hyper let go of: sends what it still owes, then `problem` (or, when
/// there is none, hyper's own kept-back answer), and closes.
pub async fn finish<S: AsyncRead + AsyncWrite + Unpin>(
    handback: Handback<S>,
    problem: Option<ApiError>,
) {
    let Handback {
        mut stream,
        unsent,
        refusal,
        ..
    } = handback;
    if problem.is_none() && refusal.is_none() && unsent.is_empty() {
        return;
    }
    let answered = problem.is_some();
    let answer = match (problem, refusal) {
        (Some(problem), _) => render(problem).await,
        (None, Some(refusal)) => refusal.bytes,
        (None, None) => Vec::new(),
    };
    let sent = async {
        stream.write_all(&unsent).await?;
        stream.write_all(&answer).await?;
        stream.shutdown().await
    };
    if let Err(error) = sent.await {
        tracing::debug!(%error, "answering a refused request failed");
        return;
    }
    if answered {
        linger(&mut stream).await;
    }
}

/// `problem` as the application answers it, written as an HTTP/1.1 response that closes
/// the connection.
async fn render(problem: ApiError) -> Vec<u8> {
    let (parts, body) = problem.into_response().into_parts();
    let body = to_bytes(body, usize::MAX).await.unwrap_or_default();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        parts.status.as_u16(),
        parts.status.canonical_reason().unwrap_or_default()
    );
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH && name != header::CONNECTION {
            head.push_str(&format!(
                "{name}: {}\r\n",
                value.to_str().unwrap_or_default()
            ));
        }
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\ndate: {}\r\n\r\n",
        body.len(),
        chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT")
    ));
    [head.into_bytes(), body.to_vec()].concat()
}

/// Reads and drops what the client still sends, for a while.
async fn linger<S: AsyncRead + Unpin>(stream: &mut S) {
    let drain = async {
        let mut buf = vec![0u8; 16 << 10];
        let mut total = 0;
        while total < MAX_LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_version_is_told_from_a_malformed_line() {
        assert!(names_another_version(b"GET / HTTP/2.0"));
        assert!(names_another_version(b"HTTP/0.9"));
        for line in [
            &b"GET /a b"[..],
            b"GET /a b HTTP/1.1",
            b"GET / HTTP/1.10",
            b"GET / http/1.1",
            b"",
        ] {
            assert!(
                !names_another_version(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
