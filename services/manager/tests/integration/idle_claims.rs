//! Referees waiting for work on an idle league cost (almost) nothing: a waiting claim looks for matches
//! when it starts, on a wake-up, when a running lease expires, and at the end of its wait — not on a
//! timer. Counted with the manager's `league_manager_claim_looks` counter, a process-wide count: the test
//! runs alone in a process of its own (`league_testkit::alone`), so no other test adds to it.

use std::time::Duration;

use futures::future::join_all;
use league_manager::metrics::CLAIM_LOOKS;
use league_proto::v2::{AgentMeta, ClaimMatchesRequest, RegisterRefereeRequest};
use league_runtime::Credentials;

#[test]
fn waiting_claims_on_an_idle_league_do_not_poll() {
    league_testkit::alone::in_a_process_of_its_own(
        "idle_claims::waiting_claims_on_an_idle_league_do_not_poll_alone",
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "reads a process-wide counter: run alone by waiting_claims_on_an_idle_league_do_not_poll"]
async fn waiting_claims_on_an_idle_league_do_not_poll_alone() {
    let manager = league_testkit::spawn_manager("league_idle", "idle_league", |_| {}).await;
    let mut client = manager.client();
    const REFEREES: usize = 40;
    let mut referees = Vec::with_capacity(REFEREES);
    for n in 0..REFEREES {
        let registered = client
            .register_referee(RegisterRefereeRequest {
                meta: Some(AgentMeta {
                    display_name: format!("idle-{n}"),
                    version: "1.0.0".into(),
                    game_types: vec!["even_odd".into()],
                    contact_endpoint: format!("http://127.0.0.1:9/idle-{n}"),
                    service_endpoint: "http://127.0.0.1:9".into(),
                    ..AgentMeta::default()
                }),
                max_concurrent_matches: 4,
            })
            .await
            .expect("referee registers")
            .into_inner();
        referees.push(Credentials::new(registered.referee_id, registered.auth_token));
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
