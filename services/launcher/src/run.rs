//! `league run`: a whole league on this machine. Finds Postgres (starting a private cluster if only the
//! binaries are installed), creates a fresh database, starts the manager, the referees and a player host
//! as separate processes of this same binary over real gRPC on loopback, follows the league to its end,
//! prints the standings and the champion, and stops everything.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use clap::Args;
use league_domain::{GameType, LeagueId};
use league_manager::postgres;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{
    GetLeagueStatusRequest, GetLeagueStatusResponse, GetStandingsRequest, LeagueStatus, StartLeagueRequest,
};
use league_runtime::credentials::operator_request;
use secrecy::{ExposeSecret, SecretString};

pub use crate::interrupt::Interrupted;

use crate::args;
use crate::capacity::Referees;
use crate::clean::{self, RUN_DATABASE_PREFIX};
use crate::interrupt::Signals;
use crate::progress::Progress;
use crate::run_state_dir::RunStateDir;
use crate::state::State;
use crate::system::{self, Plan, RefereeRegistration, Running};
use crate::table;
use crate::waiting::Waiting;
use league_report::RUN_RESULTS;
use league_report::results_folder;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The league's id, which names its results folder too (default: the game and the time in UTC,
    /// `even_odd-20261129-0212`, with `-2`, `-3` … when that folder exists). A folder that exists is
    /// never written over: an id whose folder exists is refused.
    #[arg(long)]
    pub league: Option<LeagueId>,
    /// Bot players in the league.
    #[arg(long, default_value_t = 8)]
    pub players: u32,
    /// Referee processes (0: only external referees, registered through the gateway, run matches).
    /// Default: one per core of this machine (docs/operations.md, "Referee capacity").
    #[arg(long, default_value_t = Referees::of_this_machine().referees)]
    pub referees: u32,
    /// Matches each referee runs at once.
    #[arg(long, default_value_t = Referees::of_this_machine().capacity)]
    pub referee_capacity: u32,
    #[arg(
        long,
        help = league_player::behaviour::help(),
        default_value_t = league_player::strategy::StrategyKind::every(),
        value_parser = args::strategies
    )]
    pub strategies: String,
    #[arg(long, help = args::game_help(), default_value_t = GameType::default())]
    pub game: GameType,
    #[command(flatten)]
    pub timing: args::TimingArgs,
    /// Times every pairing is played; each second cycle swaps the seats (2: a double round robin).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub cycles: u32,
    /// Makes the bots' choices reproducible (the referee's draw stays random).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where a private Postgres cluster lives if one must be started.
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: PathBuf,
    /// Give up if the league has not finished by then.
    #[arg(long, default_value = "30m", allow_hyphen_values = true, value_parser = args::positive_duration)]
    pub deadline: String,
    /// Print only the final standings and the champion (no addresses, progress or summary).
    #[arg(long)]
    pub quiet: bool,
    /// Keep the run's database afterwards (and a private Postgres cluster running); without it, a
    /// finished run drops its database. An interrupted or failed run always keeps it.
    #[arg(long)]
    pub keep: bool,
    /// Where the gateway serves `/mcp` for external agents (`…:0` picks a free port).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub gateway_addr: String,
    /// Keep the gateway and its live page up after the league ends, showing the champion, until Ctrl-C
    /// (the other services stop then too). With --think-time, a league people can watch.
    #[arg(long)]
    pub keep_page: bool,
    /// External agents the league waits for (they register through the gateway) besides the bots.
    #[arg(long, default_value_t = 0)]
    pub external_players: u32,
    /// Gateway replicas (the first on `--gateway-addr`, the others on free ports), as behind a load
    /// balancer: a reply may reach a replica other than the one waiting for it.
    #[arg(long, default_value_t = 1)]
    pub gateways: u32,
    /// Requests per second one agent (or address) may make at the gateway (LEAGUE_AGENT_RATE_LIMIT;
    /// the gateway's default when not given).
    #[arg(long)]
    pub agent_rate_limit: Option<u32>,
    /// Leagues played at once, each with `players` bots of its own, started together once all are in;
    /// the run follows the first. Not an option of `league run` (one league, one results folder): the
    /// bench's `--concurrent-leagues`.
    #[arg(skip = 1_u32)]
    pub leagues: u32,
}

