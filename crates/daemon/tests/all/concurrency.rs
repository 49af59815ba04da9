//! Many sessions at once: no cross-talk, no lost events.

use crate::common;

use common::{TestDaemon, assert_contiguous, skeleton};
use sandbox_universal::EventPayload;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_sessions() {
    let daemon = std::sync::Arc::new(TestDaemon::start().await);
    let runs = (0..50).map(|i| {
        let daemon = daemon.clone();
        tokio::spawn(async move {
            let id = format!("s{i}");
            daemon.mock_session(&id).await;
            daemon
                .client
                .send_message(&id, &format!("tool flood {}", 50 + i))
                .await
                .unwrap();
            let events = daemon.wait_turn_ended(&id, 1).await;
            assert_contiguous(&events, &id);
            let deltas = events
                .iter()
                .filter(|e| matches!(e.payload, EventPayload::ItemDelta(_)))
                .count();
            // tool: one command-output delta; flood: 50+i; echo: at least 3.
            assert!(deltas >= 1 + 50 + i + 3, "{id}: {deltas}");
            skeleton(&events)
        })
    });
    let skeletons: Vec<Vec<String>> = futures::future::join_all(runs)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(
        skeletons.windows(2).all(|w| w[0] == w[1]),
        "every session has the same shape"
    );
    assert_eq!(
        daemon
            .client
            .list_sessions(&Default::default())
            .await
            .unwrap()
            .sessions
            .len(),
        50
    );
}
