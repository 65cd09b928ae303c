//! Event delivery (the outbox's other half): delivers queued league events to players through
//! `PlayerService`, in order per recipient, and records each delivery. A new event goes straight to
//! every player with nothing waiting; then it is marked fanned out, with a delivery row, waiting, only
//! for each player it did not reach, who gets it after what it already waits for (docs/adr/0029 and
//! 0037). One manager's event delivery is active per database (a Postgres advisory lock), so several
//! managers never deliver the same event twice at the same time. A crash between delivering and recording means the event is delivered again after
//! restart with the same `event_id`, which receivers use to ignore it; nothing is lost.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{LeagueEventDelivery, NotifyLeagueEventRequest, NotifyLeagueEventsRequest};
use league_runtime::ShutdownSignal;
use league_runtime::grpc::GrpcChannel;
use prost::Message;
use sqlx::pool::PoolConnection;
use sqlx::postgres::Postgres;
use sqlx::{Connection, PgConnection, PgPool};

use crate::league::events::{self, DeliveredPairs};
use crate::wakeups::Wakeups;

/// Advisory lock key of the one active event delivery ("league outbox"). Public for tests that hold it to
/// keep notifications waiting.
pub const EVENT_DELIVERY_LOCK: i64 = 0x6c65_6167_7565_6f62;
const BATCH: i64 = 1000;
/// The most new events a batch sends (each to every player of its league).
const NEW_EVENTS: i64 = 64;
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// After this many failed attempts a delivery is given up (and stays visible in the table).
const MAX_ATTEMPTS: i32 = 8;
/// Calls to player hosts in flight at once.
const PARALLEL_CALLS: usize = 16;
/// Events per call, by their encoded size: well under gRPC's 4 MB message limit, whatever the number of
/// players (a standings table is about 38 bytes a player: 7.6 KB at 200, measured in league_events).
const CALL_BYTES: usize = 1 << 20;

#[derive(Debug)]
pub struct EventDelivery {
    pool: PgPool,
    /// Where the lock's connection comes from (db::connect_held): it is held for as long as this
    /// event delivery is the active one.
    held: PgPool,
    wakeups: Arc<Wakeups>,
    channels: HashMap<String, GrpcChannel>,
}

/// One event of a batch with its recipients (in player order) and where each is served.
struct QueuedEvent {
    event_id: i64,
    payload: Vec<u8>,
    players: Vec<String>,
    endpoints: Vec<String>,
    attempts: Vec<i32>,
}

/// One recipient of one event.
struct Pending {
    event_id: i64,
    player_id: String,
    attempts: i32,
}

impl EventDelivery {
    pub fn new(pool: PgPool, held: PgPool, wakeups: Arc<Wakeups>) -> Self {
        Self {
            pool,
            held,
            wakeups,
            channels: HashMap::new(),
        }
    }

