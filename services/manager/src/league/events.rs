//! Writing league events into the outbox, in the transaction that makes them true: one
//! `league_events` row per notification and one `event_deliveries` row per recipient (every player of
//! the league). Event delivery delivers them afterwards; a crash can delay them but not lose them.

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{NotifyLeagueEventRequest, RoundAnnouncement, ScheduledMatch};
use prost::Message;
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::queries::scheduled_matches;
use crate::wakeups::EVENTS_PENDING_CHANNEL;

/// Queues `events` (each with its round), in order, for every player of `league_id`, and wakes the
/// event delivery when `tx` commits. One statement, whatever the number of events and players: a
/// round's completion queues three events on the path between two rounds.
pub async fn enqueue(tx: &mut PgConnection, league_id: &str, events: Vec<(u32, Event)>) -> ManagerResult<()> {
    let mut kinds = Vec::with_capacity(events.len());
    let mut rounds = Vec::with_capacity(events.len());
    let mut payloads = Vec::with_capacity(events.len());
    for (round_id, event) in events {
        kinds.push(match &event {
            Event::RoundAnnouncement(_) => "round_announcement",
            Event::StandingsUpdate(_) => "standings_update",
            Event::RoundCompleted(_) => "round_completed",
            Event::LeagueCompleted(_) => "league_completed",
        });
        rounds.push(i32::try_from(round_id).unwrap_or(i32::MAX));
        // Recipient and event id are filled in at delivery: the payload is stored once per event.
        payloads.push(
            NotifyLeagueEventRequest {
                player_id: String::new(),
                league_id: league_id.to_owned(),
                event_id: String::new(),
                event: Some(event),
            }
            .encode_to_vec(),
        );
    }
    // Event ids come from a sequence, taken in the order the rows are inserted: `order by` keeps the
    // events in the order given, which is the order every player receives them in.
    sqlx::query(
        "with queued as (
             insert into league_events (league_id, kind, round_id, payload)
             select $1, e.kind, e.round_id, e.payload
             from unnest($2::text[], $3::int[], $4::bytea[]) with ordinality as e(kind, round_id, payload, n)
             order by e.n
             returning event_id
         ), delivered as (
             insert into event_deliveries (event_id, player_id)
             select q.event_id, p.player_id from queued q, league_players p where p.league_id = $1
         )
         select pg_notify($5, '')",
    )
    .bind(league_id)
    .bind(&kinds)
    .bind(&rounds)
    .bind(&payloads)
    .bind(EVENTS_PENDING_CHANNEL)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// ROUND_ANNOUNCEMENT for `round_id`, with its matches.
pub async fn round_announcement(
    tx: &mut PgConnection,
    league_id: &str,
    round_id: u32,
) -> ManagerResult<Event> {
    let matches: Vec<ScheduledMatch> = scheduled_matches(&mut *tx, league_id, Some(round_id)).await?;
    Ok(Event::RoundAnnouncement(RoundAnnouncement { round_id, matches }))
}
