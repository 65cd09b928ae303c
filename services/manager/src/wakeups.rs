//! Waking whoever waits for work: referees long-polling for ready matches, and the outbox dispatcher.
//! Inside one manager a `Notify` does it at once; across managers (several replicas on one database)
//! Postgres NOTIFY carries the same signal, sent in the transaction that made the work, so it fires only
//! if that transaction commits.

use std::sync::Arc;

use sqlx::postgres::PgListener;
use sqlx::{PgConnection, PgPool};
use tokio::sync::Notify;

use league_runtime::ShutdownSignal;

pub const MATCHES_READY_CHANNEL: &str = "league_matches_ready";
pub const EVENTS_PENDING_CHANNEL: &str = "league_events_pending";

#[derive(Debug, Default)]
pub struct Wakeups {
    pub matches_ready: Notify,
    pub events_pending: Notify,
}

impl Wakeups {
    /// Tells every manager, once `tx` commits, that matches became ready.
    pub async fn matches_ready_on_commit(tx: &mut PgConnection) -> sqlx::Result<()> {
        sqlx::query("select pg_notify($1, '')")
            .bind(MATCHES_READY_CHANNEL)
            .execute(tx)
            .await?;
        Ok(())
    }

    /// Tells every manager, once `tx` commits, that notifications wait in the outbox.
    pub async fn events_pending_on_commit(tx: &mut PgConnection) -> sqlx::Result<()> {
        sqlx::query("select pg_notify($1, '')")
            .bind(EVENTS_PENDING_CHANNEL)
            .execute(tx)
            .await?;
        Ok(())
    }

    /// Forwards Postgres notifications to the in-process `Notify`s until shutdown. A lost listener
    /// connection only delays wake-ups (waiters also re-check on a timer); it reconnects on its own.
    pub async fn listen(self: Arc<Self>, pool: PgPool, shutdown: ShutdownSignal) {
        let mut listener = match PgListener::connect_with(&pool).await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "cannot LISTEN; wake-ups from other managers come by polling");
                return;
            }
        };
        if let Err(error) = listener
            .listen_all([MATCHES_READY_CHANNEL, EVENTS_PENDING_CHANNEL])
            .await
        {
            tracing::warn!(%error, "cannot LISTEN; wake-ups from other managers come by polling");
            return;
        }
        let stop = shutdown.wait();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                received = listener.recv() => match received {
                    Ok(notification) if notification.channel() == MATCHES_READY_CHANNEL => {
                        self.matches_ready.notify_waiters();
                    }
                    Ok(_) => self.events_pending.notify_one(),
                    Err(error) => tracing::debug!(%error, "listener interrupted; reconnecting"),
                },
            }
        }
    }
}
