//! Referees waiting for work on an idle league cost (almost) nothing: a waiting claim looks for matches
//! when it starts, on a wake-up, when a running lease expires, and at the end of its wait — not on a
//! timer. Counted with the manager's `league_manager_claim_looks` counter (alone in this test binary,
//! so no other test adds to it).

mod support;

use std::time::Duration;

use futures::future::join_all;
use league_manager::metrics::CLAIM_LOOKS;
use league_proto::v2::ClaimMatchesRequest;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn waiting_claims_on_an_idle_league_do_not_poll() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    const REFEREES: usize = 40;
    let mut referees = Vec::with_capacity(REFEREES);
    for n in 0..REFEREES {
        referees.push(register_referee(&mut client, &format!("idle-{n}")).await);
    }
    let before = CLAIM_LOOKS.get();
    let claims = referees.iter().map(|referee| {
        let mut client = manager.client();
        let request = referee.request(ClaimMatchesRequest {
            max_matches: 1,
            wait: prost_types::Duration::try_from(Duration::from_secs(3)).ok(),
        });
        async move { client.claim_matches(request).await }
    });
    for claimed in join_all(claims).await {
        assert!(
            claimed
                .expect("claim answered")
                .into_inner()
                .assignments
                .is_empty()
        );
    }
    let looks = CLAIM_LOOKS.get() - before;
    // One look when a claim starts and one when its wait ends; a 250 ms timer would make 12 or more.
    assert!(
        looks <= 2 * REFEREES as u64,
        "{looks} looks for {REFEREES} claims waiting 3 s on an idle league"
    );
}
