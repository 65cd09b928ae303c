//! The order in which claims take ready matches across leagues: each league's next match first (the
//! lowest match number of its current round), the lowest round among those. A league whose round was
//! just released starts it beside the other leagues' rounds instead of waiting for them to be handed
//! out whole (issue 56: the round gap of leagues played at once).

#![allow(clippy::unwrap_used)]

use crate::support::*;
use league_proto::v2::*;

/// Creates and starts league `league_id` with a player for each of `names`.
async fn started_league(manager: &TestManager, league_id: &str, names: &[&str]) {
    let mut client = manager.client();
    client
        .create_league(manager.operator(CreateLeagueRequest {
            league_id: league_id.to_owned(),
            game_type: "even_odd".into(),
            ..CreateLeagueRequest::default()
        }))
        .await
        .unwrap();
    for name in names {
        client
            .register_player(RegisterPlayerRequest {
                meta: Some(meta(name)),
                league_id: league_id.to_owned(),
            })
            .await
            .unwrap();
    }
    client
        .start_league(manager.operator(StartLeagueRequest {
            league_id: league_id.to_owned(),
        }))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_just_released_round_starts_beside_a_league_behind_it() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    // test_league plays its first round: its second is released.
    let first = claim_round(&mut client, &referee).await;
    assert_eq!(first.len(), 2);
    report_a_wins(&mut client, &referee, &first).await;
    // A league that starts now is a round behind it, with two matches ready in that round.
    started_league(&manager, "behind", &["e", "f", "g", "h"]).await;

    let claimed = claim(&mut client, &referee, 2).await;
    let mut taken: Vec<(String, String)> = claimed
        .iter()
        .map(|assignment| {
            let scheduled = assignment.r#match.as_ref().unwrap();
            (scheduled.league_id.clone(), scheduled.match_id.clone())
        })
        .collect();
    taken.sort();
    // Each league's first match of its current round; not both of the league behind.
    assert_eq!(
        taken,
        [
            ("behind".to_owned(), "R1M1".to_owned()),
            ("test_league".to_owned(), "R2M1".to_owned())
        ]
    );
}
