//! `league bench`: leagues of bots that answer at once, run through `league run`'s machinery (separate
//! processes, real gRPC, real Postgres), measured from what the system itself recorded: the league's
//! start and completion times in Postgres, every match's transcript, and each process's peak memory.

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use league_proto::v2::transcript_entry::Entry;
use league_proto::v2::{Direction, GetLeagueStatusRequest, GetMatchRequest, GetScheduleRequest};
use league_runtime::credentials::operator_request;

use crate::run::{Finished, RunArgs, run_league};

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// League sizes to run, e.g. 20,50,200.
    #[arg(long, value_delimiter = ',', default_values_t = [20, 50, 200])]
    pub players: Vec<u32>,
    /// Referee processes.
    #[arg(long, default_value_t = 2)]
    pub referees: u32,
    /// Matches each referee runs at once.
    #[arg(long, default_value_t = 64)]
    pub referee_capacity: u32,
}

/// One league's numbers.
#[derive(Debug)]
struct Measured {
    players: u32,
    matches: u32,
    wall: Duration,
    match_p50: Duration,
    match_p99: Duration,
    player_calls_per_match: f64,
    notifications_per_match: f64,
    peak_rss_kib: Vec<(String, u64)>,
}

pub async fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let mut results = Vec::new();
    for &players in &args.players {
        let run = RunArgs {
            players,
            referees: args.referees,
            referee_capacity: args.referee_capacity,
            strategies: "random,adaptive,alternating,always_even,always_odd".to_owned(),
            game: "even_odd".to_owned(),
            join_timeout: "5s".to_owned(),
            move_timeout: "30s".to_owned(),
            retry_delay: "2s".to_owned(),
            max_attempts: 3,
            cluster_dir: ".league/postgres".into(),
            deadline: "30m".to_owned(),
            quiet: true,
            gateway_addr: "127.0.0.1:0".to_owned(),
            external_players: 0,
            gateways: 1,
        };
        eprintln!(
            "bench: {players} players, {} referees × {} matches",
            args.referees, args.referee_capacity
        );
        let (_, measured) = run_league(&run, async |finished: &mut Finished| {
            measure(players, finished).await
        })
        .await?;
        results.push(measured);
    }
    println!("{}", render(&results, &args));
    Ok(())
}

async fn measure(players: u32, finished: &mut Finished) -> anyhow::Result<Measured> {
    let millis = |t: &prost_types::Timestamp| t.seconds as f64 * 1e3 + f64::from(t.nanos) / 1e6;
    // The last round's notifications may still be on their way: count them once the outbox is empty.
    let status = loop {
        let status = finished
            .client
            .get_league_status(operator_request(
                &finished.operator_token,
                GetLeagueStatusRequest {
                    league_id: finished.league_id.clone(),
                },
            ))
            .await
            .context("reading the league's status")?
            .into_inner();
        if status.notifications_pending == 0 {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (Some(started), Some(completed)) = (&status.started_at, &status.completed_at) else {
        anyhow::bail!("the league reports no start or completion time");
    };
    let wall = Duration::from_secs_f64(((millis(completed) - millis(started)) / 1e3).max(0.0));
    let schedule = finished
        .client
        .get_schedule(operator_request(
            &finished.operator_token,
            GetScheduleRequest {
                league_id: finished.league_id.clone(),
            },
        ))
        .await
        .context("reading the schedule")?
        .into_inner();
    let mut durations = Vec::new();
    let mut player_calls = 0usize;
    for scheduled in schedule.rounds.iter().flat_map(|round| &round.matches) {
        let detail = finished
            .client
            .get_match(operator_request(
                &finished.operator_token,
                GetMatchRequest {
                    league_id: finished.league_id.clone(),
                    match_id: scheduled.match_id.clone(),
                },
            ))
            .await
            .context("reading a match")?
            .into_inner();
        let entries = detail.transcript.map(|t| t.entries).unwrap_or_default();
        let times: Vec<f64> = entries
            .iter()
            .filter_map(|entry| entry.at.as_ref().map(millis))
            .collect();
        if let (Some(first), Some(last)) = (
            times.iter().copied().reduce(f64::min),
            times.iter().copied().reduce(f64::max),
        ) {
            durations.push(Duration::from_secs_f64((last - first).max(0.0) / 1e3));
        }
        player_calls += entries
            .iter()
            .filter(|entry| matches!(&entry.entry, Some(Entry::Message(m)) if m.direction == Direction::ToPlayer as i32))
            .count();
    }
    durations.sort();
    let percentile = |p: f64| {
        durations
            .get(((durations.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    let matches = status.total_matches;
    let notifications = f64::from(status.notifications_delivered);
    Ok(Measured {
        players,
        matches,
        wall,
        match_p50: percentile(0.50),
        match_p99: percentile(0.99),
        player_calls_per_match: player_calls as f64 / f64::from(matches.max(1)),
        notifications_per_match: notifications / f64::from(matches.max(1)),
        peak_rss_kib: finished.peak_rss_kib.clone(),
    })
}

fn render(results: &[Measured], args: &BenchArgs) -> String {
    let mut out = format!(
        "referees: {} × capacity {}\n\n| players | matches | wall (s) | matches/s | match p50 (ms) | match p99 (ms) | player RPCs/match | notifications/match | peak RSS (MB) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        args.referees, args.referee_capacity
    );
    for m in results {
        let rss: Vec<String> = m
            .peak_rss_kib
            .iter()
            .map(|(name, kib)| format!("{name} {:.1}", *kib as f64 / 1024.0))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {:.2} | {:.0} | {:.2} | {:.2} | {:.1} | {:.2} | {} |\n",
            m.players,
            m.matches,
            m.wall.as_secs_f64(),
            f64::from(m.matches) / m.wall.as_secs_f64().max(1e-9),
            m.match_p50.as_secs_f64() * 1e3,
            m.match_p99.as_secs_f64() * 1e3,
            m.player_calls_per_match,
            m.notifications_per_match,
            rss.join(", ")
        ));
    }
    out
}
