//! The leagues the bench plays, through `league run`'s machinery: one league of bots or of fake
//! external agents (the test kit's, answering at once and recording nothing), or several leagues of
//! bots at once on one system.

use league_launcher::run::{Finished, RunArgs, run_league, run_league_with};
use league_testkit::{Behaviour, FakeAgents, Registered};

use crate::args::BenchArgs;
use crate::measure::{Measured, completed, measure};
use crate::overhead::gateway_overhead;
use crate::wrk::queries;
use crate::{concurrent, cpu};

/// Plays and measures one league of `players`, bots or (`external`) fake external agents.
pub async fn league(players: u32, external: bool, args: &BenchArgs) -> anyhow::Result<Measured> {
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
pub async fn leagues_at_once(players: u32, args: &BenchArgs) -> anyhow::Result<(Vec<Measured>, i64)> {
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
    let schedule = league_launcher::args::matches(players, run.cycles);
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