    pub async fn run(mut self, shutdown: ShutdownSignal) {
        let stop = shutdown.clone().wait();
        tokio::pin!(stop);
        // Held for as long as this event delivery is the active one; dropping it releases the lock.
        let mut active_lock: Option<PoolConnection<Postgres>> = None;
        let wakeups = self.wakeups.clone();
        loop {
            let notified = wakeups.events_pending.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let mut more = false;
            if let Some(conn) = active_lock.as_mut() {
                // A session advisory lock lives as long as its connection. After a database restart or
                // a broken connection the lock is gone — and another manager's event delivery may hold it
                // now — yet without this check this one went on delivering as if it were still the only
                // one. Make sure the connection (hence the lock) is still there before each batch.
                if let Err(error) = conn.ping().await {
                    tracing::warn!(%error, "event delivery lost its lock's connection; taking the lock again");
                    conn.close_on_drop();
                    active_lock = None;
                }
            }
            if active_lock.is_none() {
                active_lock = self.try_lock().await;
            }
            if active_lock.is_some() {
                match self.deliver_batch().await {
                    Ok(full) => more = full,
                    Err(error) => tracing::warn!(%error, "outbox delivery failed; retrying"),
                }
            }
            if more {
                continue;
            }
            tokio::select! {
                _ = &mut stop => return,
                _ = notified => {}
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
        }
    }

    /// The connection holding the event-delivery lock, if this one got it. Another manager's event
    /// delivery holding it is normal (this one stands by); a failure is logged, never swallowed.
    async fn try_lock(&self) -> Option<PoolConnection<Postgres>> {
        let attempt = async {
            let mut conn = self.held.acquire().await?;
            let locked = sqlx::query_scalar!(
                r#"select pg_try_advisory_lock($1) as "locked!""#,
                EVENT_DELIVERY_LOCK
            )
            .fetch_one(&mut *conn)
            .await?;
            Ok::<_, sqlx::Error>(locked.then_some(conn))
        };
        match attempt.await {
            Ok(lock) => lock,
            Err(error) => {
                tracing::warn!(%error, "cannot take the event-delivery lock; retrying");
                None
            }
        }
    }

    /// Delivers one batch: first the deliveries waiting for another attempt, then the events queued
    /// since the last batch. Returns whether either was full (more may be waiting).
    async fn deliver_batch(&mut self) -> anyhow::Result<bool> {
        let waiting = self.deliver_waiting().await?;
        let fresh = self.deliver_fresh().await?;
        Ok(waiting || fresh)
    }

    /// Delivers the deliveries that wait for another attempt (a player that could not be reached, or
    /// that had deliveries waiting when a newer event was sent) and marks them delivered. Returns
    /// whether the batch was full.
    async fn deliver_waiting(&mut self) -> anyhow::Result<bool> {
        // The batch is chosen from the deliveries alone, walking the pending ones in order
        // (event_deliveries_pending) until the limit, and only then joined: the cost is the batch's, not
        // the backlog's (migrations/20261125000003_event_delivery_backlog.sql). Each event comes once
        // with its recipients: a standings table is read, decoded and sent once per player host, not
        // once per player (at 200 players that was 600 copies of a 7.6 KB table a round).
        let rows = sqlx::query_as!(
            QueuedEvent,
            r#"with blocked as (
                 -- In order per recipient: a player with a delivery waiting for its retry gets nothing
                 -- newer until then (a failure pushes back all of that player's pending deliveries, so
                 -- every pending delivery of a player not blocked is due).
                 select distinct player_id from event_deliveries
                 where delivered_at is null and gave_up_at is null and next_attempt_at > now()
             ),
             batch as (
                 select event_id, player_id, attempts from event_deliveries
                 where delivered_at is null and gave_up_at is null
                   and player_id not in (select player_id from blocked)
                 order by event_id, player_id
                 limit $1
             ),
             recipients as (
                 select b.event_id, array_agg(b.player_id order by b.player_id) as players,
                        array_agg(a.service_endpoint order by b.player_id) as endpoints,
                        array_agg(b.attempts order by b.player_id) as attempts
                 from batch b join agents a on a.agent_id = b.player_id
                 group by b.event_id
             )
             select r.event_id, e.payload, r.players as "players!", r.endpoints as "endpoints!",
                    r.attempts as "attempts!"
             from recipients r join league_events e on e.event_id = r.event_id
             order by r.event_id"#,
            BATCH
        )
        .fetch_all(&self.pool)
        .await?;
        if rows.is_empty() {
            return Ok(false);
        }
        let full = rows.iter().map(|row| row.players.len() as i64).sum::<i64>() == BATCH;
        let (delivered, failed) = self.send(rows).await?;
        // Lock order (docs/subsystems/lock-order.md): event_deliveries in key order, then the counts.
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "update event_deliveries d set delivered_at = now(), attempts = d.attempts + 1
             from unnest($1::bigint[], $2::text[]) as r(event_id, player_id)
             where d.event_id = r.event_id and d.player_id = r.player_id",
            &delivered.events,
            &delivered.players,
        )
        .execute(&mut *tx)
        .await?;
        count_delivered(&mut tx, &delivered.events).await?;
        tx.commit().await?;
        for failed in failed {
            self.record_failure(failed).await?;
        }
        Ok(full)
    }

    /// Delivers the events queued since the last batch (up to [`NEW_EVENTS`]), each straight
    /// to every player of its league that has no delivery waiting, then marks them fanned out in one
    /// transaction, with a delivery row, waiting, for each player not reached (events::fan_out), whom
    /// [`Self::deliver_waiting`] serves in order. A player reached gets no row: at 200 players a round's
    /// 600 deliveries were 600 rows written waiting and 600 rewritten delivered, then 600 written
    /// delivered, and now, when every player takes them, none.
    /// Returns whether the batch was full.
    async fn deliver_fresh(&mut self) -> anyhow::Result<bool> {
        let rows = sqlx::query_as!(
            QueuedEvent,
            r#"with fresh as materialized (
                 select event_id, league_id, payload from league_events
                 where not fanned_out order by event_id limit $1
             ), behind as materialized (
                 -- Players with deliveries waiting: this event waits behind them (fan_out writes it).
                 select distinct player_id from event_deliveries
                 where delivered_at is null and gave_up_at is null
             ), recipients as (
                 -- Once per league, not once per event: a round's three events have the same players
                 -- (at 500 players, aggregating them for each event was 2 ms a batch).
                 select p.league_id, array_agg(p.player_id order by p.player_id) as players,
                        array_agg(a.service_endpoint order by p.player_id) as endpoints,
                        array_agg(0 order by p.player_id) as attempts
                 from league_players p join agents a on a.agent_id = p.player_id
                 where p.league_id in (select league_id from fresh)
                   and p.player_id not in (select player_id from behind)
                 group by p.league_id
             )
             select f.event_id as "event_id!", f.payload as "payload!",
                    coalesce(r.players, '{}') as "players!", coalesce(r.endpoints, '{}') as "endpoints!",
                    coalesce(r.attempts, '{}') as "attempts!"
             from fresh f left join recipients r using (league_id)
             order by f.event_id"#,
            NEW_EVENTS
        )
        .fetch_all(&self.pool)
        .await?;
        if rows.is_empty() {
            return Ok(false);
        }
        let full = rows.len() as i64 == NEW_EVENTS;
        let event_ids: Vec<i64> = rows.iter().map(|row| row.event_id).collect();
        let (delivered, failed) = self.send(rows).await?;
        // Lock order (docs/subsystems/lock-order.md): league_events (skip locked), event_deliveries, then the
        // counts.
        let mut tx = self.pool.begin().await?;
        events::fan_out(&mut tx, &event_ids, &delivered).await?;
        count_delivered(&mut tx, &delivered.events).await?;
        tx.commit().await?;
        for failed in failed {
            self.record_failure(failed).await?;
        }
        Ok(full)
    }

    /// Sends `rows` (events with their recipients) to the player hosts, one call after another per
    /// host and hosts side by side. Returns the (event, player) pairs delivered, and for each player
    /// whose delivery failed its first failed event and why.
    async fn send(&mut self, rows: Vec<QueuedEvent>) -> anyhow::Result<(DeliveredPairs, Failed)> {
        let (by_host, undecodable) = by_host(rows);
        let mut work = Vec::new();
        for (endpoint, deliveries) in by_host {
            let channel = match self.channels.get(&endpoint) {
                Some(channel) => channel.clone(),
                None => {
                    let channel = league_runtime::grpc::channel(&endpoint)?;
                    self.channels.insert(endpoint.clone(), channel.clone());
                    channel
                }
            };
            work.push(deliver_to_host(PlayerServiceClient::new(channel), deliveries));
        }
        let outcomes: Vec<Delivered> = futures::stream::iter(work)
            .buffer_unordered(PARALLEL_CALLS)
            .collect()
            .await;
        let mut pairs = Vec::new();
        let mut failed = undecodable;
        for (sent, failures) in outcomes {
            pairs.extend(sent);
            failed.extend(failures);
        }
        // In key order: the statements that mark them lock their delivery rows in the order given
        // (docs/subsystems/lock-order.md).
        pairs.sort_unstable();
        let mut delivered = DeliveredPairs::default();
        for (event_id, player_id) in pairs {
            delivered.events.push(event_id);
            delivered.players.push(player_id);
        }
        Ok((delivered, failed))
    }

    /// Pushes back this recipient's undelivered events together, so they stay in order.
    async fn record_failure(&self, (pending, error): (Pending, String)) -> anyhow::Result<()> {
        let attempts = pending.attempts + 1;
        let backoff_ms = 100_i64 << attempts.min(10);
        tracing::warn!(player_id = %pending.player_id, event_id = pending.event_id, attempts, %error,
            "league notification not delivered");
        sqlx::query!(
            "update event_deliveries set attempts = attempts + (event_id = $2)::int, last_error = $3,
                 next_attempt_at = now() + $4::bigint * interval '1 millisecond',
                 gave_up_at = case when event_id = $2 and $5 then now() end
             where player_id = $1 and delivered_at is null and gave_up_at is null",
            pending.player_id,
            pending.event_id,
            error,
            backoff_ms,
            attempts >= MAX_ATTEMPTS,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// Adds the deliveries of `events` (one entry per delivery) to their leagues' counts, so status
/// queries need not count the delivery rows. Counted here per event first: a batch delivers a few
/// events to many players, and joining each delivery to its event took an index probe per delivery
/// (2,000 buffers a batch with ten leagues at once), where a probe per event does.
///
/// Lock order (docs/subsystems/lock-order.md): the counts are last, in league order, and in a table
/// only event delivery writes. On the league's row they deadlocked with a round's release, which
/// updates that row in the middle of its own transaction (issue 56).
async fn count_delivered(tx: &mut PgConnection, events: &[i64]) -> anyhow::Result<()> {
    let mut per_event: BTreeMap<i64, i64> = BTreeMap::new();
    for &event_id in events {
        *per_event.entry(event_id).or_default() += 1;
    }
    let (event_ids, counts): (Vec<i64>, Vec<i64>) = per_event.into_iter().unzip();
    sqlx::query!(
        "insert into league_notification_counts as n (league_id, delivered)
         select e.league_id, sum(r.delivered)::bigint
         from unnest($1::bigint[], $2::bigint[]) as r(event_id, delivered)
         join league_events e using (event_id)
         group by e.league_id
         order by e.league_id
         on conflict (league_id) do update set delivered = n.delivered + excluded.delivered",
        &event_ids,
        &counts,
    )
    .execute(tx)
    .await?;
    Ok(())
}

/// A batch's events by player host, each event decoded once, with its event id, for its recipients
/// there; and the recipients of any event whose payload does not decode, each with why. One call per
/// player host (and per CALL_BYTES of events): a round's notifications to 50 bots on one host are one
/// call, not 150. Events stay in order, so each player's events stay in order, and a player whose
/// event cannot be sent gets none of its later ones in the batch.
fn by_host(rows: Vec<QueuedEvent>) -> (HashMap<String, Vec<HostDelivery>>, Failed) {
    let mut by_host: HashMap<String, Vec<HostDelivery>> = HashMap::new();
    let mut undecodable = Vec::new();
    let mut unsent: HashSet<String> = HashSet::new();
    for QueuedEvent {
        event_id,
        payload,
        players,
        endpoints,
        attempts,
    } in rows
    {
        let recipients = (players.into_iter().zip(endpoints).zip(attempts))
            .filter(|((player_id, _), _)| !unsent.contains(player_id))
            .map(|((player_id, endpoint), attempts)| {
                let pending = Pending {
                    event_id,
                    player_id,
                    attempts,
                };
                (endpoint, pending)
            })
            .collect::<Vec<_>>();
        let mut event = match NotifyLeagueEventRequest::decode(payload.as_slice()) {
            Ok(event) => event,
            Err(error) => {
                let error = format!("payload does not decode: {error}");
                for (_, pending) in recipients {
                    unsent.insert(pending.player_id.clone());
                    undecodable.push((pending, error.clone()));
                }
                continue;
            }
        };
        event.event_id = format!("{}/{}", event.league_id, event_id);
        let mut hosts: Vec<(String, Vec<Pending>)> = Vec::new();
        for (endpoint, pending) in recipients {
            match hosts.iter_mut().find(|(host, _)| *host == endpoint) {
                Some((_, on_host)) => on_host.push(pending),
                None => hosts.push((endpoint, vec![pending])),
            }
        }
        for (endpoint, recipients) in hosts {
            by_host.entry(endpoint).or_default().push(HostDelivery {
                event: event.clone(),
                recipients,
            });
        }
    }
    (by_host, undecodable)
}

/// What one call's deliveries came to: the (event, player) pairs delivered, and for each player whose
/// delivery failed, its first failed event and why.
type Delivered = (Vec<(i64, String)>, Failed);

/// Recipients whose delivery failed, each with its first failed event and why.
type Failed = Vec<(Pending, String)>;

/// One event for its recipients on one player host; `event` has its event id, and no recipient.
struct HostDelivery {
    event: NotifyLeagueEventRequest,
    recipients: Vec<Pending>,
}

/// Delivers events to one player host, at most `CALL_BYTES` of events per call (at least one), one
/// call after another so that each player's events arrive in order; once a player's event fails, its
/// later events stay for the redelivery.
async fn deliver_to_host(
    mut client: PlayerServiceClient<GrpcChannel>,
    deliveries: Vec<HostDelivery>,
) -> Delivered {
    let mut delivered = Vec::new();
    let mut failed: Vec<(Pending, String)> = Vec::new();
    let has_failed = |failed: &[(Pending, String)], player_id: &str| {
        failed.iter().any(|(first, _)| first.player_id == player_id)
    };
    let mut deliveries = deliveries.into_iter().peekable();
    while deliveries.peek().is_some() {
        let mut request = NotifyLeagueEventsRequest::default();
        let mut sent = Vec::new();
        let mut bytes = 0;
        while let Some(next) = deliveries.peek() {
            let size = next.event.encoded_len();
            if !request.deliveries.is_empty() && bytes + size > CALL_BYTES {
                break;
            }
            let Some(HostDelivery { event, recipients }) = deliveries.next() else {
                break;
            };
            let recipients: Vec<Pending> = recipients
                .into_iter()
                .filter(|pending| !has_failed(&failed, &pending.player_id))
                .collect();
            if recipients.is_empty() {
                continue;
            }
            bytes += size;
            request.deliveries.push(LeagueEventDelivery {
                event: Some(event),
                player_ids: recipients
                    .iter()
                    .map(|pending| pending.player_id.clone())
                    .collect(),
            });
            sent.extend(recipients);
        }
        if sent.is_empty() {
            continue;
        }
        let mut call = tonic::Request::new(request);
        call.set_timeout(DELIVERY_TIMEOUT);
        let (accepted, reason) = match client.notify_league_events(call).await {
            Ok(response) => (
                response.into_inner().accepted,
                "not taken by the player host".to_owned(),
            ),
            Err(status) => (Vec::new(), status.message().to_owned()),
        };
        for (index, item) in sent.into_iter().enumerate() {
            if accepted.get(index).copied().unwrap_or(false) {
                delivered.push((item.event_id, item.player_id));
            } else if !has_failed(&failed, &item.player_id) {
                failed.push((item, reason.clone()));
            }
        }
    }
    (delivered, failed)
}

#[cfg(test)]
mod tests;