impl RunArgs {
    /// What `league run` without options would do (callers change what they need).
    pub fn defaults() -> anyhow::Result<Self> {
        #[derive(Debug, clap::Parser)]
        struct Only {
            #[command(flatten)]
            run: RunArgs,
        }
        Ok(<Only as clap::Parser>::try_parse_from(["run"])?.run)
    }
}

/// A finished league whose services are still up, for whoever wants to look at it before they stop.
#[derive(Debug)]
pub struct Finished {
    pub client: ManagerServiceClient<league_runtime::grpc::GrpcChannel>,
    pub operator_token: SecretString,
    pub league_id: String,
    pub status: GetLeagueStatusResponse,
    /// Peak resident memory of each service process, in KiB.
    pub peak_rss_kib: Vec<(String, u64)>,
    /// Each service's process id (the bench reads their CPU time).
    pub pids: Vec<(String, u32)>,
    /// Where each service's admin server answers `/metrics`, `/healthz` and `/readyz`.
    pub admin_urls: Vec<(String, String)>,
    /// Each gateway replica's `/mcp`.
    pub gateway_urls: Vec<String>,
    /// The run's database (the bench reads the round boundaries' times from it).
    pub database_url: SecretString,
    /// Every league the system played, the followed one (`league_id`) first; the others may still be
    /// playing.
    pub leagues: Vec<String>,
}

/// What a finished run measured.
#[derive(Debug)]
pub struct RunSummary {
    pub league_id: String,
    pub total_matches: u32,
    pub elapsed: Duration,
}

pub async fn run(mut args: RunArgs) -> anyhow::Result<()> {
    check(&args)?;
    // Before anything starts: a refused id leaves nothing behind.
    let results = results_folder::claim(
        Path::new(RUN_RESULTS),
        args.league.as_ref(),
        args.game,
        SystemTime::now(),
    )?;
    args.league = Some(results.league_id.clone());
    if !args.quiet {
        eprintln!(
            "league id: {} (results in {})",
            results.league_id,
            results.dir.display()
        );
    }
    let settings = crate::report::run_settings::of(&args);
    let played = run_league(&args, async |finished: &mut Finished| {
        crate::report::after_run(finished, settings).await
    })
    .await;
    results.release_if_empty();
    let (summary, ()) = played?;
    if !args.quiet {
        let per_second = f64::from(summary.total_matches) / summary.elapsed.as_secs_f64().max(1e-9);
        println!(
            "{} matches in {:.2} s ({per_second:.0} matches/s)",
            summary.total_matches,
            summary.elapsed.as_secs_f64()
        );
    }
    Ok(())
}

/// Runs a league to its end; `inspect` sees it finished, before the services stop.
pub async fn run_league<T>(
    args: &RunArgs,
    inspect: impl AsyncFnOnce(&mut Finished) -> anyhow::Result<T>,
) -> anyhow::Result<(RunSummary, T)> {
    run_league_with(
        args,
        async |_: &[String]| Ok(()),
        async |finished: &mut Finished, _: &()| inspect(finished).await,
    )
    .await
}

