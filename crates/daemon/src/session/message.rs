//! A user's message, made ready for the agent and the log: text and images, each image
//! checked (a type the agent takes, bytes that are that type, at most
//! [`MAX_IMAGE_BYTES`]) and one sent by `path` read from inside the workspace.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sandbox_agents::{Image, UserMessage, UserPart};
use sandbox_universal::{
    ContentPart, MAX_IMAGE_BYTES, MessagePart, PolicySupport, SendMessageRequest,
};

use super::SessionError;

/// A message for the agent, and the parts the log's user item carries.
#[derive(Debug)]
pub struct Prepared {
    /// What the agent gets.
    pub message: UserMessage,
    /// What the log keeps (an image sent by path keeps its path, not its bytes).
    pub logged: Vec<ContentPart>,
    /// The caller's trace context (`traceparent`), which the turn's span continues.
    pub trace: Option<crate::telemetry::TraceParent>,
}

/// Prepares `request` for an agent that honours `support`, in the workspace `cwd`.
pub(super) fn prepare(
    request: SendMessageRequest,
    support: &PolicySupport,
    agent: &str,
    cwd: &Path,
) -> Result<Prepared, SessionError> {
    let parts = match (request.message, request.content) {
        (Some(text), _) => vec![MessagePart::Text { text }],
        (None, Some(parts)) => parts,
        (None, None) => Vec::new(),
    };
    let mut prepared = Prepared {
        message: UserMessage::default(),
        logged: Vec::new(),
        trace: None,
    };
    for (i, part) in parts.into_iter().enumerate() {
        match part {
            MessagePart::Text { text } => {
                prepared
                    .logged
                    .push(ContentPart::Text { text: text.clone() });
                prepared.message.parts.push(UserPart::Text(text));
            }
            MessagePart::Image {
                media_type,
                data,
                path,
            } => {
                if !support.image_types.contains(&media_type) {
                    return Err(SessionError::Unhonoured(match &support.image_types[..] {
                        [] => format!("`content[{i}]`: {agent} takes no images"),
                        types => format!(
                            "`content[{i}].mediaType`: {agent} takes {} images only",
                            types.join(", ")
                        ),
                    }));
                }
                let bytes = match (&data, &path) {
                    (Some(data), _) => STANDARD.decode(data.trim()).map_err(|e| {
                        SessionError::InvalidContent(format!(
                            "`content[{i}].data` is not base64: {e}"
                        ))
                    })?,
                    (None, Some(path)) => read_image(cwd, path, i)?,
                    (None, None) => {
                        return Err(SessionError::InvalidContent(format!(
                            "`content[{i}]` needs `data` or `path`"
                        )));
                    }
                };
                check_image(&bytes, &media_type, i)?;
                let resolved = path.as_ref().map(|p| cwd.join(p));
                prepared.logged.push(ContentPart::Image {
                    media_type: media_type.clone(),
                    data: data.clone(),
                    path: path.clone(),
                });
                prepared.message.parts.push(UserPart::Image(Image {
                    media_type,
                    data: STANDARD.encode(&bytes),
                    path: resolved,
                }));
            }
        }
    }
    Ok(prepared)
}

/// A host tool's output with every image checked and given inline (one named by `path`
/// read from inside `cwd`), whatever the agent: the tool's result is the agent's MCP
/// client's to show.
pub fn tool_output(
    output: sandbox_universal::ToolOutput,
    cwd: &Path,
) -> Result<sandbox_universal::ToolOutput, SessionError> {
    use sandbox_universal::ToolOutput;
    let ToolOutput::Parts(parts) = output else {
        return Ok(output);
    };
    let support = PolicySupport {
        image_types: sandbox_universal::IMAGE_TYPES.map(str::to_string).to_vec(),
        ..PolicySupport::default()
    };
    let request = SendMessageRequest {
        message: None,
        content: Some(parts),
    };
    let prepared = prepare(request, &support, "a tool result", cwd)?;
    Ok(ToolOutput::Parts(
        prepared
            .message
            .parts
            .into_iter()
            .map(|part| match part {
                UserPart::Text(text) => MessagePart::Text { text },
                UserPart::Image(image) => MessagePart::Image {
                    media_type: image.media_type,
                    data: Some(image.data),
                    path: None,
                },
            })
            .collect(),
    ))
}

