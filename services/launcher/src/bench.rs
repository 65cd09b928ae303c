//! `league bench`: leagues of players that answer at once — bots, or with `--external` fake external
//! agents reached through the gateway (the test kit's `FakeAgents`, answering at once and recording
//! nothing) — run through `league run`'s machinery
//! (separate processes, real gRPC, real Postgres), measured from what the system itself recorded: the
//! league's start and completion times in Postgres, every match's transcript, each process's peak
//! memory, and for external players the gateway's own overhead histograms. `--wrk` then measures the
//! finished league's gateway with wrk: JSON-RPC queries per second. `--concurrent-leagues K` plays K
//! leagues at once on one system instead (bench/concurrent.rs).

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use futures::{StreamExt, TryStreamExt};
use league_proto::v2::transcript_entry::Entry;
use league_proto::v2::{
    Direction, GetLeagueStatusRequest, GetLeagueStatusResponse, GetMatchRequest, LeagueStatus,
    TranscriptEntry,
};
use league_runtime::credentials::operator_request;

use self::cpu::CpuUsed;
use self::exchanges::{Exchanges, player_exchanges};
use self::overhead::{Overhead, gateway_overhead};
use self::wrk::{Throughput, queries};
use league_testkit::{Behaviour, FakeAgents, Registered};

mod concurrent;
mod cpu;
mod exchanges;
mod floor;
mod overhead;
mod pairs;
mod rounds;
mod wrk;
use crate::run::{Finished, RunArgs, run_league, run_league_with};

/// How many match transcripts the bench reads at once after a league.
const TRANSCRIPT_READS: usize = 8;

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// League sizes to run, e.g. 20,50,200.
    #[arg(long, value_delimiter = ',', default_values_t = [20, 50, 200])]
    pub players: Vec<u32>,
    /// Referee processes.
    #[arg(long, default_value_t = 2)]
    pub referees: u32,
    /// Matches each referee runs at once (the referee's own default).
    #[arg(long, default_value_t = league_referee::app::DEFAULT_CAPACITY)]
    pub referee_capacity: u32,
    /// Every player is a fake external agent (one HTTP server in this process, one path per player)
    /// that registers through the gateway and answers at once, instead of a bot.
    #[arg(long)]
    pub external: bool,
    /// With --external: each league size is played N times by bots and N times by external agents,
    /// alternated (bots, then external, N times), and each pair's walls and their ratio are printed with
    /// the median ratio. The machine's speed drifts from one minute to the next; pairs run side by side
    /// compare the two on the same machine.
    #[arg(long, value_name = "N", requires = "external", value_parser = clap::value_parser!(u32).range(1..))]
    pub against_bots: Option<u32>,
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
    /// Play K leagues of each size at once on one system (one manager, these referees, a player host of
    /// its own bots for each league), started together: the whole's matches a second from the first
    /// start to the last completion, and each league's wall and round gaps.
    #[arg(
        long,
        value_name = "K",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..),
        conflicts_with_all = ["external", "wrk"]
    )]
    pub concurrent_leagues: u32,
}

/// One league's numbers.
#[derive(Debug)]
struct Measured {
    league_id: String,
    /// Its start and completion, milliseconds since the epoch (the manager's clock).
    started_ms: f64,
    completed_ms: f64,
    players: u32,
    matches: u32,
    wall: Duration,
    match_p50: Duration,
    match_p99: Duration,
    player_calls_per_match: f64,
    /// The gRPC exchanges those calls took (ADR 0058: many calls to an exchange).
    exchanges: Exchanges,
    notifications_per_match: f64,
    peak_rss_kib: Vec<(String, u64)>,
    /// The CPU the whole run had used when its leagues completed (shared by leagues played at once).
    cpu: CpuUsed,
    overhead: Option<Overhead>,
    throughput: Vec<Throughput>,
    rounds: rounds::RoundBoundaries,
}

