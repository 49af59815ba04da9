//! Downloads nothing vouches for: a Claude manifest without this platform and a GitHub
//! asset without a digest are refused before a byte is fetched, installed (and reported)
//! only when unverified installs are allowed; a checksum that does not match is refused even
//! then. In the mirror's test binary, so the published layouts are shared.

use super::*;

/// `name` for as long as the test process runs (faults take `&'static str`).
fn leak(name: String) -> &'static str {
    Box::leak(name.into_boxed_str())
}

/// A Claude release whose checksum manifest has no entry for this platform: nothing vouches
/// for the binary, so the install is refused before it is downloaded, naming the file, why,
/// and the ways out.
#[tokio::test]
async fn a_claude_manifest_without_this_platform_is_refused() {
    let Some(claude) = published(Agent::Claude) else {
        return;
    };
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    mirror.fail("/manifest.json", Fault::Without(leak(glibc().to_string())));
    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(config(dir.path(), &mirror));
    let error = install(&installer, AgentId::Claude, None, false)
        .await
        .unwrap_err();
    assert!(matches!(error, InstallError::Unverified { .. }), "{error}");
    let message = error.to_string();
    let binary = claude.paths[&glibc().to_string()].clone();
    for part in [
        binary.as_str(),
        "manifest.json",
        &format!("has no entry for {}", glibc()),
        "--allow-unverified-installs",
        "SANDBOX_DAEMON_ALLOW_UNVERIFIED_INSTALLS=1",
        "SANDBOX_DAEMON_CLAUDE_PATH",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert_eq!(error.reason(), "unverified");
    assert_eq!(mirror.count(&binary), 0, "{:?}", mirror.requests());
    assert_eq!(leftovers(dir.path(), AgentId::Claude), Vec::<String>::new());
}

/// A GitHub release whose asset has no `digest`: refused before the download; allowed by
/// the operator, it is installed, and the install reports what it could not verify.
#[tokio::test]
async fn a_github_asset_without_a_digest_is_refused_unless_allowed() {
    let Some(opencode) = published(Agent::OpenCode) else {
        return;
    };
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    mirror.fail(
        &format!("/releases/tags/v{}", opencode.version),
        Fault::Without("digest"),
    );
    let tarball = opencode.paths[&glibc().to_string()].clone();
    let asset = tarball.rsplit('/').next().unwrap().to_string();

    let dir = tempfile::tempdir().unwrap();
    let installer = Installer::new(config(dir.path(), &mirror));
    let error = install(&installer, AgentId::Opencode, None, false)
        .await
        .unwrap_err();
    assert!(matches!(error, InstallError::Unverified { .. }), "{error}");
    let message = error.to_string();
    for part in [
        tarball.as_str(),
        &format!("gives no SHA-256 digest for the asset {asset}"),
        "--allow-unverified-installs",
        "SANDBOX_DAEMON_OPENCODE_PATH",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }
    assert_eq!(mirror.count(&tarball), 0, "{:?}", mirror.requests());
    assert_eq!(
        leftovers(dir.path(), AgentId::Opencode),
        Vec::<String>::new()
    );

    // The operator's opt-in: installed, and said so.
    let mut allowed = config(dir.path(), &mirror);
    allowed.allow_unverified = true;
    let done = install(&Installer::new(allowed), AgentId::Opencode, None, false)
        .await
        .unwrap();
    assert_installed(&done, dir.path(), AgentId::Opencode, &opencode.version);
    assert_eq!(done.unverified.len(), 1, "{:?}", done.unverified);
    assert!(
        done.unverified[0].contains(&tarball) && done.unverified[0].contains("no SHA-256 digest"),
        "{:?}",
        done.unverified
    );
    assert_eq!(mirror.count(&tarball), 1);

    // With the digest published again, an allowing installer has nothing to report.
    mirror.heal();
    let mut allowed = config(dir.path(), &mirror);
    allowed.allow_unverified = true;
    let again = install(&Installer::new(allowed), AgentId::Opencode, None, true)
        .await
        .unwrap();
    assert!(again.unverified.is_empty(), "{:?}", again.unverified);
}

/// A digest that is present but wrong still refuses the download, opt-in or not: allowing
/// unverified installs is about missing checksums, never about mismatching ones.
#[tokio::test]
async fn the_opt_in_does_not_accept_a_mismatching_checksum() {
    let Some(opencode) = published(Agent::OpenCode) else {
        return;
    };
    let mirror = Mirror::serve(layouts().root()).await.unwrap();
    let tarball = opencode.paths[&glibc().to_string()].clone();
    mirror.fail(&tarball, Fault::Corrupt);
    let dir = tempfile::tempdir().unwrap();
    let mut allowed = config(dir.path(), &mirror);
    allowed.allow_unverified = true;
    let error = install(&Installer::new(allowed), AgentId::Opencode, None, false)
        .await
        .unwrap_err();
    assert!(matches!(error, InstallError::Corrupt { .. }), "{error}");
    assert_eq!(
        leftovers(dir.path(), AgentId::Opencode),
        Vec::<String>::new()
    );
}
