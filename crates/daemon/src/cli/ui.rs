//! `sandbox-daemon ui`: where the inspector of the configured daemon is.

use std::process::ExitCode;

use clap::Args;
use reqwest::Url;
use sandbox_client::DEFAULT_ENDPOINT;

/// Which daemon's inspector.
#[derive(Debug, Clone, Args)]
pub struct UiArgs {
    /// The daemon's base URL.
    #[arg(long, env = "SANDBOX_DAEMON_ENDPOINT", default_value = DEFAULT_ENDPOINT)]
    pub endpoint: String,
}

/// The inspector's URL under a daemon's base URL (`http://127.0.0.1:2468` →
/// `http://127.0.0.1:2468/ui/`), or `None` when the endpoint is not an http(s) URL.
pub fn inspector_url(endpoint: &str) -> Option<Url> {
    let mut base = Url::parse(endpoint).ok()?;
    if base.cannot_be_a_base() || !matches!(base.scheme(), "http" | "https") {
        return None;
    }
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    base.set_query(None);
    base.set_fragment(None);
    base.join("ui/").ok()
}

/// Prints the inspector's URL; the hint goes to stderr.
pub fn run(args: UiArgs) -> ExitCode {
    match inspector_url(&args.endpoint) {
        Some(url) => {
            println!("{url}");
            eprintln!("open it in a browser; the page asks for the daemon's token, if it has one");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: `{}` is not an http(s) URL", args.endpoint);
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::inspector_url;

    #[test]
    fn the_inspector_is_under_the_endpoint() {
        let url = |e: &str| inspector_url(e).map(|u| u.to_string());
        assert_eq!(
            url("http://127.0.0.1:2468").as_deref(),
            Some("http://127.0.0.1:2468/ui/")
        );
        assert_eq!(
            url("https://box.example/daemon").as_deref(),
            Some("https://box.example/daemon/ui/")
        );
        assert_eq!(url("unix:/run/sd.sock"), None);
        assert_eq!(url("not a url"), None);
    }
}