pub async fn bench(args: BenchArgs) -> anyhow::Result<()> {
    if args.concurrent_leagues > 1 {
        let mut out = String::new();
        for &players in &args.players {
            let (measured, deadlocks) = leagues_at_once(players, &args).await?;
            out.push_str(&render_together(players, &measured, deadlocks, &args));
        }
        println!("{out}");
        return Ok(());
    }
    let mut results = Vec::new();
    let mut comparisons = Vec::new();
    for &players in &args.players {
        match args.against_bots {
            Some(pairs) => {
                let mut walls = Vec::new();
                for _ in 0..pairs {
                    let bots = league(players, false, &args).await?;
                    let external = league(players, true, &args).await?;
                    walls.push(pairs::Pair {
                        bots: bots.wall,
                        external: external.wall,
                    });
                    results.push(external);
                }
                comparisons.push((players, walls));
            }
            None => results.push(league(players, args.external, &args).await?),
        }
    }
    println!("{}{}", render(&results, &args), pairs::render(&comparisons));
    Ok(())
}

/// Plays and measures one league of `players`, bots or (`external`) fake external agents.
async fn league(players: u32, external: bool, args: &BenchArgs) -> anyhow::Result<Measured> {
    let (bots, external) = if external { (0, players) } else { (players, 0) };
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
        if external > 0 { "external" } else { "bot" },
        args.referees,
        args.referee_capacity
    );
    let (_, measured) = run_league_with(
        &run,
        async |gateways: &[String]| {
            let Some(gateway) = gateways.first().filter(|_| external > 0) else {
                return Ok(None);
            };
            let agents = FakeAgents::start_unrecorded(Behaviour::Instant).await;
            let players = agents.register_players(gateway, external).await?;
            Ok(Some(External { agents, players }))
        },
        async |finished: &mut Finished, external: &Option<External>| {
            let league_id = finished.league_id.clone();
            completed(finished, &league_id).await?;
            let cpu = cpu::used(finished).await?;
            let mut measured = measure(players, finished, &league_id, cpu).await?;
            if let Some(external) = external {
                measured.overhead = Some(gateway_overhead(finished).await?);
                check_agents(&external.agents, measured.matches)?;
            }
            if let Some(duration) = &args.wrk {
                let agent = external.as_ref().and_then(|external| external.players.first());
                measured.throughput = queries(finished, agent, duration, args).await?;
            }
            Ok(measured)
        },
    )
    .await?;
    Ok(measured)
}

/// Plays `args.concurrent_leagues` leagues of `players` bots at once on one system and measures each.
async fn leagues_at_once(players: u32, args: &BenchArgs) -> anyhow::Result<(Vec<Measured>, i64)> {
    let run = RunArgs {
        players,
        referees: args.referees,
        referee_capacity: args.referee_capacity,
        quiet: true,
        gateway_addr: "127.0.0.1:0".to_owned(),
        leagues: args.concurrent_leagues,
        ..RunArgs::defaults()?
    };
    eprintln!(
        "bench: {} leagues of {players} bot players at once, {} referees × {} matches",
        args.concurrent_leagues, args.referees, args.referee_capacity
    );
    let (_, measured) = run_league(&run, async |finished: &mut Finished| {
        let leagues = finished.leagues.clone();
        for league_id in &leagues {
            completed(finished, league_id).await?;
        }
        let cpu = cpu::used(finished).await?;
        let mut each = Vec::new();
        for league_id in &leagues {
            each.push(measure(players, finished, league_id, cpu.clone()).await?);
        }
        let deadlocks = concurrent::deadlocks(&finished.database_url).await?;
        anyhow::Ok((each, deadlocks))
    })
    .await?;
    let (measured, deadlocks) = measured;
    let schedule = crate::args::matches(players, run.cycles);
    for league in &measured {
        anyhow::ensure!(
            u64::from(league.matches) == schedule,
            "league {} played {} matches of {schedule}",
            league.league_id,
            league.matches
        );
    }
    Ok((measured, deadlocks))
}

