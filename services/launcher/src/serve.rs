//! `league serve`: the whole system on this machine, staying up — the compose topology without Docker.
//! Its data is in one database (`league_serve` unless told otherwise) that outlives it, so a second
//! `league serve` carries on where the first stopped, with the league the first opened. Where it is goes
//! to the state file for the operator commands (the user's, ADR 0048, so they find it from any folder);
//! Ctrl-C or SIGTERM stops every service in order.
//!
//! Started again after any end — a Ctrl-C, or a SIGKILL that stopped nothing — it resumes every
//! unfinished league with the same agents: its referees and bots keep their identities under its state
//! directory (`.league/serve/<database>/`), by their names (`referee-1`, `players/bot-01`), never by
//! their ports, which are new at every start; the services a killed `serve` left behind are stopped first
//! (crate::orphans); the bots come back before the referees, so every match they were playing is given
//! back before a referee claims one; and the gateway's bridge keeps its address, where external players
//! are called. One `serve` at a time uses a state directory.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;
use nix::fcntl::{Flock, FlockArg};

use clap::Args;
use league_domain::{GameType, LeagueId};
use league_manager::postgres;
use secrecy::SecretString;

use crate::args;
use crate::capacity::Referees;
use crate::interrupt::Signals;
use crate::orphans::ChildrenFile;
use crate::state::{self, State};
use crate::system::{self, Plan, RefereeRegistration, Running};
use league_report::RUN_RESULTS;
use league_report::results_folder::unclaimed_default_id;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Bot players in a player host (0: none; external agents register through the gateway).
    #[arg(long, default_value_t = 0)]
    pub players: u32,
    #[arg(
        long,
        help = league_player::behaviour::help(),
        default_value_t = league_player::strategy::StrategyKind::every(),
        value_parser = args::strategies
    )]
    pub strategies: String,
    /// Referee processes. Default: one per core of this machine (docs/operations.md, "Referee
    /// capacity").
    #[arg(long, default_value_t = Referees::of_this_machine().referees)]
    pub referees: u32,
    /// Matches each referee runs at once.
    #[arg(long, default_value_t = Referees::of_this_machine().capacity)]
    pub referee_capacity: u32,
    /// The league opened at start-up (unless it exists); more come with `league create`. Default: the
    /// one the first start on this database opened, named by its game and time
    /// (`even_odd-20261129-0212`), so that a `serve` started again carries it on.
    #[arg(long)]
    pub league: Option<LeagueId>,
    /// The first league's game.
    #[arg(long, default_value_t = GameType::default())]
    pub game: GameType,
    /// Times the first league plays its round robin (2: a double round robin, seats swapped).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub cycles: u32,
    /// Makes the bots' choices reproducible (the referee's draw stays random).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Start the first league once this many players are in (0: with `league start`).
    #[arg(long, default_value_t = 0)]
    pub auto_start: u32,
    /// The first league's match timings (`league create` takes the same for the others).
    #[command(flatten)]
    pub timing: args::TimingArgs,
    /// Where the gateway serves `/mcp` (`…:0` picks a free port).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub gateway_addr: String,
    /// The database (kept; created if missing; `league clean <database>` drops it).
    #[arg(long, default_value = SERVE_DATABASE)]
    pub database: String,
    /// Where a private Postgres cluster lives if one must be started.
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: PathBuf,
    /// Where the referees and bots keep their identities, so that a `league serve` started again resumes
    /// them (default: `serve/<database>` beside the state file,
    /// `~/.local/state/league/serve/league_serve`).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
}

pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.auto_start != 1,
        "--auto-start must be 0 (start with `league start`) or at least 2"
    );
    args::check_llm(&args.strategies, args.game)?;
    let think_time = args.timing.check()?;
    system::check_gateway_addr(&args.gateway_addr)?;
    if let Some(warning) = crate::llm_bots::check_model(&args.strategies).await? {
        eprintln!("{warning}");
    }
    let mut signals = Signals::listen()?;
    league_runtime::config::warn_unknown_variables();
    let state_dir = match &args.state_dir {
        Some(dir) => dir.clone(),
        None => default_state_dir(&args.database),
    };
    std::fs::create_dir_all(&state_dir).with_context(|| format!("creating {}", state_dir.display()))?;
    let _only_one = hold(&state_dir).context("one `league serve` at a time")?;
    let children = ChildrenFile::new(&state_dir);
    children.kill_previous().await?;
    let bridge_addr = kept_bridge_addr(&state_dir)?;
    let league_id = first_league(&state_dir, args.league.as_ref(), args.game)?;
    let server = postgres::resolve(&args.cluster_dir).await?;
    let database_url = postgres::ensure_database(&server, &args.database).await?;
    let operator_token = league_manager::tokens::issue()?;
    let (referee_registration, kept_in) = referee_registration();
    let plan = Plan {
        database_url,
        operator_token: operator_token.clone(),
        league_id: league_id.clone(),
        leagues: 1,
        game: args.game,
        auto_start_players: args.auto_start,
        cycles: args.cycles,
        seed: args.seed,
        timing: args.timing.proto()?,
        think_time,
        gateways: 1,
        gateway_addr: args.gateway_addr.clone(),
        agent_rate_limit: None,
        external_players: 0,
        referees: args.referees,
        referee_capacity: args.referee_capacity,
        players: args.players,
        strategies: args.strategies.clone(),
        referee_registration,
        quiet: false,
        state_dir: Some(state_dir.clone()),
        children: Some(children),
        bridge_addr,
        bots_first: true,
    };
    let mut running = Running::default();
    let serving = async {
        let (started, ()) = system::start(&plan, &mut running, async |_: &[String]| Ok(())).await?;
        let published = State::publish(
            state::System::Serve,
            &started.manager_url,
            started.gateway_urls.first().map_or("", String::as_str),
            &args.database,
            &league_id,
            &operator_token,
        )?;
        println!("manager: {}", started.manager_url);
        println!(
            "operator token: {} (readable only by you)",
            published.state.operator_token_file.display()
        );
        println!("database: {} (kept)", args.database);
        println!("league id: {league_id}");
        println!(
            "referees: {} × {} matches at once ({} matches; --referees, --referee-capacity)",
            args.referees,
            args.referee_capacity,
            u64::from(args.referees) * u64::from(args.referee_capacity)
        );
        println!(
            "referee registration: only with the referee registration token (`league referee-token` shows it; {})",
            kept_in
        );
        println!(
            "serving; Ctrl-C stops. `league leagues`, `league create`, `league standings` … work from here."
        );
        // Up until a signal: the published state goes with this future.
        std::future::pending::<()>().await;
        let _still_published = published;
        anyhow::Ok(())
    };
    let outcome = tokio::select! {
        served = serving => served,
        _ = signals.received() => Ok(()),
    };
    eprintln!("stopping the league's services…");
    running.stop().await;
    eprintln!("stopped; the data stays in database {}", args.database);
    outcome
}

