//! A user's message as drivers receive it: text and images, in the order sent.

use std::path::PathBuf;

/// One user message: its parts in order. Images arrive resolved: the daemon has read
/// an image sent by `path` and checked every image's type and size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserMessage {
    /// The parts, in order.
    pub parts: Vec<UserPart>,
}

/// One part of a [`UserMessage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserPart {
    /// Text.
    Text(String),
    /// An image.
    Image(Image),
}

/// An image of a user message.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The bytes, base64-encoded (standard alphabet, padded).
    pub data: String,
    /// The workspace file it was read from, when it was sent by path.
    pub path: Option<PathBuf>,
}

impl std::fmt::Debug for Image {
    /// Names the type and size, not the bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("media_type", &self.media_type)
            .field("base64_len", &self.data.len())
            .field("path", &self.path)
            .finish()
    }
}

impl Image {
    /// The image as a `data:` URL.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

impl UserMessage {
    /// A message of one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            parts: vec![UserPart::Text(text.into())],
        }
    }

    /// Its text parts joined by blank lines (what an agent that takes text only gets).
    pub fn plain_text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                UserPart::Text(text) => Some(text.as_str()),
                UserPart::Image(_) => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// Its images, in order.
    pub fn images(&self) -> impl Iterator<Item = &Image> {
        self.parts.iter().filter_map(|p| match p {
            UserPart::Image(image) => Some(image),
            UserPart::Text(_) => None,
        })
    }

    /// Whether it holds an image.
    pub fn has_images(&self) -> bool {
        self.images().next().is_some()
    }
}

impl From<&str> for UserMessage {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

impl From<String> for UserMessage {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}
