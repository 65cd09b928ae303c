//! Writing league events into the outbox, in the transaction that makes them true: one
//! `league_events` row per notification, for every player of the league. Event delivery sends a new
//! event to every player at once, off the path between two rounds, then marks it fanned out
//! ([`fan_out`]) and writes a delivery row only for each player it did not reach (waiting): a player of
//! a fanned-out event without a row got it then, at the first attempt (the view
//! `every_event_delivery` spells every pair out). A crash can delay an event but not lose it.

use league_domain::LeagueId;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{NotifyLeagueEventRequest, RoundAnnouncement, ScheduledMatch};
use prost::Message;
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::queries::scheduled_matches;
use crate::wakeups::EVENTS_PENDING_CHANNEL;

/// Events encoded for the outbox, in order: what [`enqueue`] writes, and a round's release with them
/// (crate::league::queue::release_round).
#[derive(Debug)]
pub struct Queued {
    kinds: Vec<&'static str>,
    rounds: Vec<i32>,
    payloads: Vec<Vec<u8>>,
}

impl Queued {
    /// `events` of `league_id`, each with its round.
    pub fn new(league_id: &LeagueId, events: Vec<(u32, Event)>) -> Self {
        let mut queued = Self {
            kinds: Vec::with_capacity(events.len()),
            rounds: Vec::with_capacity(events.len()),
            payloads: Vec::with_capacity(events.len()),
        };
        for (round_id, event) in events {
            queued.kinds.push(match &event {
                Event::RoundAnnouncement(_) => "round_announcement",
                Event::StandingsUpdate(_) => "standings_update",
                Event::RoundCompleted(_) => "round_completed",
                Event::LeagueCompleted(_) => "league_completed",
            });
            queued.rounds.push(i32::try_from(round_id).unwrap_or(i32::MAX));
            // Recipient and event id are filled in at delivery: the payload is stored once per event.
            queued.payloads.push(
                NotifyLeagueEventRequest {
                    player_id: String::new(),
                    league_id: league_id.to_string(),
                    event_id: String::new(),
                    event: Some(event),
                }
                .encode_to_vec(),
            );
        }
        queued
    }

    /// The events' kinds, rounds and payloads, in order: the parameters of a statement's `queued`
    /// part (see [`enqueue`]).
    pub fn columns(&self) -> (&[&'static str], &[i32], &[Vec<u8>]) {
        (&self.kinds, &self.rounds, &self.payloads)
    }
}

/// Queues `events` (each with its round), in order, for every player of `league_id`, and wakes the
/// event delivery when `tx` commits. One statement, whatever the number of events and players. A
/// round's release queues its events itself, in its own statement, with the same `queued` part
/// (crate::league::queue::release_round; keep the two alike).
///
/// The `queued` part inserts the events of league `$1` from the kinds, rounds and payloads given, in
/// order, and wakes event delivery (channel [`EVENTS_PENDING_CHANNEL`]) once the transaction commits.
/// Event ids come from a sequence, taken in the order the rows are inserted: `order by` keeps the
/// events in the order given, which is the order every player receives them in. The NOTIFY is in
/// `returning`, so it runs whether or not the statement reads `queued`; one per row, which Postgres
/// folds into one (same channel and payload, one transaction). Its recipients are written by
/// [`fan_out`].
pub async fn enqueue(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    events: Vec<(u32, Event)>,
) -> ManagerResult<()> {
    let queued = Queued::new(league_id, events);
    let (kinds, rounds, payloads) = queued.columns();
    sqlx::query!(
        "with queued as (
             insert into league_events (league_id, kind, round_id, payload)
             select $1, e.kind, e.round_id, e.payload
             from unnest($2::text[], $3::int[], $4::bytea[]) with ordinality as e(kind, round_id, payload, n)
             order by e.n
             returning pg_notify($5, '')
         )
         -- No columns: the statement is run for what `queued` writes.
         select",
        league_id.as_str(),
        kinds as &[&str],
        rounds,
        payloads,
        EVENTS_PENDING_CHANNEL,
    )
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// (event, player) pairs event delivery has just sent, as the statements bind them.
#[derive(Debug, Default)]
pub struct DeliveredPairs {
    pub events: Vec<i64>,
    pub players: Vec<String>,
}

/// Marks the queued events `event_ids` fanned out and writes their delivery rows, in one statement: a
/// row, waiting, for each player of the event's league that is not in `delivered` (what the caller has
/// just sent); none for those it reached, which the event's `fanned_out_at` then says got it at the first
/// attempt. `skip locked` and `not fanned_out` keep two callers off the same event, so each is fanned out
/// once. Event delivery calls it for the events a batch has just sent. Returns how many events it fanned
/// out. The players of a league are fixed once it has started (enrollment closes at its start), so an
/// event's recipients are the same whenever it is fanned out.
///
/// A row for every pair (delivered ones too) was 600 rows a round at 200 players, nearly all saying
/// "delivered at once" (docs/adr/0037-deliveries-written-for-the-missed.md). Only a fan-out writes an
/// event's rows, in the statement that marks it, so an event this statement marks has none yet: its rows
/// are plain inserts. A pair sent for an event that another caller fanned out meanwhile (possible only
/// while a lost lock changes hands, when both send it) has its row marked delivered if that caller has
/// committed one, waiting, for it (had that caller reached the player, there is no row to mark). If that
/// caller has not committed yet, its waiting row stays waiting and the player gets the event again, with
/// the same `event_id`, which receivers use to ignore it. Such a pair is never inserted here: a row written for an event not marked fanned out (the other caller
/// rolling back) would collide with the rows of the fan-out that marks it later, and event delivery
/// would fail on it for good.
pub async fn fan_out(
    conn: &mut PgConnection,
    event_ids: &[i64],
    delivered: &DeliveredPairs,
) -> ManagerResult<i64> {
    let fanned = sqlx::query_scalar!(
        r#"with fanned as (
             update league_events set fanned_out = true, fanned_out_at = now()
             where event_id in (select event_id from league_events
                                where event_id = any($1) and not fanned_out
                                order by event_id for update skip locked)
             returning event_id, league_id
         ), sent as (
             select * from unnest($2::bigint[], $3::text[]) as s(event_id, player_id)
         ), waiting as (
             insert into event_deliveries (event_id, player_id)
             select f.event_id, p.player_id from fanned f join league_players p using (league_id)
             where not exists (select 1 from sent s where s.event_id = f.event_id and s.player_id = p.player_id)
         ), sent_before as (
             update event_deliveries d
             set delivered_at = coalesce(d.delivered_at, now()), attempts = d.attempts + 1
             from sent s
             where d.event_id = s.event_id and d.player_id = s.player_id
               and s.event_id not in (select event_id from fanned)
         )
         select count(*) as "fanned!" from fanned"#,
        event_ids,
        &delivered.events,
        &delivered.players,
    )
    .fetch_one(conn)
    .await?;
    Ok(fanned)
}

/// ROUND_ANNOUNCEMENT for `round_id`, with its matches.
pub async fn round_announcement(
    tx: &mut PgConnection,
    league_id: &LeagueId,
    round_id: u32,
) -> ManagerResult<Event> {
    let matches: Vec<ScheduledMatch> = scheduled_matches(&mut *tx, league_id, Some(round_id)).await?;
    Ok(Event::RoundAnnouncement(RoundAnnouncement { round_id, matches }))
}