/// League `league_id`'s status once it is completed and its league events are all delivered (the last
/// round's notifications may still be on their way when it completes).
async fn completed(finished: &mut Finished, league_id: &str) -> anyhow::Result<GetLeagueStatusResponse> {
    loop {
        let status = finished
            .client
            .get_league_status(operator_request(
                &finished.operator_token,
                GetLeagueStatusRequest {
                    league_id: league_id.to_owned(),
                },
            ))
            .await
            .with_context(|| format!("reading league {league_id}'s status"))?
            .into_inner();
        anyhow::ensure!(
            status.status != LeagueStatus::Cancelled as i32,
            "league {league_id} was cancelled"
        );
        if status.status == LeagueStatus::Completed as i32 && status.notifications_pending == 0 {
            return Ok(status);
        }
        // Polling what the manager reports, as `league run` follows its league: not synchronisation.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `t` in milliseconds since the epoch.
fn millis(t: &prost_types::Timestamp) -> f64 {
    t.seconds as f64 * 1e3 + f64::from(t.nanos) / 1e6
}

/// What the bench keeps of one match's transcript.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MatchSummary {
    /// From its first entry to its last, by the referee's clock (`None`: no entry has a time).
    duration: Option<Duration>,
    /// The messages its referee sent to the players.
    player_calls: usize,
}

impl MatchSummary {
    fn of(entries: &[TranscriptEntry]) -> Self {
        let times = || entries.iter().filter_map(|entry| entry.at.as_ref().map(millis));
        let duration = match (times().reduce(f64::min), times().reduce(f64::max)) {
            (Some(first), Some(last)) => Some(Duration::from_secs_f64((last - first).max(0.0) / 1e3)),
            _ => None,
        };
        let player_calls = entries
            .iter()
            .filter(|entry| matches!(&entry.entry, Some(Entry::Message(m)) if m.direction == Direction::ToPlayer as i32))
            .count();
        Self {
            duration,
            player_calls,
        }
    }
}

/// Measures league `league_id` of the finished system once it is completed (leagues played at once
/// may end after the one the run followed) and its league events are all delivered.
async fn measure(
    players: u32,
    finished: &mut Finished,
    league_id: &str,
    cpu: CpuUsed,
) -> anyhow::Result<Measured> {
    let status = completed(finished, league_id).await?;
    let (Some(started), Some(completed)) = (&status.started_at, &status.completed_at) else {
        anyhow::bail!("the league reports no start or completion time");
    };
    let (started_ms, completed_ms) = (millis(started), millis(completed));
    let wall = Duration::from_secs_f64(((completed_ms - started_ms) / 1e3).max(0.0));
    let schedule =
        crate::report::data::schedule(&mut finished.client, &finished.operator_token, league_id).await?;
    // Every match's transcript, a few reads at a time: one after the other they took longer than a
    // 200-player league itself (20 s for 19,900 matches). Each is summed up as it arrives: kept whole,
    // a 1,000-player league's 499,500 transcripts took 6.7 GB of the bench's memory.
    let client = &finished.client;
    let token = &finished.operator_token;
    let summaries: Vec<MatchSummary> =
        futures::stream::iter(schedule.iter().flat_map(|round| &round.matches))
            .map(|scheduled| {
                let mut client = client.clone();
                async move {
                    let detail = client
                        .get_match(operator_request(
                            token,
                            GetMatchRequest {
                                league_id: league_id.to_owned(),
                                match_id: scheduled.match_id.clone(),
                            },
                        ))
                        .await
                        .with_context(|| format!("reading match {}", scheduled.match_id))?
                        .into_inner();
                    anyhow::Ok(MatchSummary::of(
                        &detail.transcript.map(|t| t.entries).unwrap_or_default(),
                    ))
                }
            })
            .buffer_unordered(TRANSCRIPT_READS)
            .try_collect()
            .await?;
    let mut durations: Vec<Duration> = summaries.iter().filter_map(|summary| summary.duration).collect();
    let player_calls: usize = summaries.iter().map(|summary| summary.player_calls).sum();
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
        league_id: league_id.to_owned(),
        started_ms,
        completed_ms,
        players,
        matches,
        wall,
        match_p50: percentile(0.50),
        match_p99: percentile(0.99),
        player_calls_per_match: player_calls as f64 / f64::from(matches.max(1)),
        exchanges: player_exchanges(finished).await?,
        notifications_per_match: notifications / f64::from(matches.max(1)),
        peak_rss_kib: finished.peak_rss_kib.clone(),
        cpu,
        overhead: None,
        throughput: Vec::new(),
        rounds: rounds::measure(&finished.database_url, league_id).await?,
    })
}

