//! Amp: its agent loop runs on Amp's servers, so offline it can only start and fail.

use std::path::Path;

use serde_json::json;

use super::{Launch, Sandbox, write_file};

/// Amp with a fake key, update checks off, and its service URL set to `service_url`
/// when given (default: Amp's hosted service, unreachable in the namespace).
pub fn launch(
    exe: &Path,
    sandbox: &Sandbox,
    service_url: Option<&str>,
    args: &[&str],
) -> std::io::Result<Launch> {
    let settings = sandbox.home.join(".config/amp/settings.json");
    write_file(
        &settings,
        &json!({"amp.updates.mode": "disabled"}).to_string(),
    )?;
    let mut launch = Launch::new(exe, sandbox).args(args.iter().copied()).envs([
        ("AMP_API_KEY", "sgamp_fake".to_owned()),
        ("AMP_SETTINGS_FILE", settings.display().to_string()),
    ]);
    if let Some(url) = service_url {
        launch.env.insert("AMP_URL".to_owned(), url.to_owned());
    }
    Ok(launch)
}
