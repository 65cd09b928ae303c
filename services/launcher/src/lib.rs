//! The `league` command's subcommands: each service, and the local launcher.

pub mod bench;
pub mod children;
pub mod run;
pub mod services;
pub mod table;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the league manager (configured by LEAGUE_* variables and DATABASE_URL).
    Manager,
    /// Run a referee worker.
    Referee,
    /// Run a player host with bot players.
    Player,
    /// Run a whole league on this machine and print the standings.
    Run(run::RunArgs),
    /// Run leagues of instant bots and report throughput, latency and memory.
    Bench(bench::BenchArgs),
}

pub async fn execute(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Manager => services::manager().await,
        Command::Referee => services::referee().await,
        Command::Player => services::player().await,
        Command::Run(args) => run::run(args).await,
        Command::Bench(args) => bench::bench(args).await,
    }
}