/// [`run_league`], with `external` started once the gateways and referees are up (given each gateway's
/// `/mcp`) and before the bots: it registers the league's `--external-players`. What it returns stays
/// alive until the services stop, and `inspect` sees it too.
///
/// Ctrl-C or SIGTERM stops every service, waits for them, and ends in [`Interrupted`], which names the
/// database (kept). A finished run drops its database unless `--keep`.
pub async fn run_league_with<G, T>(
    args: &RunArgs,
    external: impl AsyncFnOnce(&[String]) -> anyhow::Result<G>,
    inspect: impl AsyncFnOnce(&mut Finished, &G) -> anyhow::Result<T>,
) -> anyhow::Result<(RunSummary, T)> {
    check(args)?;
    let mut signals = Signals::listen()?;
    league_runtime::config::warn_unknown_variables();
    if args.referees == 0 {
        // Allowed: external referees registered through the gateway then run every match.
        eprintln!("no referee processes: matches wait for external referees registered through the gateway");
    }
    // The model, asked once before anything starts: a league whose llm bots all fall back is said.
    if let Some(warning) = crate::llm_bots::check_model(&args.strategies).await? {
        eprintln!("{warning}");
    }
    // Removed when this returns, after every service stopped.
    let state_dir = RunStateDir::create()?;
    let cluster_was_running = postgres::private_cluster_running(&args.cluster_dir);
    let server = postgres::resolve(&args.cluster_dir).await?;
    let database_url = postgres::create_database(&server, RUN_DATABASE_PREFIX).await?;
    let database = postgres::database_name(database_url.expose_secret()).to_owned();
    // Before any service starts: a run killed with SIGKILL leaves this note for `league clean`.
    clean::note_in_use(&database);
    if !args.quiet {
        eprintln!("database: {database}");
    }
    let mut running = Running::default();
    let mut started = false;
    let outcome = tokio::select! {
        played = play(args, &database_url, state_dir.path(), &mut running, &mut started, external, inspect) =>
            Ok(played),
        signal = signals.received() => Err(signal),
    };
    if let (Ok(Ok((summary, _))), true) = (&outcome, args.keep_page) {
        println!(
            "{} is over; its live page stays up until Ctrl-C (--keep-page)",
            summary.league_id
        );
        signals.received().await;
    }
    if outcome.is_err() || args.keep_page {
        eprintln!("stopping the league's services…");
    }
    running.stop().await;
    match outcome {
        Ok(Ok(played)) => {
            let league = &played.0.league_id;
            let finished = clean::Finished {
                database: &database,
                league,
            };
            clean::after_run(&server, &finished, !cluster_was_running, args.keep, args.quiet).await?;
            Ok(played)
        }
        // Nothing of the league's is in a database whose services did not all start: it goes.
        Ok(Err(error)) if !started => match postgres::drop_database(&server, &database).await {
            Ok(()) => {
                clean::forget(std::slice::from_ref(&database));
                Err(error.context(format!(
                    "the league did not start (its database {database} is dropped)"
                )))
            }
            Err(_) => {
                clean::note_kept(&database);
                Err(error.context(format!(
                    "the league did not start (its empty database {database} is kept; `league clean \
                     {database}` drops it)"
                )))
            }
        },
        Ok(Err(error)) => {
            clean::note_kept(&database);
            Err(error.context(format!(
                "the league so far is in database {database} (kept; `league clean {database}` drops it)"
            )))
        }
        Err(signal) => {
            clean::note_kept(&database);
            Err(Interrupted { signal, database }.into())
        }
    }
}

/// Refuses what cannot run, before anything starts.
fn check(args: &RunArgs) -> anyhow::Result<()> {
    args::check_size(args.players + args.external_players, args.cycles)?;
    args::check_llm(&args.strategies, args.game)?;
    args.timing.check()?;
    system::check_gateway_addr(&args.gateway_addr)?;
    Ok(())
}

