//! W3C trace context (`traceparent`, `tracestate`) on a request: the caller's span a turn's
//! span continues. Parsed by the W3C rules; anything malformed is ignored, never an error
//! (a bad `traceparent` starts a new trace, a bad `tracestate` is dropped alone).

use axum::http::HeaderMap;

/// The longest `tracestate` kept (W3C: 32 list members of at most 256 characters each,
/// plus separators).
const MAX_TRACE_STATE: usize = 8_192;

/// The caller's span, as a `traceparent` header named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace id (never all zeros).
    pub trace_id: [u8; 16],
    /// The caller's span id (never all zeros).
    pub span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
    /// The `tracestate` header, as sent, when there was a well-formed one.
    pub state: Option<String>,
}

impl TraceParent {
    /// The trace context of a request's headers: `None` without a single well-formed
    /// `traceparent`.
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let mut values = headers.get_all("traceparent").iter();
        let value = values.next()?.to_str().ok()?;
        if values.next().is_some() {
            return None;
        }
        let mut parent = Self::parse(value)?;
        parent.state = trace_state(headers);
        Some(parent)
    }

    /// Parses a `traceparent` value: `version-traceid-parentid-flags`, lowercase hex.
    /// Version `ff` is invalid; a version above `00` may carry more fields after a `-`.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim_matches([' ', '\t']);
        let bytes = value.as_bytes();
        if bytes.len() < 55 {
            return None;
        }
        let version = hex::<1>(&value[..2])?[0];
        if version == 0xff || (version == 0 && bytes.len() != 55) {
            return None;
        }
        if version > 0 && bytes.len() > 55 && bytes[55] != b'-' {
            return None;
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let trace_id = hex::<16>(&value[3..35])?;
        let span_id = hex::<8>(&value[36..52])?;
        let flags = hex::<1>(&value[53..55])?[0];
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(Self {
            trace_id,
            span_id,
            flags,
            state: None,
        })
    }

    /// Whether the caller sampled its span.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

/// The `tracestate` headers joined (several are one list), when they fit and every
/// member is `key=value`.
fn trace_state(headers: &HeaderMap) -> Option<String> {
    let mut members = Vec::new();
    for value in headers.get_all("tracestate") {
        let value = value.to_str().ok()?;
        for member in value.split(',').map(|m| m.trim_matches([' ', '\t'])) {
            if member.is_empty() {
                continue;
            }
            let (key, val) = member.split_once('=')?;
            if key.is_empty() || val.is_empty() || !key.bytes().all(key_char) {
                return None;
            }
            if !val
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=')
            {
                return None;
            }
            members.push(member);
        }
    }
    let state = members.join(",");
    (!state.is_empty() && members.len() <= 32 && state.len() <= MAX_TRACE_STATE).then_some(state)
}

/// A character of a `tracestate` key: lowercase letters, digits, `_-*/@`.
fn key_char(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'*' | b'/' | b'@')
}

/// `N` bytes from `2N` lowercase hex digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = (nibble(digits[2 * i])? << 4) | nibble(digits[2 * i + 1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_a_valid_traceparent() {
        let parent = TraceParent::parse(VALID).unwrap();
        assert_eq!(parent.trace_id[..2], [0x4b, 0xf9]);
        assert_eq!(parent.span_id[7], 0xb7);
        assert!(parent.sampled());
        assert!(
            !TraceParent::parse(&VALID.replace("-01", "-00"))
                .unwrap()
                .sampled()
        );
        // A later version may add fields after a dash.
        let future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra";
        assert!(TraceParent::parse(future).is_some());
    }

    #[test]
    fn malformed_traceparents_are_ignored() {
        for bad in [
            "",
            "garbage",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn headers_give_the_parent_and_its_state() {
        let mut headers = HeaderMap::new();
        assert_eq!(TraceParent::from_headers(&headers), None);
        headers.insert("traceparent", VALID.parse().unwrap());
        headers.append("tracestate", "congo=t61rcWkgMzE".parse().unwrap());
        headers.append("tracestate", "rojo=00f067aa0ba902b7".parse().unwrap());
        let parent = TraceParent::from_headers(&headers).unwrap();
        assert_eq!(
            parent.state.as_deref(),
            Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        );
        // A bad tracestate is dropped alone.
        headers.insert("tracestate", "not a list".parse().unwrap());
        let parent = TraceParent::from_headers(&headers).unwrap();
        assert_eq!(parent.state, None);
        // Two traceparents: neither is trusted.
        headers.append("traceparent", VALID.parse().unwrap());
        assert_eq!(TraceParent::from_headers(&headers), None);
    }
}
