//! `league`: one binary for every service (`league manager`, `league referee`, `league player`) and the
//! command that runs a whole league on this machine (`league run`). Compose, Kubernetes and the launcher
//! all run these same subcommands with the same `LEAGUE_*` configuration.

use std::process::ExitCode;

use clap::Parser;

use league_launcher::{Command, execute};

#[derive(Debug, Parser)]
#[command(
    name = "league",
    version,
    about = "Round-robin leagues of autonomous agents (league.v2)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("league: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(execute(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("league: {error:#}");
            ExitCode::FAILURE
        }
    }
}
