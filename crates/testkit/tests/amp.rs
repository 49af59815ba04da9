//! Amp cannot run offline (its agent loop runs on Amp's servers): check that the pinned
//! binary starts, and that without its service it fails fast with a clear message.

use std::time::Duration;

use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::drivers::amp;
use sandbox_testkit::offline::{self, Sandbox};
use sandbox_testkit::provider::FakeProvider;

const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn amp_version() {
    sandbox_testkit::isolate!();
    let Some(exe) = agents::require(Agent::Amp) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::create(dir.path()).unwrap();
    let launch = offline::amp::launch(&exe, &sandbox, None, &["--version"]).unwrap();
    let exit = amp::run(&launch, LIMIT).await.unwrap();
    println!(
        "[smoke] amp --version: {:.2} s: {}",
        exit.elapsed.as_secs_f64(),
        exit.stdout.trim()
    );
    assert_eq!(exit.code, Some(0), "{exit:?}");
    assert!(exit.stdout.starts_with(Agent::Amp.version()), "{exit:?}");
}

#[tokio::test]
async fn amp_fails_fast_without_its_service() {
    sandbox_testkit::isolate!();
    let Some(exe) = agents::require(Agent::Amp) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::create(dir.path()).unwrap();
    let launch =
        offline::amp::launch(&exe, &sandbox, None, &["-x", "say hi", "--stream-json"]).unwrap();
    let exit = amp::run(&launch, LIMIT).await.unwrap();
    println!(
        "[smoke] amp -x without service: {:.2} s: {}",
        exit.elapsed.as_secs_f64(),
        exit.stderr.trim()
    );
    assert_eq!(exit.code, Some(1), "{exit:?}");
    assert!(
        exit.elapsed < Duration::from_secs(20),
        "slow failure: {exit:?}"
    );
    assert!(
        exit.stderr.contains("Couldn't connect to the Amp server"),
        "{exit:?}"
    );
}

#[tokio::test]
async fn amp_pointed_at_the_fake_provider_finds_no_amp_api() {
    sandbox_testkit::isolate!();
    let Some(exe) = agents::require(Agent::Amp) else {
        return;
    };
    let provider = FakeProvider::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::create(dir.path()).unwrap();
    let url = provider.base_url();
    let launch = offline::amp::launch(
        &exe,
        &sandbox,
        Some(&url),
        &["-x", "say hi", "--stream-json"],
    )
    .unwrap();
    let exit = amp::run(&launch, LIMIT).await.unwrap();
    println!(
        "[smoke] amp -x against the fake provider: {:.2} s: {}",
        exit.elapsed.as_secs_f64(),
        exit.stderr.trim()
    );
    assert_eq!(exit.code, Some(1), "{exit:?}");
    assert!(exit.stderr.contains("getUserInfo"), "{exit:?}");
    let paths: Vec<String> = provider.requests().into_iter().map(|r| r.path).collect();
    assert!(
        paths.iter().any(|p| p == "/api/internal?getUserInfo"),
        "{paths:?}"
    );
    assert!(
        provider.model_requests().is_empty(),
        "Amp called a model API: {paths:?}"
    );
}
