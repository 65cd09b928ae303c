//! `league bench`: leagues of players that answer at once — bots, or with `--external` fake external
//! agents reached through the gateway (crate::fake_agent) — run through `league run`'s machinery
//! (separate processes, real gRPC, real Postgres), measured from what the system itself recorded: the
//! league's start and completion times in Postgres, every match's transcript, each process's peak
//! memory, and for external players the gateway's own overhead histograms. `--wrk` then measures the
//! finished league's gateway with wrk: JSON-RPC queries per second.

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use league_proto::v2::transcript_entry::Entry;
use league_proto::v2::{Direction, GetLeagueStatusRequest, GetMatchRequest};
use league_runtime::credentials::operator_request;
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use crate::fake_agent::{self, FakeAgents};

mod rounds;
use crate::run::{Finished, RunArgs, run_league_with};

/// The wrk script every query measurement uses (also in scripts/wrk/).
const WRK_SCRIPT: &str = include_str!("../../../scripts/wrk/jsonrpc.lua");

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
    /// Every player is a fake external agent (one HTTP server in this process, one path per player)
    /// that registers through the gateway and answers at once, instead of a bot.
    #[arg(long)]
    pub external: bool,
    /// After each league, measure its gateway with wrk for this long per call (e.g. 10s): ping,
    /// get_standings and league_query, with the operator's token (and as an agent with --external).
    #[arg(long)]
    pub wrk: Option<String>,
    /// wrk's connections.
    #[arg(long, default_value_t = 32)]
    pub wrk_connections: u32,
    /// wrk's threads.
    #[arg(long, default_value_t = 2)]
    pub wrk_threads: u32,
}

/// A histogram's reading: how many, and percentiles (interpolated within buckets).
#[derive(Debug, Default, Clone, Copy)]
struct Spread {
    count: u64,
    mean: Duration,
    p50: Duration,
    p99: Duration,
}

/// The gateway's overhead, from its `/metrics`.
#[derive(Debug, Default)]
struct Overhead {
    per_match: Spread,
    per_call: Vec<(String, Spread)>,
}

/// One wrk run.
#[derive(Debug)]
struct Throughput {
    call: String,
    line: String,
    load_average: String,
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
    overhead: Option<Overhead>,
    throughput: Vec<Throughput>,
    rounds: rounds::RoundBoundaries,
}

pub async fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let mut results = Vec::new();
    for &players in &args.players {
        let (bots, external) = if args.external { (0, players) } else { (players, 0) };
        let run = RunArgs {
            players: bots,
            referees: args.referees,
            referee_capacity: args.referee_capacity,
            quiet: true,
            gateway_addr: "127.0.0.1:0".to_owned(),
            external_players: external,
            // The bench measures the gateway, not its per-agent rate limit.
            agent_rate_limit: Some(10_000_000),
            ..RunArgs::defaults()?
        };
        eprintln!(
            "bench: {players} {} players, {} referees × {} matches",
            if args.external { "external" } else { "bot" },
            args.referees,
            args.referee_capacity
        );
        let (_, measured) = run_league_with(
            &run,
            async |gateways: &[String]| {
                let Some(gateway) = gateways.first().filter(|_| external > 0) else {
                    return Ok(None);
                };
                Ok(Some(FakeAgents::start(gateway, external).await?))
            },
            async |finished: &mut Finished, agents: &Option<FakeAgents>| {
                let mut measured = measure(players, finished).await?;
                if let Some(agents) = agents {
                    measured.overhead = Some(gateway_overhead(finished).await?);
                    check_agents(agents, measured.matches)?;
                }
                if let Some(duration) = &args.wrk {
                    measured.throughput = queries(finished, agents.as_ref(), duration, &args).await?;
                }
                Ok(measured)
            },
        )
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
    let schedule = crate::report::data::schedule(
        &mut finished.client,
        &finished.operator_token,
        &finished.league_id,
    )
    .await?;
    let mut durations = Vec::new();
    let mut player_calls = 0usize;
    for scheduled in schedule.iter().flat_map(|round| &round.matches) {
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
        overhead: None,
        throughput: Vec::new(),
        rounds: rounds::measure(&finished.database_url, &finished.league_id).await?,
    })
}

/// Every match reached the fake agents as two invitations, two parity calls and two GAME_OVERs.
fn check_agents(agents: &FakeAgents, matches: u32) -> anyhow::Result<()> {
    use std::sync::atomic::Ordering::Relaxed;
    let counts = agents.counts();
    let expected = 2 * u64::from(matches);
    let seen = (
        counts.invitations.load(Relaxed),
        counts.parity_calls.load(Relaxed),
        counts.game_overs.load(Relaxed),
        counts.unknown.load(Relaxed),
    );
    anyhow::ensure!(
        seen == (expected, expected, expected, 0),
        "the fake agents saw (invitations, parity calls, GAME_OVERs, unknown calls) = {seen:?}, \
         expected ({expected}, {expected}, {expected}, 0)"
    );
    Ok(())
}