/// The external players: fake agents registered through the gateway.
#[derive(Debug)]
struct External {
    agents: FakeAgents,
    players: Vec<Registered>,
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

fn render(results: &[Measured], args: &BenchArgs) -> String {
    let mut out = format!(
        "referees: {} × capacity {}\n\n| players | matches | wall (s) | matches/s | match p50 (ms) | match p99 (ms) | player RPCs/match | player exchanges/match | calls/exchange (mean, max ≤) | notifications/match | peak RSS (MB) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        args.referees, args.referee_capacity
    );
    for m in results {
        let rss: Vec<String> = m
            .peak_rss_kib
            .iter()
            .map(|(name, kib)| format!("{name} {:.1}", *kib as f64 / 1024.0))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {:.2} | {:.0} | {:.2} | {:.2} | {:.1} | {:.3} | {:.1}, {} | {:.2} | {} |\n",
            m.players,
            m.matches,
            m.wall.as_secs_f64(),
            f64::from(m.matches) / m.wall.as_secs_f64().max(1e-9),
            m.match_p50.as_secs_f64() * 1e3,
            m.match_p99.as_secs_f64() * 1e3,
            m.player_calls_per_match,
            m.exchanges.exchanges as f64 / f64::from(m.matches.max(1)),
            m.exchanges.mean_batch(),
            m.exchanges.largest_batch_at_most,
            m.notifications_per_match,
            rss.join(", ")
        ));
    }
    out.push_str(&cpu::header("players"));
    for m in results {
        out.push_str(&cpu::row(&m.players.to_string(), &m.cpu, u64::from(m.matches)));
    }
    let boundaries: Vec<_> = results
        .iter()
        .map(|m| (m.players.to_string(), &m.rounds))
        .collect();
    out.push_str(&rounds::render("players", &boundaries));
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
            let ping = m.throughput.iter().find(|t| t.call == "ping");
            if let (Some(_), Some(per_exchange)) = (&m.overhead, ping.and_then(|t| t.per_exchange)) {
                let gateway: Duration = m
                    .cpu
                    .by
                    .iter()
                    .filter(|(name, _)| name.starts_with("gateway"))
                    .map(|(_, t)| *t)
                    .sum();
                out.push_str(&floor::render(gateway / m.matches.max(1), per_exchange));
            }
        }
    }
    out
}

