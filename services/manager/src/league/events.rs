//! Writing league events into the outbox, in the transaction that makes them true: one
//! `league_events` row per notification. Its `event_deliveries` rows, one per recipient (every player
//! of the league), are written afterwards by event delivery ([`fan_out`]), off the path between two
//! rounds: a round's completion queues three events, and at 500 players their 1,500 delivery rows took
//! 3.9 ms of the transaction that releases the next round. Event delivery delivers them; a crash can
//! delay them but not lose them.

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{NotifyLeagueEventRequest, RoundAnnouncement, ScheduledMatch};
use prost::Message;
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::queries::scheduled_matches;
use crate::wakeups::EVENTS_PENDING_CHANNEL;

/// Queues `events` (each with its round), in order, for every player of `league_id`, and wakes the
/// event delivery when `tx` commits. One statement, whatever the number of events and players: a
/// round's completion queues three events on the path between two rounds. Their recipients are
/// written by [`fan_out`].
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

/// The most events one [`fan_out`] statement takes.
const FAN_OUT_EVENTS: i64 = 64;

/// Writes the delivery rows of queued events that have none yet — one per player of the event's
/// league — and marks those events fanned out, in one statement, so each event is fanned out once
/// (`skip locked`: two callers never take the same event). Returns how many events it fanned out; at
/// most [`FAN_OUT_EVENTS`], so the caller repeats while it gets that many. The players of a league are
/// fixed once it has started (enrollment closes at its start), so an event's recipients are the same
/// whenever it is fanned out.
pub async fn fan_out(conn: &mut PgConnection) -> ManagerResult<i64> {
    let (fanned,): (i64,) = sqlx::query_as(
        "with fanned as (
             update league_events set fanned_out = true
             where event_id in (select event_id from league_events where not fanned_out
                                order by event_id limit $1 for update skip locked)
             returning event_id, league_id
         ), delivered as (
             insert into event_deliveries (event_id, player_id)
             select f.event_id, p.player_id from fanned f join league_players p using (league_id)
         )
         select count(*) from fanned",
    )
    .bind(FAN_OUT_EVENTS)
    .fetch_one(conn)
    .await?;
    Ok(fanned)
}

/// [`fan_out`] until no queued event is left without its delivery rows.
pub async fn fan_out_all(conn: &mut PgConnection) -> ManagerResult<()> {
    while fan_out(&mut *conn).await? == FAN_OUT_EVENTS {}
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
