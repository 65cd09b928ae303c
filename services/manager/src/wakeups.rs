//! Waking whoever waits for work: referees long-polling for ready matches, and the event delivery.
//! Inside one manager a `Notify` does it at once; across managers (several replicas on one database)
//! Postgres NOTIFY carries the same signal, sent in the transaction that made the work, so it fires only
//! if that transaction commits.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::{PgConnection, PgPool};
use tokio::sync::Notify;

use league_runtime::ShutdownSignal;

use crate::league::waiting_claims::WaitingClaims;

pub const MATCHES_READY_CHANNEL: &str = "league_matches_ready";
pub const EVENTS_PENDING_CHANNEL: &str = "league_events_pending";

#[derive(Debug, Default)]
pub struct Wakeups {
    pub matches_ready: Notify,
    pub events_pending: Notify,
    /// The claims waiting in this manager, which a round's release hands its matches to directly.
    pub waiting_claims: WaitingClaims,
}

impl Wakeups {
    /// Tells every manager, once `tx` commits, that matches became ready.
    pub async fn matches_ready_on_commit(tx: &mut PgConnection) -> sqlx::Result<()> {
        sqlx::query!("select pg_notify($1, '')", MATCHES_READY_CHANNEL)
            .execute(tx)
            .await?;
        Ok(())
    }

    /// Forwards Postgres notifications to the in-process `Notify`s until shutdown. A lost listener
    /// connection only delays wake-ups (waiters also re-check on a timer): it is re-established with a
    /// backoff for as long as it takes (a database restart), and every waiter is woken once it is back,
    /// since notifications sent while nobody listened are lost.
    pub async fn listen(self: Arc<Self>, pool: PgPool, shutdown: ShutdownSignal) {
        const MIN_BACKOFF: Duration = Duration::from_millis(100);
        const MAX_BACKOFF: Duration = Duration::from_secs(5);
        let stop = shutdown.wait();
        tokio::pin!(stop);
        let mut backoff = MIN_BACKOFF;
        loop {
            let subscribed = tokio::select! {
                _ = &mut stop => return,
                subscribed = subscribe(&pool) => subscribed,
            };
            match subscribed {
                Ok(mut listener) => {
                    backoff = MIN_BACKOFF;
                    self.wake_all();
                    loop {
                        tokio::select! {
                            _ = &mut stop => return,
                            received = listener.try_recv() => match received {
                                Ok(Some(notification)) if notification.channel() == MATCHES_READY_CHANNEL => {
                                    self.matches_ready.notify_waiters();
                                }
                                Ok(Some(_)) => self.events_pending.notify_one(),
                                // Lost and re-established: whatever was sent in between is gone.
                                Ok(None) => {
                                    tracing::info!("LISTEN connection re-established");
                                    self.wake_all();
                                }
                                // This used to be retried on the same listener at once, without a
                                // pause (and a failed first connection disabled LISTEN for good): start
                                // afresh after a backoff instead.
                                Err(error) => {
                                    tracing::warn!(%error, ?backoff, "LISTEN connection lost; reconnecting");
                                    break;
                                }
                            },
                        }
                    }
                }
                Err(error) => tracing::warn!(
                    %error,
                    ?backoff,
                    "cannot LISTEN; retrying (wake-ups from other managers come by polling meanwhile)"
                ),
            }
            tokio::select! {
                _ = &mut stop => return,
                _ = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Wakes every waiting claim and event delivery, to look for work they may have missed.
    fn wake_all(&self) {
        self.matches_ready.notify_waiters();
        self.events_pending.notify_one();
    }
}

async fn subscribe(pool: &PgPool) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener
        .listen_all([MATCHES_READY_CHANNEL, EVENTS_PENDING_CHANNEL])
        .await?;
    Ok(listener)
}