/// Leagues played at once: the whole and a row per league, the processes' peak memory (one system for
/// all), and each league's round boundaries.
fn render_together(players: u32, measured: &[Measured], deadlocks: i64, args: &BenchArgs) -> String {
    let leagues: Vec<concurrent::League> = measured
        .iter()
        .map(|m| concurrent::League {
            league_id: m.league_id.clone(),
            matches: m.matches,
            started_ms: m.started_ms,
            completed_ms: m.completed_ms,
            gap: m.rounds.gap,
        })
        .collect();
    let rss: Vec<String> = measured
        .first()
        .map(|m| m.peak_rss_kib.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|(name, kib)| format!("{name} {:.1}", *kib as f64 / 1024.0))
        .collect();
    let boundaries: Vec<_> = measured
        .iter()
        .map(|m| (m.league_id.clone(), &m.rounds))
        .collect();
    let cpu = measured.first().map(|m| {
        let matches = measured.iter().map(|m| u64::from(m.matches)).sum();
        format!(
            "{}{}",
            cpu::header("leagues"),
            cpu::row(&format!("{} × {players}", measured.len()), &m.cpu, matches)
        )
    });
    format!(
        "referees: {} × capacity {}\n{}{}\npeak RSS (MB): {}\n{}{}",
        args.referees,
        args.referee_capacity,
        concurrent::render(players, &leagues),
        concurrent::render_deadlocks(deadlocks),
        rss.join(", "),
        cpu.unwrap_or_default(),
        rounds::render("league", &boundaries)
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::BenchArgs;

    #[derive(Debug, Parser)]
    struct Bench {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn parse(args: &[&str]) -> Result<BenchArgs, clap::Error> {
        Bench::try_parse_from(std::iter::once("bench").chain(args.iter().copied())).map(|bench| bench.args)
    }

    #[test]
    fn pairs_are_external_leagues_against_bots_and_at_least_one() {
        let args = parse(&["--external", "--against-bots", "3"]).expect("valid");
        assert_eq!(args.against_bots, Some(3));
        assert!(parse(&["--against-bots", "3"]).is_err(), "pairs need --external");
        assert!(
            parse(&["--external", "--against-bots", "0"]).is_err(),
            "no pairs is no comparison"
        );
    }

    #[test]
    fn concurrent_leagues_are_bots_and_at_least_one() {
        assert_eq!(parse(&[]).expect("valid").concurrent_leagues, 1);
        let args = parse(&["--concurrent-leagues", "10", "--players", "50"]).expect("valid");
        assert_eq!((args.concurrent_leagues, args.players), (10, vec![50]));
        assert!(parse(&["--concurrent-leagues", "0"]).is_err());
        assert!(parse(&["--concurrent-leagues", "2", "--external"]).is_err());
        assert!(parse(&["--concurrent-leagues", "2", "--wrk", "1s"]).is_err());
    }

    #[test]
    fn a_match_is_summed_up_by_its_span_of_times_and_its_calls_to_players() {
        use league_proto::v2::transcript_entry::Entry;
        use league_proto::v2::{Direction, MessageRecord, StateTransition, TranscriptEntry};
        use std::time::Duration;

        use super::MatchSummary;

        let at = |millis: i64| prost_types::Timestamp {
            seconds: millis / 1000,
            nanos: i32::try_from(millis % 1000).expect("under a second") * 1_000_000,
        };
        let message = |millis, direction: Direction| TranscriptEntry {
            at: Some(at(millis)),
            entry: Some(Entry::Message(MessageRecord {
                direction: direction as i32,
                ..MessageRecord::default()
            })),
        };
        let entries = [
            TranscriptEntry {
                at: Some(at(10_250)),
                entry: Some(Entry::StateTransition(StateTransition::default())),
            },
            message(10_000, Direction::ToPlayer),
            message(10_400, Direction::FromPlayer),
            message(10_300, Direction::ToPlayer),
            TranscriptEntry {
                at: None,
                entry: Some(Entry::Message(MessageRecord {
                    direction: Direction::ToPlayer as i32,
                    ..MessageRecord::default()
                })),
            },
        ];
        assert_eq!(
            MatchSummary::of(&entries),
            MatchSummary {
                duration: Some(Duration::from_millis(400)),
                player_calls: 3,
            },
            "the earliest to the latest time, whatever their order; every message to a player"
        );
        assert_eq!(
            MatchSummary::of(&[]),
            MatchSummary {
                duration: None,
                player_calls: 0,
            }
        );
    }
}
