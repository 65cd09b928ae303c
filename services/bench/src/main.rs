//! `league-bench`: leagues of players that answer at once — bots, or with `--external` fake external
//! agents reached through the gateway — run through `league run`'s machinery (separate processes, real
//! gRPC, real Postgres) and measured from what the system itself recorded (src/measure.rs). `--wrk`
//! then measures the finished league's gateway with wrk: JSON-RPC queries per second.
//! `--concurrent-leagues K` plays K leagues at once on one system instead (src/concurrent.rs). A tool
//! for measuring, apart from the shipped `league` binary: it holds the test kit's fake agents. Its
//! services are its own child processes (`league-bench manager`, …), as `league run` starts `league`'s.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use league_launcher::children;
use league_launcher::run::Interrupted;

use self::args::BenchArgs;

mod args;
mod concurrent;
mod cpu;
mod exchanges;
mod floor;
mod measure;
mod overhead;
mod pairs;
mod play;
mod render;
mod rounds;
mod wrk;

/// The same allocator as the shipped `league` (ADR 0033), so that what is measured is what ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "league-bench",
    about = "Run leagues of instant bots (or fake external agents) and report throughput, latency and memory",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// The services of the bench's system, started by the bench itself (not for calling by hand).
    #[command(subcommand)]
    service: Option<Service>,
    #[command(flatten)]
    args: BenchArgs,
}

/// The services a league run starts, each as `league-bench <service>` (as `league run` starts `league
/// <service>`): the same code as the shipped binary's.
#[derive(Debug, Subcommand)]
enum Service {
    #[command(hide = true)]
    Manager,
    #[command(hide = true)]
    Referee,
    #[command(hide = true)]
    PlayerHost,
    #[command(hide = true)]
    Gateway,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = children::die_with_parent() {
        eprintln!("league-bench: {error:#}");
        return ExitCode::FAILURE;
    }
    let runtime = match league_runtime::threads::runtime() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("league-bench: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    let command = match cli.service {
        None => return finish(runtime.block_on(bench(cli.args))),
        Some(Service::Manager) => league_launcher::Command::Manager,
        Some(Service::Referee) => league_launcher::Command::Referee,
        Some(Service::PlayerHost) => league_launcher::Command::PlayerHost,
        Some(Service::Gateway) => league_launcher::Command::Gateway,
    };
    finish(runtime.block_on(league_launcher::execute(command)))
}

/// The exit status of what ran: an interrupted run's own, as `league run`'s.
fn finish(outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => match error.downcast_ref::<Interrupted>() {
            Some(interrupted) => {
                eprintln!("{interrupted}");
                ExitCode::from(interrupted.exit_code())
            }
            None => {
                eprintln!("league-bench: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Plays and measures the leagues `args` asks for, and prints the tables.
async fn bench(args: BenchArgs) -> anyhow::Result<()> {
    if args.concurrent_leagues > 1 {
        let mut out = String::new();
        for &players in &args.players {
            let (measured, deadlocks) = play::leagues_at_once(players, &args).await?;
            out.push_str(&render::render_together(players, &measured, deadlocks, &args));
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
                    let bots = play::league(players, false, &args).await?;
                    let external = play::league(players, true, &args).await?;
                    walls.push(pairs::Pair {
                        bots: bots.wall,
                        external: external.wall,
                    });
                    results.push(external);
                }
                comparisons.push((players, walls));
            }
            None => results.push(play::league(players, args.external, &args).await?),
        }
    }
    println!(
        "{}{}",
        render::render(&results, &args),
        pairs::render(&comparisons)
    );
    Ok(())
}