/// Reads the image at `path` (relative to `cwd`, or absolute), which must resolve to a
/// file inside `cwd` (symbolic links followed) of at most [`MAX_IMAGE_BYTES`].
fn read_image(cwd: &Path, path: &str, i: usize) -> Result<Vec<u8>, SessionError> {
    let invalid = |why: String| SessionError::InvalidContent(format!("`content[{i}].path`: {why}"));
    let workspace = cwd
        .canonicalize()
        .map_err(|e| invalid(format!("the working directory cannot be read: {e}")))?;
    let resolved = cwd
        .join(path)
        .canonicalize()
        .map_err(|e| invalid(format!("`{}`: {e}", path.escape_debug())))?;
    if !resolved.starts_with(&workspace) {
        return Err(invalid(format!(
            "`{}` is outside the session's working directory",
            path.escape_debug()
        )));
    }
    let metadata = std::fs::metadata(&resolved).map_err(|e| invalid(e.to_string()))?;
    if !metadata.is_file() {
        return Err(invalid(format!("`{}` is not a file", path.escape_debug())));
    }
    if metadata.len() > MAX_IMAGE_BYTES as u64 {
        return Err(invalid(format!(
            "`{}` holds {} bytes; an image may hold at most {MAX_IMAGE_BYTES}",
            path.escape_debug(),
            metadata.len()
        )));
    }
    std::fs::read(&resolved).map_err(|e| invalid(e.to_string()))
}

/// The bytes must be an image of the declared type, of at most [`MAX_IMAGE_BYTES`].
fn check_image(bytes: &[u8], media_type: &str, i: usize) -> Result<(), SessionError> {
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(SessionError::InvalidContent(format!(
            "`content[{i}]`: the image holds {} bytes; at most {MAX_IMAGE_BYTES} are taken",
            bytes.len()
        )));
    }
    let matches = match media_type {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xff, 0xd8, 0xff]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => false,
    };
    if matches {
        Ok(())
    } else {
        Err(SessionError::InvalidContent(format!(
            "`content[{i}]`: the bytes are not a {media_type} image"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn support() -> PolicySupport {
        PolicySupport {
            image_types: vec!["image/png".into()],
            ..PolicySupport::default()
        }
    }

    fn image(data: Option<String>, path: Option<&str>) -> SendMessageRequest {
        SendMessageRequest {
            message: None,
            content: Some(vec![
                MessagePart::Text {
                    text: "look".into(),
                },
                MessagePart::Image {
                    media_type: "image/png".into(),
                    data,
                    path: path.map(str::to_string),
                },
            ]),
        }
    }

    #[test]
    fn images_inline_and_by_path_reach_the_agent_as_base64() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
        let inline = prepare(
            image(Some(STANDARD.encode(PNG)), None),
            &support(),
            "X",
            dir.path(),
        )
        .unwrap();
        let by_path = prepare(image(None, Some("shot.png")), &support(), "X", dir.path()).unwrap();
        for prepared in [&inline, &by_path] {
            let image = prepared.message.images().next().unwrap();
            assert_eq!(STANDARD.decode(&image.data).unwrap(), PNG);
            assert_eq!(prepared.message.plain_text(), "look");
            assert_eq!(prepared.logged.len(), 2);
        }
        assert!(
            matches!(&by_path.logged[1], ContentPart::Image { data: None, path: Some(p), .. } if p == "shot.png")
        );
    }

    #[test]
    fn bad_images_are_refused_naming_the_part() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), PNG).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link.png")).unwrap();
        std::fs::write(dir.path().join("text.png"), b"not an image").unwrap();
        let cases = [
            image(None, Some("../x.png")),
            image(None, Some(outside.path().to_str().unwrap())),
            image(None, Some("link.png")),
            image(None, Some("missing.png")),
            image(None, Some("text.png")),
            image(Some("!!!".into()), None),
            image(Some(STANDARD.encode(vec![0x89; MAX_IMAGE_BYTES + 1])), None),
        ];
        for case in cases {
            let error = prepare(case, &support(), "X", dir.path()).unwrap_err();
            assert!(error.to_string().contains("content[1]"), "{error}");
        }
        let none = PolicySupport::default();
        let error = prepare(
            image(Some(STANDARD.encode(PNG)), None),
            &none,
            "Amp",
            dir.path(),
        )
        .unwrap_err();
        assert!(matches!(error, SessionError::Unhonoured(ref m) if m.contains("takes no images")));
    }
}
