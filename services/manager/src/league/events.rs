//! Writing league events into the outbox, in the transaction that makes them true: one
//! `league_events` row per notification and one `event_deliveries` row per recipient (every player of
//! the league). Event delivery delivers them afterwards; a crash can delay them but not lose them.

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{NotifyLeagueEventRequest, RoundAnnouncement, ScheduledMatch};
use prost::Message;
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::queries::scheduled_matches;
use crate::wakeups::Wakeups;

/// Queues `event` for every player of `league_id`.
pub async fn enqueue(
    tx: &mut PgConnection,
    league_id: &str,
    round_id: u32,
    event: Event,
) -> ManagerResult<()> {
    let kind = match &event {
        Event::RoundAnnouncement(_) => "round_announcement",
        Event::StandingsUpdate(_) => "standings_update",
        Event::RoundCompleted(_) => "round_completed",
        Event::LeagueCompleted(_) => "league_completed",
    };
    // Recipient and event id are filled in at delivery: the payload is stored once per event.
    let payload = NotifyLeagueEventRequest {
        player_id: String::new(),
        league_id: league_id.to_owned(),
        event_id: String::new(),
        event: Some(event),
    }
    .encode_to_vec();
    let (event_id,): (i64,) = sqlx::query_as(
        "insert into league_events (league_id, kind, round_id, payload) values ($1, $2, $3, $4) returning event_id",
    )
    .bind(league_id)
    .bind(kind)
    .bind(i32::try_from(round_id).unwrap_or(i32::MAX))
    .bind(payload)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query(
        "insert into event_deliveries (event_id, player_id)
         select $1, player_id from league_players where league_id = $2",
    )
    .bind(event_id)
    .bind(league_id)
    .execute(&mut *tx)
    .await?;
    Wakeups::events_pending_on_commit(tx).await?;
    Ok(())
}

/// ROUND_ANNOUNCEMENT for `round_id`, with its matches.
pub async fn announce_round(tx: &mut PgConnection, league_id: &str, round_id: u32) -> ManagerResult<()> {
    let matches: Vec<ScheduledMatch> = scheduled_matches(&mut *tx, league_id, Some(round_id)).await?;
    enqueue(
        tx,
        league_id,
        round_id,
        Event::RoundAnnouncement(RoundAnnouncement { round_id, matches }),
    )
    .await
}
