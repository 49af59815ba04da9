//! An agent's native conversation state as it travels between daemons and agents: the
//! files an agent keeps to resume a session (exported by [`crate::AgentDriver::export_native`],
//! filed again by [`crate::AgentDriver::import_native`]) or written from another agent's
//! conversation ([`crate::AgentDriver::native_history`]).

use base64::Engine;
use sandbox_universal::{AgentId, FileEncoding, NativeBundle, NativeFile};
use sha2::{Digest, Sha256};

/// What an agent keeps to resume a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeState {
    /// The agent's own session (thread) id.
    pub native_session_id: Option<String>,
    /// The working directory the files were written for.
    pub cwd: String,
    /// The files, by role (see [`NativeFile::name`]).
    pub files: Vec<StateFile>,
}

/// One file of a [`NativeState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    /// What the file is to its agent.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl NativeState {
    /// A state of one file.
    pub fn single(
        native_session_id: Option<String>,
        cwd: impl Into<String>,
        name: &str,
        bytes: Vec<u8>,
    ) -> Self {
        Self {
            native_session_id,
            cwd: cwd.into(),
            files: vec![StateFile {
                name: name.to_string(),
                bytes,
            }],
        }
    }

    /// The bytes of the file named `name`.
    pub fn file(&self, name: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.bytes.as_slice())
    }

    /// The file named `name`, or an error naming what is missing.
    pub fn require(&self, name: &str) -> Result<&[u8], sandbox_universal::AgentError> {
        self.file(name).ok_or_else(|| {
            sandbox_universal::AgentError::protocol(format!(
                "the native state has no `{name}` file"
            ))
        })
    }

    /// As a bundle carries it: each file as UTF-8 text when it is, else base64, with its
    /// checksum.
    pub fn to_bundle(&self, agent: AgentId) -> NativeBundle {
        NativeBundle {
            agent,
            native_session_id: self.native_session_id.clone(),
            cwd: self.cwd.clone(),
            files: self
                .files
                .iter()
                .map(|file| {
                    let (encoding, content) = match std::str::from_utf8(&file.bytes) {
                        Ok(text) => (FileEncoding::Utf8, text.to_string()),
                        Err(_) => (
                            FileEncoding::Base64,
                            base64::engine::general_purpose::STANDARD.encode(&file.bytes),
                        ),
                    };
                    NativeFile {
                        name: file.name.clone(),
                        encoding,
                        content,
                        sha256: sha256_hex(&file.bytes),
                    }
                })
                .collect(),
        }
    }

    /// From a bundle: each file decoded and its checksum checked (the error names the
    /// file).
    pub fn from_bundle(bundle: &NativeBundle) -> Result<Self, String> {
        let mut files = Vec::with_capacity(bundle.files.len());
        for file in &bundle.files {
            let bytes = match file.encoding {
                FileEncoding::Utf8 => file.content.as_bytes().to_vec(),
                FileEncoding::Base64 => base64::engine::general_purpose::STANDARD
                    .decode(&file.content)
                    .map_err(|e| format!("native file `{}` is not base64: {e}", file.name))?,
            };
            let sum = sha256_hex(&bytes);
            if sum != file.sha256 {
                return Err(format!(
                    "native file `{}` does not match its checksum (sha256 {sum}, the bundle says {})",
                    file.name, file.sha256
                ));
            }
            if files.iter().any(|f: &StateFile| f.name == file.name) {
                return Err(format!("native file `{}` appears twice", file.name));
            }
            files.push(StateFile {
                name: file.name.clone(),
                bytes,
            });
        }
        Ok(Self {
            native_session_id: bundle.native_session_id.clone(),
            cwd: bundle.cwd.clone(),
            files,
        })
    }
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of `bytes` (a digest).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to `path` (creating its directories, mode 0700; the file 0600), as the
/// agent's files are: private to the user the daemon runs the agent as.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_round_trip_text_and_bytes_and_catch_tampering() {
        let state = NativeState {
            native_session_id: Some("n1".into()),
            cwd: "/w".into(),
            files: vec![
                StateFile {
                    name: "a.jsonl".into(),
                    bytes: b"{\"x\":1}\n".to_vec(),
                },
                StateFile {
                    name: "b.bin".into(),
                    bytes: vec![0xff, 0, 1],
                },
            ],
        };
        let bundle = state.to_bundle(AgentId::Mock);
        assert_eq!(bundle.files[0].encoding, FileEncoding::Utf8);
        assert_eq!(bundle.files[1].encoding, FileEncoding::Base64);
        assert_eq!(NativeState::from_bundle(&bundle).unwrap(), state);
        let mut tampered = bundle.clone();
        tampered.files[0].content.push(' ');
        let error = NativeState::from_bundle(&tampered).unwrap_err();
        assert!(
            error.contains("`a.jsonl` does not match its checksum"),
            "{error}"
        );
        let mut twice = bundle;
        twice.files[1] = twice.files[0].clone();
        assert!(
            NativeState::from_bundle(&twice)
                .unwrap_err()
                .contains("twice")
        );
    }
}
