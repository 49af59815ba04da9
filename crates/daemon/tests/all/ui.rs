//! The inspector at `/ui`: its pages and files served from the binary without a token
//! (the API still wants one), their headers and revalidation, and under `--no-token` the
//! pages' own origin allowed to call the API while other origins and hosts are refused.

use crate::common;

use reqwest::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, HOST, IF_NONE_MATCH, LOCATION,
    ORIGIN, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use reqwest::{Method, Response, StatusCode};

use common::{Options, TestDaemon, assert_problem};

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// A built file of the web app, as committed in `ui/dist/`.
fn dist(file: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/dist/");
    std::fs::read(format!("{path}{file}")).unwrap()
}

/// A client that shows redirects instead of following them.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn header<'a>(response: &'a Response, name: &reqwest::header::HeaderName) -> &'a str {
    response
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("{name} on {}", response.url()))
        .to_str()
        .unwrap()
}

/// Asserts the headers every UI answer carries.
fn assert_protected(response: &Response) {
    assert_eq!(header(response, &CONTENT_SECURITY_POLICY), CSP);
    assert_eq!(header(response, &X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert_eq!(header(response, &REFERRER_POLICY), "no-referrer");
    assert_eq!(header(response, &CACHE_CONTROL), "no-cache");
}

#[tokio::test]
async fn the_pages_need_no_token_but_the_api_does() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("ui-secret".into()),
        ..Options::default()
    })
    .await;
    let url = daemon.url();
    let index = dist("index.html");
    for path in ["/ui/", "/ui/sessions/x", "/ui/agents", "/ui/assets"] {
        let response = browser().get(format!("{url}{path}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_protected(&response);
        assert_eq!(header(&response, &CONTENT_TYPE), "text/html; charset=utf-8");
        let etag = header(&response, &ETAG).to_string();
        assert!(etag.len() == 66 && etag.starts_with('"'), "{etag}");
        assert_eq!(response.bytes().await.unwrap(), index, "{path}");
    }
    let response = browser().get(format!("{url}/ui")).send().await.unwrap();
    assert!(response.status().is_redirection(), "{}", response.status());
    assert_eq!(header(&response, &LOCATION), "/ui/");

    // The API, and anything but reading the pages, still needs the token.
    for path in ["/sessions", "/uix"] {
        let refused = common::raw(Method::GET, &format!("{url}{path}"), None, None, None).await;
        assert_problem(&refused, 401, "unauthorized");
    }
    let post = common::raw(Method::POST, &format!("{url}/ui/"), None, None, None).await;
    assert_problem(&post, 401, "unauthorized");
    let with_token = common::raw(
        Method::GET,
        &format!("{url}/sessions"),
        Some("ui-secret"),
        None,
        None,
    )
    .await;
    assert_eq!(with_token.0, 200);
}

#[tokio::test]
async fn files_have_their_types_and_revalidate() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("ui-secret".into()),
        ..Options::default()
    })
    .await;
    let url = daemon.url();
    for (file, content_type) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("app.css", "text/css; charset=utf-8"),
        ("favicon.svg", "image/svg+xml"),
    ] {
        let address = format!("{url}/ui/assets/{file}");
        let response = browser().get(&address).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{file}");
        assert_protected(&response);
        assert_eq!(header(&response, &CONTENT_TYPE), content_type);
        let etag = header(&response, &ETAG).to_string();
        let body = response.bytes().await.unwrap();
        let want = dist(file);
        // Not assert_eq!: a failure would print the whole bundle.
        assert!(
            body == want,
            "{file}: served {} bytes that differ from ui/dist's {} (rebuild the daemon after `npm run build`)",
            body.len(),
            want.len()
        );

        // A browser's revalidation: 304, no body, the same tag.
        let response = browser()
            .get(&address)
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED, "{file}");
        assert_protected(&response);
        assert_eq!(header(&response, &ETAG), etag);
        assert!(response.bytes().await.unwrap().is_empty());
        // A stale tag gets the file.
        let response = browser()
            .get(&address)
            .header(IF_NONE_MATCH, "\"stale\"")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{file}");

        // HEAD: the headers without the body.
        let response = browser().head(&address).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{file}");
        assert_eq!(header(&response, &CONTENT_TYPE), content_type);
        assert_eq!(header(&response, &ETAG), etag);
        assert!(response.bytes().await.unwrap().is_empty());
    }
    // Another file under /ui/assets/ is a 404 problem (no index in its place), token or not.
    for path in [
        "/ui/assets/missing.js",
        "/ui/assets/",
        "/ui/assets/app.js/x",
    ] {
        let response = browser().get(format!("{url}{path}")).send().await.unwrap();
        assert_protected(&response);
        let missing = common::raw(Method::GET, &format!("{url}{path}"), None, None, None).await;
        assert_problem(&missing, 404, "not-found");
    }
}

#[tokio::test]
async fn without_a_token_the_pages_own_origin_may_call_the_api() {
    let daemon = TestDaemon::start().await;
    daemon.mock_session("s").await;
    let url = daemon.url();
    let own = url.clone();
    let end = |origin: &str| {
        browser()
            .post(format!("{url}/sessions/s/end"))
            .header(ORIGIN, origin)
            .header(CONTENT_TYPE, "application/json")
            .send()
    };
    // The inspector's own fetches carry the daemon's origin.
    let response = end(&own).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // Any other page, even another port of this machine, is refused.
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    for origin in [
        "http://evil.example".to_string(),
        format!("http://127.0.0.1:{}", port.wrapping_add(1)),
        format!("http://localhost:{port}"),
        "null".to_string(),
    ] {
        let response = end(&origin).await.unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{origin}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["type"], "urn:sandbox-daemon:problem:forbidden-origin");
    }
    // A rebinding page can load the pages no more than it can call the API.
    for path in ["/ui/", "/ui/assets/app.js"] {
        let response = browser()
            .get(format!("{url}{path}"))
            .header(HOST, format!("evil.example:{port}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["type"], "urn:sandbox-daemon:problem:forbidden-host");
    }
    let response = browser().get(format!("{url}/ui/")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}