/// The gateway's overhead histograms (crate league_gateway::bridge::overhead), read from its admin
/// server's `/metrics`.
async fn gateway_overhead(finished: &Finished) -> anyhow::Result<Overhead> {
    let (_, admin) = finished
        .admin_urls
        .iter()
        .find(|(name, _)| name.starts_with("gateway"))
        .context("the gateway announced no admin server")?;
    let text = fake_agent::get_text(&fake_agent::http_client(), &format!("{admin}/metrics")).await?;
    let per_match = spread(&text, "league_gateway_match_overhead_seconds", "")
        .context("no league_gateway_match_overhead_seconds in the gateway's metrics")?;
    let per_call = ["GAME_INVITATION", "CHOOSE_PARITY_CALL", "GAME_OVER"]
        .into_iter()
        .filter_map(|kind| {
            let labels = format!("message_type=\"{kind}\"");
            Some((
                kind.to_owned(),
                spread(&text, "league_gateway_bridge_overhead_seconds", &labels)?,
            ))
        })
        .collect();
    Ok(Overhead { per_match, per_call })
}

/// Reads the histogram `name` (the series whose labels, apart from `le`, are `labels`, e.g.
/// `message_type="GAME_OVER"`, or none) from OpenMetrics text.
fn spread(text: &str, name: &str, labels: &str) -> Option<Spread> {
    let mut buckets: Vec<(f64, u64)> = Vec::new();
    let mut sum = 0.0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name).and_then(|rest| rest.strip_prefix('_')) else {
            continue;
        };
        let (series, value) = match rest.split_once(' ') {
            Some((series, value)) => (series, value.split_whitespace().next().unwrap_or_default()),
            None => continue,
        };
        let (suffix, label_text) = match series.split_once('{') {
            Some((suffix, label_text)) => (suffix, label_text.trim_end_matches('}')),
            None => (series, ""),
        };
        let mut le = None;
        let mut others = Vec::new();
        for label in label_text.split(',').filter(|label| !label.is_empty()) {
            match label.strip_prefix("le=") {
                Some(bound) => le = Some(bound.trim_matches('"')),
                None => others.push(label),
            }
        }
        if others.join(",") != labels {
            continue;
        }
        match (suffix, le) {
            ("bucket", Some(bound)) => {
                let bound = if bound == "+Inf" {
                    f64::INFINITY
                } else {
                    bound.parse().ok()?
                };
                buckets.push((bound, value.parse().ok()?));
            }
            ("sum", None) => sum = value.parse().unwrap_or(0.0),
            _ => {}
        }
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last()?.1;
    let quantile = |q: f64| {
        let rank = q * total as f64;
        let mut below = (0.0, 0u64);
        for &(bound, count) in &buckets {
            if count as f64 >= rank && count > below.1 {
                if bound.is_infinite() {
                    return below.0;
                }
                let share = (rank - below.1 as f64) / (count - below.1) as f64;
                return below.0 + (bound - below.0) * share.clamp(0.0, 1.0);
            }
            below = (bound, count);
        }
        below.0
    };
    Some(Spread {
        count: total,
        mean: Duration::from_secs_f64(sum / total.max(1) as f64),
        p50: Duration::from_secs_f64(quantile(0.50)),
        p99: Duration::from_secs_f64(quantile(0.99)),
    })
}