/// Who may register a referee on `league serve` (ADR 0039): whoever presents the operator's token
/// (`LEAGUE_REFEREE_REGISTRATION_TOKEN`), else the one kept beside the state file (`referee-token`,
/// mode 0600), which the manager generates at the first start and rotates on the operator's word
/// (ADR 0082); and where it is kept, in words.
fn referee_registration() -> (RefereeRegistration, String) {
    if let Some(token) = std::env::var("LEAGUE_REFEREE_REGISTRATION_TOKEN")
        .ok()
        .filter(|token| !token.trim().is_empty())
    {
        return (
            RefereeRegistration::Token(SecretString::from(token.trim().to_owned())),
            "set by LEAGUE_REFEREE_REGISTRATION_TOKEN".to_owned(),
        );
    }
    let path = crate::state::state_file().with_file_name(REFEREE_TOKEN_FILE);
    let kept_in = format!("kept in {}", path.display());
    (RefereeRegistration::File(path), kept_in)
}

/// The file beside the state file that keeps `league serve`'s referee registration token.
pub const REFEREE_TOKEN_FILE: &str = "referee-token";

/// The database `league serve` keeps its data in unless told otherwise.
pub const SERVE_DATABASE: &str = "league_serve";

/// Where the state directories of `league serve` are, one per database: `serve/` beside the state file.
fn serve_dirs() -> PathBuf {
    let state_file = state::state_file();
    let parent = state_file.parent().filter(|dir| !dir.as_os_str().is_empty());
    parent.unwrap_or(Path::new(".")).join("serve")
}

/// `serve/<database>` beside the state file.
pub fn default_state_dir(database: &str) -> PathBuf {
    serve_dirs().join(database)
}

/// The databases `league serve` has run on (those with a state directory), by name.
pub fn kept_databases() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(serve_dirs()) else {
        return vec![];
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// Holds the state directory for this process alone (released however it ends): a `serve`, or a
/// `league clean` dropping its database. A directory that does not exist is nobody's.
pub fn hold(state_dir: &Path) -> anyhow::Result<Option<Flock<File>>> {
    if !state_dir.is_dir() {
        return Ok(None);
    }
    let path = state_dir.join("serve.lock");
    let file = File::create(&path).with_context(|| format!("opening {}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map(Some)
        .map_err(|(_, errno)| {
            anyhow::anyhow!(
                "another `league serve` runs with state directory {} ({errno})",
                state_dir.display()
            )
        })
}

/// The league `serve` opens at start-up: `asked`, else the one the first start on this state directory
/// chose (kept in `first-league`), else a new id of the game and the time.
fn first_league(state_dir: &Path, asked: Option<&LeagueId>, game: GameType) -> anyhow::Result<String> {
    if let Some(league_id) = asked {
        return Ok(league_id.to_string());
    }
    let path = state_dir.join("first-league");
    match std::fs::read_to_string(&path) {
        Ok(kept) if LeagueId::parse(kept.trim()).is_ok() => return Ok(kept.trim().to_owned()),
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    }
    // Never an id whose results folder exists (a `league run` of the same minute here): its report
    // would be refused, or would have been another league's.
    let league_id =
        unclaimed_default_id(Path::new(RUN_RESULTS), game, SystemTime::now(), |_| false)?.to_string();
    std::fs::write(&path, &league_id).with_context(|| format!("writing {}", path.display()))?;
    Ok(league_id)
}

/// The gateway bridge's address of the previous start, if it is still free; otherwise a free one, kept
/// for the next start.
fn kept_bridge_addr(state_dir: &Path) -> anyhow::Result<String> {
    let path = state_dir.join("gateway-bridge");
    match std::fs::read_to_string(&path) {
        Ok(kept) if TcpListener::bind(kept.trim()).is_ok() => return Ok(kept.trim().to_owned()),
        Ok(kept) => eprintln!(
            "warning: the gateway's bridge address {} is taken; external players registered before must \
             register again",
            kept.trim()
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    }
    let free = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .context("finding a free port for the gateway's bridge")?;
    std::fs::write(&path, free.to_string()).with_context(|| format!("writing {}", path.display()))?;
    Ok(free.to_string())
}
