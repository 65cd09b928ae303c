//! Event delivery (the outbox's other half): delivers queued league events to players through
//! `PlayerService`, in order per recipient, and marks them delivered. One manager's event delivery is
//! active per database (a Postgres
//! advisory lock), so several managers never deliver the same event twice at the same time. A crash
//! between delivering and marking means the event is delivered again after restart with the same
//! `event_id`, which receivers use to ignore it; nothing is lost.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{NotifyLeagueEventRequest, NotifyLeagueEventsRequest};
use league_runtime::ShutdownSignal;
use league_runtime::grpc::GrpcChannel;
use prost::Message;
use sqlx::pool::PoolConnection;
use sqlx::postgres::Postgres;
use sqlx::{Connection, PgPool};

use crate::wakeups::Wakeups;

/// Advisory lock key of the one active event delivery ("league outbox"). Public for tests that hold it to
/// keep notifications waiting.
pub const EVENT_DELIVERY_LOCK: i64 = 0x6c65_6167_7565_6f62;
const BATCH: i64 = 1000;
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// After this many failed attempts a delivery is given up (and stays visible in the table).
const MAX_ATTEMPTS: i32 = 8;
/// Calls to player hosts in flight at once.
const PARALLEL_CALLS: usize = 16;
/// Notifications per call (each carries at most one standings table; this keeps calls well under
/// gRPC's 4 MB message limit even with hundreds of players).
const CHUNK: usize = 100;

#[derive(Debug)]
pub struct EventDelivery {
    pool: PgPool,
    wakeups: Arc<Wakeups>,
    channels: HashMap<String, GrpcChannel>,
}

struct Pending {
    event_id: i64,
    player_id: String,
    payload: Vec<u8>,
    attempts: i32,
}

impl EventDelivery {
    pub fn new(pool: PgPool, wakeups: Arc<Wakeups>) -> Self {
        Self {
            pool,
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
            let mut conn = self.pool.acquire().await?;
            let (locked,): (bool,) = sqlx::query_as("select pg_try_advisory_lock($1)")
                .bind(EVENT_DELIVERY_LOCK)
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

    /// Delivers one batch; returns whether the batch was full (more may be waiting).
    async fn deliver_batch(&mut self) -> anyhow::Result<bool> {
        // The batch is chosen from the deliveries alone, walking the pending ones in order
        // (event_deliveries_pending) until the limit, and only then joined: the cost is the batch's, not
        // the backlog's (migrations/20261125000003_event_delivery_backlog.sql).
        let rows: Vec<(i64, String, String, Vec<u8>, i32)> = sqlx::query_as(
            "with blocked as (
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
             )
             select b.event_id, b.player_id, a.service_endpoint, e.payload, b.attempts
             from batch b
             join league_events e on e.event_id = b.event_id
             join agents a on a.agent_id = b.player_id
             order by b.event_id, b.player_id",
        )
        .bind(BATCH)
        .fetch_all(&self.pool)
        .await?;
        let full = rows.len() as i64 == BATCH;
        // One call per player host (and per chunk): a round's notifications to 50 bots on one host are
        // one or two calls, not 150. Rows stay in event order, so each player's events stay in order.
        let mut by_host: HashMap<String, Vec<Pending>> = HashMap::new();
        for (event_id, player_id, endpoint, payload, attempts) in rows {
            by_host.entry(endpoint).or_default().push(Pending {
                event_id,
                player_id,
                payload,
                attempts,
            });
        }
        let mut work = Vec::new();
        for (endpoint, pending) in by_host {
            let channel = match self.channels.get(&endpoint) {
                Some(channel) => channel.clone(),
                None => {
                    let channel = league_runtime::grpc::channel(&endpoint)?;
                    self.channels.insert(endpoint.clone(), channel.clone());
                    channel
                }
            };
            work.push(deliver_to_host(PlayerServiceClient::new(channel), pending));
        }
        let outcomes: Vec<Delivered> = futures::stream::iter(work)
            .buffer_unordered(PARALLEL_CALLS)
            .collect()
            .await;

        let (mut events, mut players) = (Vec::new(), Vec::new());
        for (delivered, _) in &outcomes {
            for (event_id, player_id) in delivered {
                events.push(*event_id);
                players.push(player_id.clone());
            }
        }
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "update event_deliveries d set delivered_at = now(), attempts = d.attempts + 1
             from unnest($1::bigint[], $2::text[]) as r(event_id, player_id)
             where d.event_id = r.event_id and d.player_id = r.player_id",
        )
        .bind(&events)
        .bind(&players)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "update leagues l set notifications_delivered = l.notifications_delivered + c.delivered
             from (select e.league_id, count(*) as delivered
                   from unnest($1::bigint[]) as r(event_id) join league_events e using (event_id)
                   group by e.league_id) c
             where l.league_id = c.league_id",
        )
        .bind(&events)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        for failed in outcomes.into_iter().flat_map(|(_, failed)| failed) {
            self.record_failure(failed).await?;
        }
        Ok(full)
    }

    /// Pushes back this recipient's undelivered events together, so they stay in order.
    async fn record_failure(&self, (pending, error): (Pending, String)) -> anyhow::Result<()> {
        let attempts = pending.attempts + 1;
        let backoff_ms = 100_i64 << attempts.min(10);
        tracing::warn!(player_id = %pending.player_id, event_id = pending.event_id, attempts, %error,
            "league notification not delivered");
        sqlx::query(
            "update event_deliveries set attempts = attempts + (event_id = $2)::int, last_error = $3,
                 next_attempt_at = now() + $4 * interval '1 millisecond',
                 gave_up_at = case when event_id = $2 and $5 then now() end
             where player_id = $1 and delivered_at is null and gave_up_at is null",
        )
        .bind(&pending.player_id)
        .bind(pending.event_id)
        .bind(&error)
        .bind(backoff_ms)
        .bind(attempts >= MAX_ATTEMPTS)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// What one call's deliveries came to: the (event, player) pairs delivered, and for each player whose
/// delivery failed, its first failed event and why.
type Delivered = (Vec<(i64, String)>, Vec<(Pending, String)>);

/// Delivers events to one player host, `CHUNK` per call, one call after another so that each player's
/// events arrive in order; once a player's event fails, its later events stay for the redelivery.
async fn deliver_to_host(mut client: PlayerServiceClient<GrpcChannel>, pending: Vec<Pending>) -> Delivered {
    let mut delivered = Vec::with_capacity(pending.len());
    let mut failed: Vec<(Pending, String)> = Vec::new();
    let has_failed = |failed: &[(Pending, String)], player_id: &str| {
        failed.iter().any(|(first, _)| first.player_id == player_id)
    };
    let mut pending = pending.into_iter().peekable();
    while pending.peek().is_some() {
        let mut events = Vec::with_capacity(CHUNK);
        let mut sent = Vec::with_capacity(CHUNK);
        while events.len() < CHUNK {
            let Some(item) = pending.next() else { break };
            if has_failed(&failed, &item.player_id) {
                continue;
            }
            match NotifyLeagueEventRequest::decode(item.payload.as_slice()) {
                Ok(mut request) => {
                    request.player_id = item.player_id.clone();
                    request.event_id = format!("{}/{}", request.league_id, item.event_id);
                    events.push(request);
                    sent.push(item);
                }
                Err(error) => failed.push((item, format!("payload does not decode: {error}"))),
            }
        }
        if events.is_empty() {
            continue;
        }
        let mut call = tonic::Request::new(NotifyLeagueEventsRequest { events });
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
