//! The manager's Prometheus metrics (rendered by the admin server's `/metrics`; names and meanings in
//! docs/observability.md). Everything the manager knows lives in the database, shared by every manager
//! replica, so its metrics are read from there when `/metrics` is scraped: one grouped query per scrape
//! and nothing on the hot path, exact by construction, and the same on every replica (gauges of shared
//! state — aggregate them with `max`, not `sum`).

use std::sync::LazyLock;
use std::time::Duration;

use league_runtime::metrics::{on_scrape, register};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use sqlx::PgPool;

/// A match's status as the contracts show it (`match_status` in the migrations).
const STATUSES: [&str; 5] = ["scheduled", "ready", "running", "finished", "cancelled"];
/// A finished match's `result_status` column.
const OUTCOMES: [&str; 4] = ["win", "draw", "technical_loss", "double_forfeit"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

struct ManagerMetrics {
    matches: Family<Status, Gauge>,
    results: Family<Outcome, Gauge>,
    queue_depth: Gauge,
    leases_active: Gauge,
    leases_expired: Gauge,
}

static METRICS: LazyLock<ManagerMetrics> = LazyLock::new(|| {
    let metrics = ManagerMetrics {
        matches: Family::default(),
        results: Family::default(),
        queue_depth: Gauge::default(),
        leases_active: Gauge::default(),
        leases_expired: Gauge::default(),
    };
    register(
        "league_manager_matches",
        "Matches of every league by status (scheduled, ready, running, finished)",
        metrics.matches.clone(),
    );
    register(
        "league_manager_match_results",
        "Finished matches of every league by outcome (win, draw, technical_loss, double_forfeit)",
        metrics.results.clone(),
    );
    register(
        "league_manager_match_queue_depth",
        "Matches ready and waiting for a referee to claim them",
        metrics.queue_depth.clone(),
    );
    register(
        "league_manager_leases_active",
        "Matches running under a lease that has not expired",
        metrics.leases_active.clone(),
    );
    register(
        "league_manager_leases_expired",
        "Matches whose lease expired, waiting to be claimed again",
        metrics.leases_expired.clone(),
    );
    metrics
});

/// Claim queries run by this process: what waiting referees cost the database. A counter in memory (the
/// one exception to "read at scrape"), since no table records a look that found nothing.
pub static CLAIM_LOOKS: LazyLock<prometheus_client::metrics::counter::Counter> = LazyLock::new(|| {
    let counter = prometheus_client::metrics::counter::Counter::default();
    register(
        "league_manager_claim_looks",
        "Claim queries run for waiting referees by this manager (each look for claimable matches)",
        counter.clone(),
    );
    counter
});

/// Reports recorded per transaction by this process's result writer (crate::league::report_queue): 1
/// when reports arrive one at a time, more when a round's results arrive together. In memory, like
/// [`CLAIM_LOOKS`]: no table records how results were grouped.
pub static RESULT_BATCH_SIZE: LazyLock<Histogram> = LazyLock::new(|| {
    let histogram = Histogram::new(exponential_buckets(1.0, 2.0, 8));
    register(
        "league_manager_result_batch_size",
        "Match results recorded together in one transaction by this manager",
        histogram.clone(),
    );
    histogram
});

/// A scrape waits at most this long for the database.
const SCRAPE_QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads the matches from `pool` before every scrape. Once per process (the `league manager` binary).
pub fn refresh_on_scrape(pool: PgPool) {
    LazyLock::force(&METRICS);
    // Listed from the first scrape, before anything was counted.
    LazyLock::force(&CLAIM_LOOKS);
    LazyLock::force(&RESULT_BATCH_SIZE);
    on_scrape(move || {
        let pool = pool.clone();
        async move {
            match tokio::time::timeout(SCRAPE_QUERY_TIMEOUT, count_matches(&pool)).await {
                Ok(Ok(counts)) => publish(&counts),
                // The gauges keep their last values; `/readyz` says the database is away.
                Ok(Err(error)) => tracing::warn!(%error, "counting matches for /metrics failed"),
                Err(_) => tracing::warn!("counting matches for /metrics timed out"),
            }
        }
    });
}

/// (status, result status, lease expired, matches).
type Counts = Vec<(String, Option<String>, bool, i64)>;

async fn count_matches(pool: &PgPool) -> Result<Counts, sqlx::Error> {
    let rows = sqlx::query!(
        r#"select match_status(m, l) as "status!", m.result_status,
                coalesce(m.status = 'running' and m.lease_expires_at < now(), false) as "expired!",
                count(*) as "matches!"
         from matches m join leagues l using (league_id) group by 1, 2, 3"#
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| (row.status, row.result_status, row.expired, row.matches))
        .collect())
}

fn publish(counts: &Counts) {
    let total = |keep: &dyn Fn(&str, Option<&str>, bool) -> bool| -> i64 {
        counts
            .iter()
            .filter(|(status, outcome, expired, _)| keep(status, outcome.as_deref(), *expired))
            .map(|(.., count)| count)
            .sum()
    };
    for status in STATUSES {
        let count = total(&|s, _, _| s == status);
        METRICS.matches.get_or_create(&Status { status }).set(count);
    }
    for outcome in OUTCOMES {
        let count = total(&|s, o, _| s == "finished" && o == Some(outcome));
        METRICS.results.get_or_create(&Outcome { outcome }).set(count);
    }
    METRICS.queue_depth.set(total(&|s, _, _| s == "ready"));
    METRICS
        .leases_active
        .set(total(&|s, _, expired| s == "running" && !expired));
    METRICS
        .leases_expired
        .set(total(&|s, _, expired| s == "running" && expired));
}
