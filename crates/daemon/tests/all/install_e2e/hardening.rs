//! What the install path refuses and keeps to itself: an Amp with nowhere verified to come
//! from, the daemon's secrets (npm never sees them), and hosts that do not answer (a session
//! fails within seconds, saying what to do).

use super::*;

/// `sandbox-daemon agents install amp --local` from `mirror` with exactly this environment:
/// no npm on `PATH` and no `.npmrc` in `HOME`, so no npm registry is known.
fn amp_without_a_registry(
    mirror: &Mirror,
    data_dir: &std::path::Path,
    scratch: &std::path::Path,
) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"));
    command
        .args(["agents", "install", "amp", "--local", "--data-dir"])
        .arg(data_dir)
        .args(["--install-mirror", mirror.url()])
        .env_clear()
        .env("HOME", scratch)
        .env("PATH", scratch);
    command
}

/// Amp's release host publishes no checksum and no npm registry is known to take its
/// verified npm package from: refused before the download, naming the file, why, and every
/// way out; with the operator's opt-in, the release binary is installed, loudly.
#[tokio::test]
async fn amp_without_an_npm_registry_is_refused_unless_allowed() {
    let Some(amp) = Layouts::shared().release(Agent::Amp) else {
        return;
    };
    let mirror = mirror().await;
    let binary = amp.paths["binary"].clone();
    let data = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();

    let refused = amp_without_a_registry(&mirror, data.path(), scratch.path())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    for part in [
        "refusing to install",
        binary.as_str(),
        "Amp's release host publishes no checksums",
        "npm platform package",
        "--npm-registry",
        "SANDBOX_DAEMON_NPM_REGISTRY",
        "--allow-unverified-installs",
        "SANDBOX_DAEMON_ALLOW_UNVERIFIED_INSTALLS=1",
        "SANDBOX_DAEMON_AMP_PATH",
    ] {
        assert!(stderr.contains(part), "{part:?} in {stderr}");
    }
    assert_eq!(mirror.count(&binary), 0, "{:?}", mirror.requests());

    let allowed = amp_without_a_registry(&mirror, data.path(), scratch.path())
        .env("SANDBOX_DAEMON_ALLOW_UNVERIFIED_INSTALLS", "1")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&allowed.stderr);
    assert!(allowed.status.success(), "{stderr}");
    assert!(
        stderr.contains("WARNING: amp") && stderr.contains("UNVERIFIED"),
        "{stderr}"
    );
    assert!(
        stderr.contains("INSTALLING AN UNVERIFIED DOWNLOAD"),
        "{stderr}"
    );
    let summary: serde_json::Value = serde_json::from_slice(&allowed.stdout).unwrap();
    assert_eq!(summary["source"], "mirror");
    assert_eq!(summary["version"], Agent::Amp.version());
    assert_eq!(mirror.count(&binary), 1);
}

