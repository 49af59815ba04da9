//! Process output as text: bytes read in pieces, decoded as UTF-8 without splitting a
//! character across two pieces.

/// Decodes a stream of byte pieces as UTF-8 (invalid bytes replaced), holding back an
/// incomplete character at the end of a piece until the next one.
#[derive(Debug, Default)]
pub struct Utf8Pieces {
    pending: Vec<u8>,
}

impl Utf8Pieces {
    /// The text of `piece` (after what was held back), holding back an incomplete
    /// character at its end.
    pub fn push(&mut self, piece: &[u8]) -> String {
        self.pending.extend_from_slice(piece);
        let mut keep = 0;
        if let Err(error) = std::str::from_utf8(&self.pending)
            && error.error_len().is_none()
        {
            // An incomplete character at the end: at most 3 bytes wait for the rest.
            keep = self.pending.len() - error.valid_up_to();
        }
        let split = self.pending.len() - keep;
        let text = String::from_utf8_lossy(&self.pending[..split]).into_owned();
        self.pending.drain(..split);
        text
    }

    /// What is left at the end of the stream (an incomplete character, replaced).
    pub fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_across_pieces_arrives_whole() {
        let text = "héllo ☃";
        let bytes = text.as_bytes();
        let mut pieces = Utf8Pieces::default();
        let mut out = String::new();
        for byte in bytes {
            out.push_str(&pieces.push(std::slice::from_ref(byte)));
        }
        out.push_str(&pieces.finish());
        assert_eq!(out, text);
        assert_eq!(pieces.push(b"\xff ok"), "\u{fffd} ok");
        assert_eq!(pieces.push(b"\xe2\x98"), "");
        assert_eq!(pieces.finish(), "\u{fffd}");
    }
}