/// Starts the services into `running` and follows the league to its end.
async fn play<G, T>(
    args: &RunArgs,
    database_url: &SecretString,
    state_dir: &Path,
    running: &mut Running,
    started_all: &mut bool,
    external: impl AsyncFnOnce(&[String]) -> anyhow::Result<G>,
    inspect: impl AsyncFnOnce(&mut Finished, &G) -> anyhow::Result<T>,
) -> anyhow::Result<(RunSummary, T)> {
    let deadline = args::parse(&args.deadline).map_err(anyhow::Error::msg)?;
    let operator_token = league_manager::tokens::issue()?;
    let league_id = match &args.league {
        Some(league_id) => league_id.to_string(),
        None => results_folder::default_league_id(args.game, SystemTime::now())?.into(),
    };
    let leagues = system::league_ids(&league_id, args.leagues)?;
    let together = leagues.len() > 1;
    let plan = plan(
        args,
        database_url,
        state_dir,
        &operator_token,
        &league_id,
        together,
    )?;
    if !args.quiet {
        println!("referee registration is open: a local trial (`league serve` requires a token)");
    }
    let (started, external) = system::start(&plan, running, external).await?;
    *started_all = true;
    let _published = State::publish(
        crate::state::System::Run,
        &started.manager_url,
        started.gateway_urls.first().map_or("", String::as_str),
        postgres::database_name(database_url.expose_secret()),
        &league_id,
        &operator_token,
    )?;
    let manager_url = started.manager_url;
    let gateway_urls = started.gateway_urls;
    // Said while the league waits for external agents (the live page says it too).
    let waiting = (!args.quiet).then(|| {
        Waiting::new(
            args.players + args.external_players,
            args.external_players,
            gateway_urls.first().cloned().unwrap_or_default(),
        )
    });
    if together {
        start_together(&manager_url, &operator_token, &leagues, args.players, deadline).await?;
    }
    let (summary, status, client) = follow(
        &manager_url,
        &operator_token,
        &league_id,
        deadline,
        args.quiet,
        waiting,
    )
    .await?;
    let peak_rss_kib = running
        .all()
        .map(|service| (service.name().to_owned(), service.peak_rss_kib().unwrap_or(0)))
        .collect();
    let pids = running
        .all()
        .filter_map(|service| Some((service.name().to_owned(), service.current().pid?)))
        .collect();
    let admin_urls = running
        .all()
        .filter_map(|service| Some((service.name().to_owned(), service.admin_url()?)))
        .collect();
    let mut finished = Finished {
        client,
        operator_token: operator_token.clone(),
        league_id: league_id.clone(),
        status,
        peak_rss_kib,
        pids,
        admin_urls,
        gateway_urls,
        database_url: database_url.clone(),
        leagues,
    };
    let inspected = inspect(&mut finished, &external).await?;
    Ok((summary, inspected))
}

/// What `league run` starts, from its arguments: one local system, with referee registration open.
fn plan(
    args: &RunArgs,
    database_url: &SecretString,
    state_dir: &Path,
    operator_token: &SecretString,
    league_id: &str,
    together: bool,
) -> anyhow::Result<Plan> {
    Ok(Plan {
        database_url: database_url.clone(),
        operator_token: operator_token.clone(),
        league_id: league_id.to_owned(),
        leagues: args.leagues,
        game: args.game,
        // Leagues played together start together, once every one is full (below).
        auto_start_players: if together {
            0
        } else {
            args.players + args.external_players
        },
        cycles: args.cycles,
        seed: args.seed,
        timing: args.timing.proto()?,
        think_time: args.timing.check()?,
        gateways: args.gateways,
        gateway_addr: args.gateway_addr.clone(),
        agent_rate_limit: args.agent_rate_limit,
        external_players: args.external_players,
        referees: args.referees,
        referee_capacity: args.referee_capacity,
        players: args.players,
        strategies: args.strategies.clone(),
        // A local trial: any referee may register (said when it starts).
        referee_registration: RefereeRegistration::Open,
        quiet: args.quiet,
        state_dir: Some(state_dir.to_owned()),
        children: None,
        bridge_addr: "127.0.0.1:0".to_owned(),
        bots_first: false,
    })
}

/// Starts every league at once, one StartLeague each, all sent together, once each has its `players`
/// (a player host is up before its bots are registered).
async fn start_together(
    manager_url: &str,
    operator_token: &SecretString,
    leagues: &[String],
    players: u32,
    deadline: Duration,
) -> anyhow::Result<()> {
    let mut client = ManagerServiceClient::new(league_runtime::grpc::channel(manager_url)?);
    let clock = Instant::now();
    for league_id in leagues {
        loop {
            let registered = client
                .get_league_status(operator_request(
                    operator_token,
                    GetLeagueStatusRequest {
                        league_id: league_id.clone(),
                    },
                ))
                .await
                .with_context(|| format!("asking for league {league_id}'s players"))?
                .into_inner()
                .registered_players;
            if registered >= players {
                break;
            }
            anyhow::ensure!(
                clock.elapsed() < deadline,
                "league {league_id} had {registered} of its {players} players after {deadline:?}"
            );
            // Asking the manager again, as `follow` does: the league's start waits on it, nothing else.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    futures::future::try_join_all(leagues.iter().map(|league_id| {
        let mut client = client.clone();
        async move {
            client
                .start_league(operator_request(
                    operator_token,
                    StartLeagueRequest {
                        league_id: league_id.clone(),
                    },
                ))
                .await
                .map_err(|status| anyhow::anyhow!("starting league {league_id}: {}", status.message()))
        }
    }))
    .await?;
    Ok(())
}

