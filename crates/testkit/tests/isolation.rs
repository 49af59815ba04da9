//! The isolation pattern itself: `isolate!()` puts a test in a loopback-only namespace.

use std::net::UdpSocket;

use sandbox_testkit::netns;

/// A UDP `connect` only looks up a route (it sends nothing), so it tells whether any
/// non-loopback route exists without emitting a packet.
fn can_route_to_documentation_address() -> bool {
    let socket = UdpSocket::bind("0.0.0.0:0").expect("udp socket");
    socket.connect("192.0.2.1:9").is_ok()
}

#[test]
fn sync_test_runs_with_only_loopback() {
    sandbox_testkit::isolate!();
    assert!(netns::inside());
    assert_eq!(netns::interfaces().unwrap(), ["lo"]);
    assert!(
        !can_route_to_documentation_address(),
        "a route leaves the namespace"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("loopback works");
    assert!(std::net::TcpStream::connect(listener.local_addr().unwrap()).is_ok());
}

mod nested {
    #[tokio::test]
    async fn async_test_in_a_module_is_isolated_too() {
        sandbox_testkit::isolate!();
        assert!(sandbox_testkit::netns::loopback_only());
        assert_eq!(
            std::process::id(),
            1,
            "the test runs as PID 1 of its own PID namespace"
        );
    }
}

#[test]
fn returning_tests_take_an_early_value() -> Result<(), String> {
    sandbox_testkit::isolate!(Ok(()));
    if netns::loopback_only() {
        Ok(())
    } else {
        Err("not isolated".into())
    }
}