/// wrk against the finished league's gateway: each call checked once by hand (a JSON-RPC error comes
/// back under HTTP 200, which wrk would count as a success), then measured.
async fn queries(
    finished: &Finished,
    agents: Option<&FakeAgents>,
    duration: &str,
    args: &BenchArgs,
) -> anyhow::Result<Vec<Throughput>> {
    let url = finished.gateway_urls.first().context("no gateway")?;
    let operator = finished.operator_token.expose_secret().to_owned();
    let script = std::env::temp_dir().join(format!("league-bench-{}.lua", std::process::id()));
    std::fs::write(&script, WRK_SCRIPT).context("writing the wrk script")?;
    let mut cases: Vec<(String, &str, Option<String>, Value)> = vec![
        ("ping".into(), "ping", None, json!({})),
        (
            "get_standings (operator)".into(),
            "get_standings",
            Some(operator.clone()),
            json!({}),
        ),
        (
            "league_query GET_STANDINGS (operator)".into(),
            "league_query",
            Some(operator.clone()),
            json!({"query_type": "GET_STANDINGS"}),
        ),
    ];
    if let Some(agent) = agents.and_then(|agents| agents.identities().into_iter().next()) {
        // An agent's full envelope with its token: the gateway's credential cache on every request.
        cases.push((
            "league_query GET_STANDINGS (agent)".into(),
            "league_query",
            None,
            json!({
                "protocol": "league.v2",
                "message_type": "LEAGUE_QUERY",
                "sender": format!("player:{}", agent.player_id),
                "timestamp": league_gateway::wire::timestamp::now(),
                "conversation_id": "bench-query",
                "auth_token": agent.token,
                "query_type": "GET_STANDINGS",
            }),
        ));
    }
    let client = fake_agent::http_client();
    let mut measured = Vec::new();
    for (call, method, token, params) in cases {
        let request = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
        let answer = fake_agent::post_json(&client, url, &request, token.as_deref()).await?;
        anyhow::ensure!(
            answer.get("result").is_some_and(|r| !r.is_null()) && answer["result"]["success"] != false,
            "{call} is refused: {answer}"
        );
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let mut wrk = tokio::process::Command::new("wrk");
        wrk.args([
            &format!("-t{}", args.wrk_threads),
            &format!("-c{}", args.wrk_connections),
            &format!("-d{duration}"),
            "-s",
        ])
        .arg(&script)
        .arg(url)
        .env("BENCH_METHOD", method)
        .env("BENCH_PARAMS", params.to_string())
        .env_remove("BENCH_TOKEN");
        if let Some(token) = &token {
            wrk.env("BENCH_TOKEN", token);
        }
        eprintln!("bench: wrk {call} (load average {load_average})");
        let output = wrk.output().await.context("running wrk (apt-get install wrk)")?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        anyhow::ensure!(
            output.status.success(),
            "wrk failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let line = stdout
            .lines()
            .find(|line| line.starts_with(&format!("{method}:")))
            .unwrap_or_default()
            .trim_start_matches(&format!("{method}: "))
            .to_owned();
        measured.push(Throughput {
            call,
            line,
            load_average,
        });
    }
    std::fs::remove_file(&script).ok();
    Ok(measured)
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
    let boundaries: Vec<_> = results.iter().map(|m| (m.players, &m.rounds)).collect();
    out.push_str(&rounds::render(&boundaries));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for m in results {
        if let Some(overhead) = &m.overhead {
            out.push_str(&format!(
                "\ngateway overhead, {} external players (time inside the bridge minus the agent's):\n\n| what | count | mean (ms) | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n",
                m.players
            ));
            let rows = std::iter::once(("per match".to_owned(), overhead.per_match)).chain(
                overhead
                    .per_call
                    .iter()
                    .map(|(kind, spread)| (format!("per {kind}"), *spread)),
            );
            for (what, s) in rows {
                out.push_str(&format!(
                    "| {what} | {} | {:.3} | {:.3} | {:.3} |\n",
                    s.count,
                    ms(s.mean),
                    ms(s.p50),
                    ms(s.p99)
                ));
            }
        }
        if !m.throughput.is_empty() {
            out.push_str(&format!(
                "\ngateway queries, {} players, wrk -t{} -c{} -d{}:\n\n| call | result | load average before |\n|---|---|---|\n",
                m.players,
                args.wrk_threads,
                args.wrk_connections,
                args.wrk.as_deref().unwrap_or_default()
            ));
            for t in &m.throughput {
                out.push_str(&format!("| {} | {} | {} |\n", t.call, t.line, t.load_average));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_from_a_histogram_in_openmetrics_text() {
        let text = "# HELP x_seconds something\n\
            # TYPE x_seconds histogram\n\
            x_seconds_sum{message_type=\"GAME_OVER\"} 0.25\n\
            x_seconds_count{message_type=\"GAME_OVER\"} 100\n\
            x_seconds_bucket{le=\"0.001\",message_type=\"GAME_OVER\"} 0\n\
            x_seconds_bucket{le=\"0.002\",message_type=\"GAME_OVER\"} 50\n\
            x_seconds_bucket{le=\"0.004\",message_type=\"GAME_OVER\"} 98\n\
            x_seconds_bucket{le=\"0.008\",message_type=\"GAME_OVER\"} 100\n\
            x_seconds_bucket{le=\"+Inf\",message_type=\"GAME_OVER\"} 100\n\
            x_seconds_bucket{le=\"0.001\",message_type=\"GAME_INVITATION\"} 7\n\
            x_seconds_bucket{le=\"+Inf\",message_type=\"GAME_INVITATION\"} 7\n";
        let s = spread(text, "x_seconds", "message_type=\"GAME_OVER\"").expect("found");
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        assert_eq!(s.count, 100);
        assert_eq!(ms(s.mean), 2.5);
        // The 50th of 100 is the top of the (1 ms, 2 ms] bucket; the 99th halfway into (4 ms, 8 ms].
        assert_eq!(ms(s.p50), 2.0);
        assert_eq!(ms(s.p99), 6.0);
        assert!(spread(text, "x_seconds", "").is_none());
        assert_eq!(
            spread(text, "x_seconds", "message_type=\"GAME_INVITATION\"").map(|s| s.count),
            Some(7)
        );
    }
}