/// Watches the league until it completes, then prints the table.
async fn follow(
    manager_url: &str,
    operator_token: &SecretString,
    league_id: &str,
    deadline: Duration,
    quiet: bool,
    mut waiting: Option<Waiting>,
) -> anyhow::Result<(
    RunSummary,
    GetLeagueStatusResponse,
    ManagerServiceClient<league_runtime::grpc::GrpcChannel>,
)> {
    let mut client = ManagerServiceClient::new(league_runtime::grpc::channel(manager_url)?);
    let clock = Instant::now();
    let mut progress = Progress::new(quiet);
    loop {
        anyhow::ensure!(
            clock.elapsed() < deadline,
            "the league did not finish within {deadline:?}"
        );
        let asked = client
            .get_league_status(operator_request(
                operator_token,
                GetLeagueStatusRequest {
                    league_id: league_id.to_owned(),
                },
            ))
            .await;
        let status = match asked {
            Ok(status) => status.into_inner(),
            // A manager that died is being started again on the same address (crate::supervise): the
            // league waits for it, and so does this.
            Err(status) if status.code() == tonic::Code::Unavailable => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Err(status) => {
                return Err(status).context("asking the manager for the league's status");
            }
        };
        if let Some(line) = waiting.as_mut().and_then(|waiting| waiting.line(&status)) {
            eprintln!("{line}");
        }
        progress.update(&status);
        anyhow::ensure!(
            status.status != LeagueStatus::Cancelled as i32,
            "league {league_id} was cancelled by the operator (`league cancel`)"
        );
        if status.status == LeagueStatus::Completed as i32 {
            progress.finish();
            let standings = client
                .get_standings(operator_request(
                    operator_token,
                    GetStandingsRequest {
                        league_id: league_id.to_owned(),
                    },
                ))
                .await
                .context("reading the final standings")?
                .into_inner()
                .standings;
            println!("\nFinal standings of {league_id}\n{}", table::render(&standings));
            if let Some(champion) = standings.first() {
                println!(
                    "Champion: {} ({}) with {} points",
                    champion.player_id, champion.display_name, champion.points
                );
            }
            let summary = RunSummary {
                league_id: league_id.to_owned(),
                total_matches: status.total_matches,
                elapsed: league_time(&status).unwrap_or_else(|| clock.elapsed()),
            };
            return Ok((summary, status, client));
        }
        // Progress display for a person, not synchronisation: the league runs on its own.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The league's own time, from its start (all players in) to its last result, as the manager recorded
/// them: waiting for external agents to register is not the league's time.
fn league_time(status: &GetLeagueStatusResponse) -> Option<Duration> {
    let millis = |t: &prost_types::Timestamp| t.seconds * 1_000 + i64::from(t.nanos) / 1_000_000;
    let elapsed = millis(status.completed_at.as_ref()?) - millis(status.started_at.as_ref()?);
    Some(Duration::from_millis(u64::try_from(elapsed).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_league_time_runs_from_its_start_to_its_last_result() {
        let at = |seconds, nanos| Some(prost_types::Timestamp { seconds, nanos });
        let status = GetLeagueStatusResponse {
            started_at: at(100, 500_000_000),
            completed_at: at(102, 750_000_000),
            ..Default::default()
        };
        assert_eq!(league_time(&status), Some(Duration::from_millis(2_250)));
        let unfinished = GetLeagueStatusResponse {
            started_at: at(100, 0),
            ..Default::default()
        };
        assert_eq!(league_time(&unfinished), None);
    }
}
