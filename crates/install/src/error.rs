//! What can go wrong installing an agent. Every variant says enough to act on: the URL and
//! status, the expected and actual checksum, the platform, the missing tool; a host that
//! does not answer and a download nobody vouches for also name the ways out.

use sandbox_universal::AgentError;

/// A failed install. Nothing it leaves behind is used: partial files are removed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// This agent is not installed by downloading (the built-in mock).
    #[error("{agent} is built in; there is nothing to install")]
    NotInstallable {
        /// The agent's name.
        agent: String,
    },
    /// The agent ships no binary for this machine.
    #[error("{agent} publishes no build for {platform}")]
    UnsupportedPlatform {
        /// The agent's name.
        agent: String,
        /// The machine.
        platform: String,
    },
    /// The version asked for cannot name a release.
    #[error("`{0}` is not a version (use `latest`, `pinned` or a version such as 1.2.3)")]
    BadVersion(String),
    /// The server answered with an error status.
    #[error("GET {url} answered HTTP {status}{}", if *.status == 404 { " (no such version or file)" } else { "" })]
    Http {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// No answer from a host: nothing listens there, no route or name leads to it, or it
    /// did not answer within the answer budget (retries included). Names the host and the
    /// ways to install without it.
    #[error(
        "{host} did not answer: {detail} (GET {url}). Without access to {host}, install from a mirror that answers (--install-mirror or SANDBOX_DAEMON_INSTALL_MIRROR; --npm-registry or SANDBOX_DAEMON_NPM_REGISTRY for npm packages), or provide the binary yourself with {path_var}"
    )]
    NoAnswer {
        /// The host (and port) that did not answer.
        host: String,
        /// The URL asked for.
        url: String,
        /// What happened (the timeout, or the connection's error).
        detail: String,
        /// The agent's override variable (`SANDBOX_DAEMON_<AGENT>_PATH`).
        path_var: String,
    },
    /// The transfer broke off (after retries), or the connection failed once answered.
    #[error("GET {url} failed: {message}")]
    Network {
        /// The URL.
        url: String,
        /// What happened.
        message: String,
    },
    /// A download's bytes are not the published ones.
    #[error("{what} from {url} is corrupt: {detail}")]
    Corrupt {
        /// The file.
        what: String,
        /// The URL.
        url: String,
        /// Expected and actual checksum or size.
        detail: String,
    },
    /// The vendor publishes no checksum for a download, and unverified installs are off.
    #[error(
        "refusing to install {url}: {reason}, so its bytes cannot be verified. To install it unverified anyway, pass --allow-unverified-installs (or set SANDBOX_DAEMON_ALLOW_UNVERIFIED_INSTALLS=1); or provide the binary yourself with {path_var}"
    )]
    Unverified {
        /// The file that would be downloaded.
        url: String,
        /// Why nothing vouches for it.
        reason: String,
        /// The agent's override variable (`SANDBOX_DAEMON_<AGENT>_PATH`).
        path_var: String,
    },
    /// A response could not be understood (release metadata, a version file).
    #[error("{url} returned something unexpected: {detail}")]
    BadResponse {
        /// The URL.
        url: String,
        /// What was wrong.
        detail: String,
    },
    /// The archive lacks the expected file.
    #[error("{archive} holds no `{member}`")]
    MissingMember {
        /// The archive's URL.
        archive: String,
        /// The file looked for.
        member: String,
    },
    /// The installed executable does not run, or reports another version.
    #[error("the installed {agent} does not check out: {detail}")]
    Verification {
        /// The agent's name.
        agent: String,
        /// What `--version` said or why it failed.
        detail: String,
    },
    /// No space left on the disk of the data directory.
    #[error("no space left on the device of {path}: {message}")]
    DiskFull {
        /// Where writing failed.
        path: String,
        /// The system's message.
        message: String,
    },
    /// A tool the install needs is missing (Node.js, npm).
    #[error("{0}")]
    MissingTool(String),
    /// No npm registry is configured.
    #[error(
        "no npm registry is configured: set SANDBOX_DAEMON_NPM_REGISTRY (or --npm-registry), npm's `registry` setting, or install npm"
    )]
    NoRegistry,
    /// npm failed installing a Node package.
    #[error("npm failed: {0}")]
    Npm(String),
    /// Another I/O failure.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

impl InstallError {
    /// An I/O error while doing `context`; a full disk becomes [`InstallError::DiskFull`].
    pub fn io(context: impl Into<String>, path: &std::path::Path, source: std::io::Error) -> Self {
        if source.raw_os_error() == Some(libc::ENOSPC)
            || source.raw_os_error() == Some(libc::EDQUOT)
        {
            return Self::DiskFull {
                path: path.display().to_string(),
                message: source.to_string(),
            };
        }
        Self::Io {
            context: format!("{} ({})", context.into(), path.display()),
            source,
        }
    }

    /// A short, stable name of the kind of failure (for logs and progress frames).
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NotInstallable { .. } => "notInstallable",
            Self::UnsupportedPlatform { .. } => "unsupportedPlatform",
            Self::BadVersion(_) => "badVersion",
            Self::Http { .. } => "httpStatus",
            Self::NoAnswer { .. } => "noAnswer",
            Self::Network { .. } => "network",
            Self::Unverified { .. } => "unverified",
            Self::Corrupt { .. } => "corrupt",
            Self::BadResponse { .. } => "badResponse",
            Self::MissingMember { .. } => "missingFile",
            Self::Verification { .. } => "verification",
            Self::DiskFull { .. } => "diskFull",
            Self::MissingTool(_) => "missingTool",
            Self::NoRegistry => "noRegistry",
            Self::Npm(_) => "npm",
            Self::Io { .. } => "io",
        }
    }
}

impl From<InstallError> for AgentError {
    fn from(error: InstallError) -> Self {
        AgentError::InstallFailed {
            message: error.to_string(),
        }
    }
}
