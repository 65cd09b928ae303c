//! The connection pool and the migrations (migrations/ at the repository root, embedded at build time).

use std::time::Duration;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;

pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations");

/// Connects, retrying for a while so the manager can start before its database is up (compose). A URL
/// of another database system is refused at once, not retried.
pub async fn connect(url: &SecretString, max_connections: u32) -> anyhow::Result<PgPool> {
    crate::postgres::check_scheme("DATABASE_URL", url.expose_secret())?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(30))
        // No ping to Postgres before every use of a pooled connection: that was a round trip more for
        // every claim, every batch of results and every completion check (docs/benchmarks.md). A
        // connection that died while idle (Postgres restarted) fails its next statement instead, is
        // closed, and that call fails like any other database error: referees repeat their claims and
        // reports, and event delivery its batch (tests/reliability/postgres_restart.rs).
        .test_before_acquire(false)
        .connect(url.expose_secret())
        .await
        .context("connecting to Postgres")
}

/// Connections the manager holds for as long as it runs: the LISTEN connection of the wake-ups
/// (crate::wakeups), the LISTEN connection of relayed replies (crate::agents) and the event-delivery
/// lock's connection (crate::event_delivery), and one spare for a reconnection.
const HELD_CONNECTIONS: u32 = 4;

/// The pool of the connections the manager holds for good ([`HELD_CONNECTIONS`]), apart from the pool
/// that does the work: inside it they took three of its connections for good, so a working pool of
/// three starved, and a pool sized for the work had to be sized for them as well. Opened lazily: its
/// holders connect, and reconnect, as they start.
pub fn connect_held(url: &SecretString) -> anyhow::Result<PgPool> {
    PgPoolOptions::new()
        .max_connections(HELD_CONNECTIONS)
        .acquire_timeout(Duration::from_secs(30))
        .connect_lazy(url.expose_secret())
        .context("the database URL of the held connections")
}

/// The result writer's own connection (crate::league::report_queue), apart from the working pool.
/// The writer records batches and completes rounds one after another, so one connection is all it
/// uses; on its own it also plans its statements once. Postgres plans a statement afresh on its first
/// five executions on each connection, and the writer's statements spread over the working pool were
/// planned up to five times per connection: in a 20-player league most releases of a round
/// (crate::league::queue::release_round) were custom-planned, 1–1.5 ms each (docs/benchmarks.md). On
/// this connection they are planned at their first execution, for good (`plan_cache_mode =
/// force_generic_plan`): the plan Postgres would settle on at the sixth, without the four plannings
/// between (about 2 ms each for the release, in a manager's first rounds). Opened lazily, on the
/// working pool's options.
pub fn connect_writer(pool: &PgPool) -> PgPool {
    PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(30))
        .test_before_acquire(false)
        .connect_lazy_with(
            pool.connect_options()
                .as_ref()
                .clone()
                .options([("plan_cache_mode", "force_generic_plan")]),
        )
}

/// Applies pending migrations. Safe to run from several managers at once (sqlx takes an advisory lock).
pub async fn migrate(pool: &PgPool) -> anyhow::Result<()> {
    MIGRATOR.run(pool).await.context("applying migrations")
}
