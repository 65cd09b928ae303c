//! The `league` command's subcommands: each service, and the local launcher.

pub mod args;
pub mod capacity;
pub mod children;
pub mod clean;
pub mod interrupt;
pub mod llm_bots;
pub mod operator;
pub mod orphans;
pub mod output;
pub mod own_ports;
pub mod probe;
pub mod progress;
pub mod report;
pub mod run;
pub mod run_state_dir;
pub mod serve;
pub mod services;
pub mod state;
pub mod supervise;
pub mod system;
pub mod table;
pub mod waiting;
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
    /// Run a player host with bot players (configured by LEAGUE_* variables).
    PlayerHost,
    /// One player's standing and matches (`league player P01`; operator).
    Player(operator::player::PlayerArgs),
    /// The registered players: name, strategy or external, last seen, leagues, warnings (operator).
    Players(operator::players::PlayersArgs),
    /// Run the gateway: league.v2 JSON-RPC and MCP on /mcp for external agents.
    Gateway,
    /// List external agents' protocol-compliance warnings (operator; LEAGUE_MANAGER_URL, LEAGUE_OPERATOR_TOKEN).
    Warnings(warnings::WarningsArgs),
    /// List the leagues of the running system (operator; a league database's with --database).
    Leagues(operator::leagues::LeaguesArgs),
    /// Create a league on the running system (operator).
    Create(operator::create::CreateArgs),
    /// Start a league with the players registered so far (operator).
    Start(operator::start::StartArgs),
    /// Enroll registered players in a league that is registering; they keep their ids (operator).
    Enroll(operator::enroll::EnrollArgs),
    /// Stop handing out a running league's matches; the running ones finish (operator).
    Pause(operator::pause::PauseArgs),
    /// Hand out a paused league's matches again (operator).
    Resume(operator::pause::PauseArgs),
    /// End a league that is not over: its unfinished matches are cancelled, nobody charged (operator).
    Cancel(operator::cancel::CancelArgs),
    /// Take players out of a league: each unfinished match of theirs is a forfeit they lose (operator).
    Withdraw(operator::withdraw::WithdrawArgs),
    /// A league's standings, now or after each round (operator; a past league with --database).
    Standings(operator::standings::StandingsArgs),
    /// A league's schedule, with each match's outcome (operator; a past league with --database).
    Schedule(operator::schedule::ScheduleArgs),
    /// One match: players with names, choices, draw, result, times, transcript (operator; a past league
    /// with --database).
    Match(operator::match_view::MatchArgs),
    /// A league's ratings as its results folder's ratings.csv has them: points per match ± standard error (operator).
    Ratings(operator::ratings::RatingsArgs),
    /// The registered referees, revoked ones too (operator).
    Referees(operator::referees::RefereesArgs),
    /// Revoke a referee: its reports and registrations are refused, its unfinished matches go to other
    /// referees uncharged, and the referee registration token is rotated (operator).
    RevokeReferee(operator::referees::RevokeRefereeArgs),
    /// Print the token a referee must present to register, or `--rotate` it (operator).
    RefereeToken(operator::referees::RefereeTokenArgs),
    /// Run the whole system on this machine until Ctrl-C: manager, gateway, referees, bots.
    Serve(serve::ServeArgs),
    /// Run a whole league on this machine and print the standings.
    Run(run::RunArgs),
    /// Play a short scripted exchange with a player agent and print its compliance report.
    Probe(probe::ProbeArgs),
    /// Write a league's results folder (tables, charts, index.html, transcripts, provenance, checksums)
    /// from its database or manager. A folder that holds another league is never written over; one
    /// that holds this league's results is refused unless --force, which rebuilds it whole.
    Report(report::ReportArgs),
    /// Check a results folder on its own: its checksums, every result against its transcript, and the
    /// standings, head-to-head and ratings computed again from the transcripts. Exits 0 only when all agree.
    Verify(report::verify::VerifyArgs),
    /// Drop the databases `league run` kept and stop its private Postgres cluster (no arguments), or the
    /// databases named (`league serve`'s too).
    Clean(clean::CleanArgs),
}

pub async fn execute(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Manager => services::manager().await,
        Command::Migrate => services::migrate().await,
        Command::Referee => services::referee().await,
        Command::Gateway => services::gateway().await,
        Command::Warnings(args) => warnings::warnings(args).await,
        Command::Leagues(args) => operator::leagues::leagues(args).await,
        Command::Create(args) => operator::create::create(args).await,
        Command::Start(args) => operator::start::start(args).await,
        Command::Enroll(args) => operator::enroll::enroll(args).await,
        Command::Pause(args) => operator::pause::pause(args).await,
        Command::Resume(args) => operator::pause::resume(args).await,
        Command::Cancel(args) => operator::cancel::cancel(args).await,
        Command::Withdraw(args) => operator::withdraw::withdraw(args).await,
        Command::Standings(args) => operator::standings::standings(args).await,
        Command::Schedule(args) => operator::schedule::schedule(args).await,
        Command::Match(args) => operator::match_view::show(args).await,
        Command::PlayerHost => services::player().await,
        Command::Player(args) => operator::player::show(args).await,
        Command::Players(args) => operator::players::players(args).await,
        Command::Ratings(args) => operator::ratings::ratings(args).await,
        Command::Referees(args) => operator::referees::referees(args).await,
        Command::RevokeReferee(args) => operator::referees::revoke(args).await,
        Command::RefereeToken(args) => operator::referees::token(args).await,
        Command::Serve(args) => serve::serve(args).await,
        Command::Run(args) => run::run(args).await,
        Command::Report(args) => report::report(args).await,
        Command::Verify(args) => report::verify::verify(args).await,
        Command::Clean(args) => clean::clean(args).await,
        Command::Probe(args) => probe::probe(args).await,
    }
}
