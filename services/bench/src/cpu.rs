//! The CPU a league cost, per service and in Postgres: each process's user and system time
//! (`/proc/<pid>/stat`), read once every league of the run has completed and before the bench reads the
//! transcripts back, divided by the matches played. The machine's speed drifts from one minute to the
//! next and moves a wall far more than the CPU each match takes, so this is the figure to compare builds
//! by, beside alternated pairs of walls.
//!
//! What it covers: from each service's start to the leagues' completion (starting and registering are
//! in it, small beside a league's matches). Postgres is the backends connected to the run's database at
//! that moment (the manager's pool keeps its connections); the server's own processes (WAL writer,
//! checkpointer, autovacuum) are not counted, nor is a Postgres on another machine (its row says so).

use std::time::Duration;

use anyhow::Context;
use secrecy::ExposeSecret;
use sqlx::Connection;

use league_launcher::children::cpu_time;
use league_launcher::run::Finished;

/// CPU time used, by what used it: each service of the run, then `postgres`.
#[derive(Debug, Clone, Default)]
pub(super) struct CpuUsed {
    pub(super) by: Vec<(String, Duration)>,
    /// How many Postgres backends were counted (none: Postgres is not on this machine).
    pub(super) backends: usize,
}

/// What the run's services and its database's backends have used so far.
pub(super) async fn used(finished: &Finished) -> anyhow::Result<CpuUsed> {
    let mut by: Vec<(String, Duration)> = finished
        .pids
        .iter()
        .filter_map(|(name, pid)| Some((name.clone(), cpu_time(*pid)?)))
        .collect();
    let mut database = sqlx::PgConnection::connect(finished.database_url.expose_secret())
        .await
        .context("connecting to the run's database to find its backends")?;
    let backends = sqlx::query_scalar!(
        r#"select pid as "pid!" from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid()"#
    )
    .fetch_all(&mut database)
    .await
    .context("listing the run's database backends")?;
    let read: Vec<Duration> = backends
        .iter()
        .filter_map(|pid| cpu_time(u32::try_from(*pid).ok()?))
        .collect();
    by.push(("postgres".to_owned(), read.iter().sum()));
    Ok(CpuUsed {
        by,
        backends: read.len(),
    })
}

/// The groups a row shows, by the start of a process's name (`referee-2` is a referee).
const GROUPS: [(&str, &str); 5] = [
    ("manager", "manager"),
    ("referees", "referee"),
    ("player hosts", "players"),
    ("gateways", "gateway"),
    ("postgres", "postgres"),
];

/// The table's head: what each column is.
pub(super) fn header(what: &str) -> String {
    let names: Vec<&str> = GROUPS.iter().map(|(name, _)| *name).collect();
    format!(
        "\nCPU a match (ms, user + system, from the services' start to the completion):\n\n| {what} | {} | all | Postgres backends counted |\n|---|{}---:|---:|\n",
        names.join(" | "),
        "---:|".repeat(names.len())
    )
}

/// One row: `used` over `matches`, by group, and in all.
pub(super) fn row(label: &str, used: &CpuUsed, matches: u64) -> String {
    let per_match = |total: Duration| total.as_secs_f64() * 1e3 / matches.max(1) as f64;
    let cells: Vec<String> = GROUPS
        .iter()
        .map(|(_, prefix)| {
            let total: Duration = used
                .by
                .iter()
                .filter(|(name, _)| name.starts_with(prefix))
                .map(|(_, time)| *time)
                .sum();
            format!("{:.3}", per_match(total))
        })
        .collect();
    let all: Duration = used.by.iter().map(|(_, time)| *time).sum();
    format!(
        "| {label} | {} | {:.3} | {} |\n",
        cells.join(" | "),
        per_match(all),
        used.backends
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_sums_each_group_over_the_matches() {
        let ms = Duration::from_millis;
        let used = CpuUsed {
            by: vec![
                ("manager".to_owned(), ms(1_000)),
                ("gateway-1".to_owned(), ms(0)),
                ("referee-1".to_owned(), ms(1_500)),
                ("referee-2".to_owned(), ms(500)),
                ("players".to_owned(), ms(400)),
                ("players-2".to_owned(), ms(600)),
                ("postgres".to_owned(), ms(3_000)),
            ],
            backends: 4,
        };
        assert_eq!(
            row("200", &used, 10_000),
            "| 200 | 0.100 | 0.200 | 0.100 | 0.000 | 0.300 | 0.700 | 4 |\n"
        );
    }
}
