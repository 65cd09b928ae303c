//! Assignments for the unit tests, made as the worker makes them: parsed from the wire
//! (`Assignment::try_from`), so every test's match has well-formed ids.

#![allow(clippy::expect_used)]

use league_domain::Assignment;
use league_proto::v2::{AssignedPlayer, MatchAssignment, ScheduledMatch};

/// Match `match_id` of league `league_id` between P01 and P02, held under `lease_id`; P01 is served at
/// `endpoint_a`, P02 nowhere.
pub fn assignment(league_id: &str, match_id: &str, lease_id: &str, endpoint_a: &str) -> Assignment {
    let player = |player_id: &str, service_endpoint: &str| AssignedPlayer {
        player_id: player_id.into(),
        service_endpoint: service_endpoint.into(),
        ..AssignedPlayer::default()
    };
    Assignment::try_from(MatchAssignment {
        r#match: Some(ScheduledMatch {
            league_id: league_id.into(),
            round_id: 1,
            match_id: match_id.into(),
            game_type: "even_odd".into(),
            player_a_id: "P01".into(),
            player_b_id: "P02".into(),
            ..ScheduledMatch::default()
        }),
        lease_id: lease_id.into(),
        player_a: Some(player("P01", endpoint_a)),
        player_b: Some(player("P02", "")),
        ..MatchAssignment::default()
    })
    .expect("a complete assignment")
}