/// npm runs with an allow-listed environment: a fake `npm` first on `PATH` records its
/// environment for both of the daemon's npm runs (finding the registry, installing Pi),
/// with the daemon's token, provider keys and GitHub tokens in the installing process's
/// environment; none of them reaches npm. The fake refuses the install after recording it
/// (the real npm installing Pi with that environment is the Pi test of
/// `crates/install/tests/mirror/`), so its failure must be reported.
#[tokio::test]
async fn npm_runs_without_the_daemons_secrets() {
    if Layouts::shared().npm().is_none() {
        return;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mirror = mirror().await;
    let scratch = tempfile::tempdir().unwrap();
    let (bin, records, home, tmp) = (
        scratch.path().join("bin"),
        scratch.path().join("records"),
        scratch.path().join("home"),
        scratch.path().join("tmp"),
    );
    for dir in [&bin, &records, &home, &tmp] {
        std::fs::create_dir(dir).unwrap();
    }
    let registry = format!("{}/npm", mirror.url());
    let fake = bin.join("npm");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\n\
             record=\"{records}/$$\"\n\
             env > \"$record.env\"\n\
             printf '%s\\n' \"$*\" > \"$record.args\"\n\
             if [ \"$1 $2 $3\" = \"config get registry\" ]; then echo '{registry}'; exit 0; fi\n\
             echo 'fake npm: environment recorded, not installing' >&2\n\
             exit 3\n",
            records = records.display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();

    let secrets = [
        ("SANDBOX_DAEMON_TOKEN", "daemon-token-secret-1"),
        ("ANTHROPIC_API_KEY", "sk-ant-secret-2"),
        ("OPENAI_API_KEY", "sk-openai-secret-3"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "claude-oauth-secret-4"),
        ("AMP_API_KEY", "sgamp-secret-5"),
        ("GITHUB_TOKEN", "ghp-secret-6"),
        ("GH_TOKEN", "gho-secret-7"),
        ("SANDBOX_DAEMON_GITHUB_TOKEN", "ghp-secret-8"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-9"),
    ];
    let data = tempfile::tempdir().unwrap();
    let mut search = vec![bin.clone()];
    search.extend(std::env::split_paths(&path));
    let output = Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"))
        .args(["agents", "install", "pi", "--local", "--data-dir"])
        .arg(data.path())
        .env_clear()
        .env("PATH", std::env::join_paths(&search).unwrap())
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .env("LANG", "C.UTF-8")
        .env("npm_config_fund", "false")
        .envs(secrets)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the fake npm refuses: {stderr}");
    assert!(
        stderr.contains("fake npm: environment recorded"),
        "{stderr}"
    );

    // Every run of npm, by its arguments.
    let mut runs: HashMap<String, HashMap<String, String>> = HashMap::new();
    for entry in std::fs::read_dir(&records).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "args") {
            let args = std::fs::read_to_string(&path).unwrap();
            let env = std::fs::read_to_string(path.with_extension("env")).unwrap();
            for (name, value) in secrets {
                assert!(
                    !env.contains(value) && !env.contains(&format!("{name}=")),
                    "{name} reached npm ({args}): {env}"
                );
            }
            let vars = env
                .lines()
                .filter_map(|line| line.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            runs.insert(args.trim().to_string(), vars);
        }
    }
    let config = &runs["config get registry"];
    let install = runs
        .iter()
        .find(|(args, _)| args.starts_with("install "))
        .map(|(_, env)| env)
        .unwrap_or_else(|| panic!("no `npm install` among {:?}", runs.keys()));
    for env in [config, install] {
        // What npm needs does reach it.
        assert!(
            env["PATH"].starts_with(&bin.display().to_string()),
            "{env:?}"
        );
        assert_eq!(env["HOME"], home.display().to_string());
        assert_eq!(env["TMPDIR"], tmp.display().to_string());
        assert_eq!(env["npm_config_fund"], "false");
    }
    assert_eq!(install["npm_config_registry"], registry);
    assert!(!config.contains_key("npm_config_registry"), "{config:?}");
}

/// A daemon whose install hosts accept connections and never answer: a session created for
/// an agent that is not installed fails within seconds (the 8 s answer budget), with a
/// `502 installFailed` naming the silent host and both ways out.
#[tokio::test]
async fn a_session_fails_fast_saying_what_to_do_when_no_install_host_answers() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let url = format!("http://{addr}");
    let data = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(common::process::BINARY);
    command.args(common::process::daemon_args(data.path(), None));
    for flag in [
        "--claude-releases-url",
        "--amp-releases-url",
        "--github-url",
        "--github-api-url",
    ] {
        command.args([flag, url.as_str()]);
    }
    command
        .args(["--npm-registry", &format!("{url}/npm")])
        // No agent binary anywhere: no override, an empty PATH.
        .env_clear()
        .env("HOME", data.path())
        .env("PATH", empty.path());
    let daemon = common::process::DaemonProcess::spawn_command(command);

    let started = std::time::Instant::now();
    let response = raw(
        reqwest::Method::POST,
        &format!("{}/sessions/nothing-answers", daemon.url),
        None,
        Some("application/json"),
        Some(br#"{"agent":"claude"}"#.to_vec()),
    )
    .await;
    let took = started.elapsed();
    eprintln!("session create against silent install hosts: {took:?}: {response:?}");
    assert_eq!(response.0, 502, "{response:?}");
    assert_eq!(response.2["agentError"]["type"], "installFailed");
    let detail = response.2["detail"].as_str().unwrap();
    for part in [
        format!("{addr} did not answer"),
        "--install-mirror".into(),
        "SANDBOX_DAEMON_INSTALL_MIRROR".into(),
        "SANDBOX_DAEMON_CLAUDE_PATH".into(),
    ] {
        assert!(detail.contains(&part), "{part:?} in {detail}");
    }
    assert!(
        took >= Duration::from_secs(7) && took < Duration::from_secs(12),
        "{took:?}"
    );
    // Nothing is kept of the session.
    let gone = raw(
        reqwest::Method::GET,
        &format!("{}/sessions/nothing-answers", daemon.url),
        None,
        None,
        None,
    )
    .await;
    assert_eq!(gone.0, 404, "{gone:?}");
    silent.abort();
}
