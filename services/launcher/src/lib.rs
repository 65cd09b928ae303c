//! The `league` command's subcommands: each service, and the local launcher.

pub mod args;
pub mod bench;
pub mod children;
pub mod clean;
pub mod fake_agent;
pub mod interrupt;
pub mod progress;
pub mod run;
pub mod services;
pub mod table;
pub mod warnings;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the league manager (configured by LEAGUE_* variables and DATABASE_URL).
    Manager,
    /// Apply the database migrations to DATABASE_URL and exit (before the manager starts; upgrades).
    Migrate,
    /// Run a referee worker.
    Referee,
    /// Run a player host with bot players.
    Player,
    /// Run the gateway: league.v2 JSON-RPC and MCP on /mcp for external agents.
    Gateway,
    /// List external agents' protocol-compliance warnings (operator; LEAGUE_MANAGER_URL, LEAGUE_OPERATOR_TOKEN).
    Warnings(warnings::WarningsArgs),
    /// Run a whole league on this machine and print the standings.
    Run(run::RunArgs),
    /// Drop databases `league run` kept, and stop its private Postgres cluster.
    Clean(clean::CleanArgs),
    /// Run leagues of instant bots (or fake external agents) and report throughput, latency and memory.
    Bench(bench::BenchArgs),
}

pub async fn execute(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Manager => services::manager().await,
        Command::Migrate => services::migrate().await,
        Command::Referee => services::referee().await,
        Command::Player => services::player().await,
        Command::Gateway => services::gateway().await,
        Command::Warnings(args) => warnings::warnings(args).await,
        Command::Run(args) => run::run(args).await,
        Command::Clean(args) => clean::clean(args).await,
        Command::Bench(args) => bench::bench(args).await,
    }
}
