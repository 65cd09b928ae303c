//! Leagues played at once on one system (`league-bench --concurrent-leagues K`, issue 42): one manager,
//! the bench's referees, a player host of its own bots for each league, the leagues started together.
//! The whole is measured from the first league's start to the last one's completion, as the manager
//! recorded them; each league by its own wall and round gap, so that a league the others starve shows:
//! its wall far above the rest (the spread, slowest over fastest) and its gap's p99 high.

use std::time::Duration;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use sqlx::Connection;

use crate::rounds::Percentiles;

/// One of the leagues played at once, as the manager recorded it.
#[derive(Debug, Clone)]
pub struct League {
    pub league_id: String,
    pub matches: u32,
    /// Its start (the schedule released) and its completion (its last result), in milliseconds since
    /// the epoch by the manager's clock: one clock for every league.
    pub started_ms: f64,
    pub completed_ms: f64,
    /// Its round gaps: last result of a round → first invitation of the next.
    pub gap: Percentiles,
}

impl League {
    fn wall(&self) -> Duration {
        seconds((self.completed_ms - self.started_ms) / 1e3)
    }
}

/// The leagues as one.
#[derive(Debug, Clone, PartialEq)]
pub struct Whole {
    pub leagues: usize,
    pub matches: u64,
    /// From the first league's start to the last league's completion.
    pub wall: Duration,
    pub per_second: f64,
    pub fastest: Duration,
    pub slowest: Duration,
}

impl Whole {
    pub fn of(leagues: &[League]) -> Self {
        let first_start = leagues
            .iter()
            .map(|l| l.started_ms)
            .reduce(f64::min)
            .unwrap_or(0.0);
        let last_completion = leagues
            .iter()
            .map(|l| l.completed_ms)
            .reduce(f64::max)
            .unwrap_or(0.0);
        let wall = seconds((last_completion - first_start) / 1e3);
        let matches = leagues.iter().map(|l| u64::from(l.matches)).sum::<u64>();
        let walls = || leagues.iter().map(League::wall);
        Self {
            leagues: leagues.len(),
            matches,
            wall,
            per_second: matches as f64 / wall.as_secs_f64().max(1e-9),
            fastest: walls().min().unwrap_or_default(),
            slowest: walls().max().unwrap_or_default(),
        }
    }

    /// The slowest league's wall over the fastest's: 1 when every league took as long; well above 1
    /// when some league waited on the others.
    pub fn spread(&self) -> f64 {
        self.slowest.as_secs_f64() / self.fastest.as_secs_f64().max(1e-9)
    }
}

fn seconds(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds.max(0.0))
}

/// The whole, then a row per league, as Markdown.
pub fn render(players: u32, leagues: &[League]) -> String {
    let whole = Whole::of(leagues);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut out = format!(
        "\n{} leagues of {players} players at once: {} matches in {:.2} s from the first start to the last \
         completion, {:.0} matches/s; league walls {:.2}–{:.2} s (slowest / fastest {:.2})\n\n\
         | league | matches | wall (s) | matches/s | gap p50 (ms) | gap p99 (ms) |\n\
         |---|---:|---:|---:|---:|---:|\n",
        whole.leagues,
        whole.matches,
        whole.wall.as_secs_f64(),
        whole.per_second,
        whole.fastest.as_secs_f64(),
        whole.slowest.as_secs_f64(),
        whole.spread()
    );
    for league in leagues {
        let wall = league.wall();
        out.push_str(&format!(
            "| {} | {} | {:.2} | {:.0} | {:.2} | {:.2} |\n",
            league.league_id,
            league.matches,
            wall.as_secs_f64(),
            f64::from(league.matches) / wall.as_secs_f64().max(1e-9),
            ms(league.gap.p50),
            ms(league.gap.p99)
        ));
    }
    out
}

/// The deadlocks Postgres broke in the run's database (SQLSTATE 40P01; `pg_stat_database.deadlocks`),
/// read once the leagues are measured: a backend adds its count within a second of going idle. Every
/// transaction takes its locks in one order (docs/subsystems/lock-order.md), so this is 0; a deadlock
/// costs its round Postgres's `deadlock_timeout` (1 s). One of the launcher's read-only looks at the
/// database (docs/architecture.md).
pub async fn deadlocks(database_url: &SecretString) -> anyhow::Result<i64> {
    let mut conn = sqlx::PgConnection::connect(database_url.expose_secret())
        .await
        .context("connecting to the run's database")?;
    let deadlocks = sqlx::query_scalar!(
        r#"select coalesce(deadlocks, 0) as "deadlocks!" from pg_stat_database
           where datname = current_database()"#
    )
    .fetch_one(&mut conn)
    .await
    .context("reading the run's deadlocks")?;
    Ok(deadlocks)
}

/// The line that says how many deadlocks Postgres broke during the run.
pub fn render_deadlocks(deadlocks: i64) -> String {
    format!("deadlocks (Postgres, the run's database): {deadlocks}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn league(league_id: &str, matches: u32, started_ms: f64, completed_ms: f64) -> League {
        League {
            league_id: league_id.to_owned(),
            matches,
            started_ms,
            completed_ms,
            gap: Percentiles {
                p50: Duration::from_millis(2),
                p99: Duration::from_millis(9),
            },
        }
    }

    #[test]
    fn the_whole_runs_from_the_first_start_to_the_last_completion() {
        // Two leagues of 1,225 matches: one from 1.0 s to 3.0 s, one from 1.5 s to 5.0 s.
        let leagues = [
            league("a", 1_225, 1_000.0, 3_000.0),
            league("a-2", 1_225, 1_500.0, 5_000.0),
        ];
        let whole = Whole::of(&leagues);
        assert_eq!(whole.leagues, 2);
        assert_eq!(whole.matches, 2_450);
        assert_eq!(whole.wall, Duration::from_secs(4));
        assert!((whole.per_second - 612.5).abs() < 1e-9, "{whole:?}");
        assert_eq!(whole.fastest, Duration::from_secs(2));
        assert_eq!(whole.slowest, Duration::from_millis(3_500));
        assert!((whole.spread() - 1.75).abs() < 1e-9, "{whole:?}");
    }

    #[test]
    fn no_leagues_are_nothing_and_divide_by_nothing() {
        let whole = Whole::of(&[]);
        assert_eq!((whole.matches, whole.wall), (0, Duration::ZERO));
        assert!(whole.per_second == 0.0 && whole.spread() == 0.0, "{whole:?}");
    }

    #[test]
    fn a_row_per_league_with_its_wall_rate_and_gap() {
        let out = render(
            50,
            &[
                league("a", 1_225, 0.0, 1_000.0),
                league("a-2", 1_225, 0.0, 2_000.0),
            ],
        );
        assert!(
            out.contains("2 leagues of 50 players at once: 2450 matches in 2.00 s"),
            "{out}"
        );
        assert!(
            out.contains("1225 matches/s") && out.contains("(slowest / fastest 2.00)"),
            "{out}"
        );
        assert!(
            out.contains("\n| a | 1225 | 1.00 | 1225 | 2.00 | 9.00 |\n"),
            "{out}"
        );
        assert!(
            out.contains("\n| a-2 | 1225 | 2.00 | 612 | 2.00 | 9.00 |\n"),
            "{out}"
        );
    }
}
