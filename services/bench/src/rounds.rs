//! Where the time between two rounds goes, read from what the system recorded: the referees' transcript
//! times (a match's first and last entries: `matches.started_at` and `ended_at`) and the database's
//! clock at each step of the manager's round boundary (`matches.finished_at` and `claimed_at`,
//! `rounds.released_at`). For each boundary
//! between round r and r + 1:
//!
//! - *report*: r's last GAME_OVER sent → its result recorded (the referee's report and its commit);
//! - *completion*: that result recorded → round r + 1 released (the completing work in the manager);
//! - *hand-over*: released → r + 1's first match claimed (commit, wake-up, the claim);
//! - *start*: claimed → r + 1's first invitation sent (the claim's answer reaching the referee);
//! - *gap*: r's last result recorded → r + 1's first invitation: what the issue calls the round gap.
//!
//! And inside round r: *round*, its first invitation → its last result recorded, and *starts*, its first
//! invitation → its last match's first invitation. Where *starts* is most of *round*, the round's time
//! goes to starting its matches (claims, and the CPU the matches before them take), not to the matches
//! themselves (the match p50 of the main table).

use std::time::Duration;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use sqlx::Connection;

/// The phases of every round boundary of one league, each as its p50 and p99.
#[derive(Debug, Default, Clone)]
pub struct RoundBoundaries {
    pub boundaries: usize,
    pub report: Percentiles,
    pub completion: Percentiles,
    pub hand_over: Percentiles,
    pub start: Percentiles,
    pub gap: Percentiles,
    pub round: Percentiles,
    pub starts: Percentiles,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Percentiles {
    pub p50: Duration,
    pub p99: Duration,
}

impl Percentiles {
    fn of(mut millis: Vec<f64>) -> Self {
        millis.sort_by(f64::total_cmp);
        let at = |p: f64| {
            let index = ((millis.len() as f64 - 1.0) * p).round() as usize;
            Duration::from_secs_f64(millis.get(index).copied().unwrap_or(0.0).max(0.0) / 1e3)
        };
        Self {
            p50: at(0.50),
            p99: at(0.99),
        }
    }
}

type PhaseRow = (f64, f64, f64, f64, f64, f64, f64);

pub async fn measure(database_url: &SecretString, league_id: &str) -> anyhow::Result<RoundBoundaries> {
    let mut conn = sqlx::PgConnection::connect(database_url.expose_secret())
        .await
        .context("connecting to the run's database")?;
    let rows: Vec<PhaseRow> = sqlx::query!(
        r#"with per_round as (
             select round_id,
                    max(ended_at) as last_end,
                    max(finished_at) as last_recorded,
                    min(claimed_at) as first_claim,
                    min(started_at) as first_start,
                    max(started_at) as last_start
             from matches where league_id = $1 and status = 'finished'
             group by round_id
         )
         select (extract(epoch from cur.last_recorded - cur.last_end) * 1000)::float8 as "report!",
                (extract(epoch from r.released_at - cur.last_recorded) * 1000)::float8 as "completion!",
                (extract(epoch from nxt.first_claim - r.released_at) * 1000)::float8 as "hand_over!",
                (extract(epoch from nxt.first_start - nxt.first_claim) * 1000)::float8 as "start!",
                (extract(epoch from nxt.first_start - cur.last_recorded) * 1000)::float8 as "gap!",
                (extract(epoch from cur.last_recorded - cur.first_start) * 1000)::float8 as "round!",
                (extract(epoch from cur.last_start - cur.first_start) * 1000)::float8 as "starts!"
         from per_round cur
         join per_round nxt on nxt.round_id = cur.round_id + 1
         join rounds r on r.league_id = $1 and r.round_id = nxt.round_id
         where r.released_at is not null and nxt.first_claim is not null
         order by cur.round_id"#,
        league_id
    )
    .fetch_all(&mut conn)
    .await
    .context("reading the round boundaries")?
    .into_iter()
    .map(|row| {
        (
            row.report,
            row.completion,
            row.hand_over,
            row.start,
            row.gap,
            row.round,
            row.starts,
        )
    })
    .collect();
    let column = |pick: fn(&PhaseRow) -> f64| Percentiles::of(rows.iter().map(pick).collect());
    Ok(RoundBoundaries {
        boundaries: rows.len(),
        report: column(|row| row.0),
        completion: column(|row| row.1),
        hand_over: column(|row| row.2),
        start: column(|row| row.3),
        gap: column(|row| row.4),
        round: column(|row| row.5),
        starts: column(|row| row.6),
    })
}

/// The boundaries of each league as a Markdown table, each row named in its first column (`first`:
/// that column's title, such as `players`).
pub fn render(first: &str, leagues: &[(String, &RoundBoundaries)]) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut out = format!(
        "\nround boundaries (ms, p50 / p99): gap = last result of a round → first invitation of the next; \
         round = a round's first invitation → its last result; starts = its first invitation → its last match's first\n\n\
         | {first} | boundaries | gap | report | completion | hand-over | start | round | starts |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, b) in leagues {
        let cell = |p: Percentiles| format!("{:.2} / {:.2}", ms(p.p50), ms(p.p99));
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            b.boundaries,
            cell(b.gap),
            cell(b.report),
            cell(b.completion),
            cell(b.hand_over),
            cell(b.start),
            cell(b.round),
            cell(b.starts)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let p = Percentiles::of((1..=100).map(f64::from).rev().collect());
        assert_eq!(p.p50, Duration::from_millis(51));
        assert_eq!(p.p99, Duration::from_millis(99));
        let empty = Percentiles::of(Vec::new());
        assert_eq!(empty.p50, Duration::ZERO);
    }
}
