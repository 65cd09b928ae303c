//! `league run`: a whole league on this machine. Finds Postgres (starting a private cluster if only the
//! binaries are installed), creates a fresh database, starts the manager, the referees and a player host
//! as separate processes of this same binary over real gRPC on loopback, follows the league to its end,
//! prints the standings and the champion, and stops everything.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use league_manager::postgres;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{GetLeagueStatusRequest, GetLeagueStatusResponse, GetStandingsRequest, LeagueStatus};
use league_runtime::credentials::operator_request;
use secrecy::{ExposeSecret, SecretString};

use crate::children;
use crate::table;

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Bot players in the league.
    #[arg(long, default_value_t = 8)]
    pub players: u32,
    /// Referee processes (0: only external referees, registered through the gateway, run matches).
    #[arg(long, default_value_t = 2)]
    pub referees: u32,
    /// Matches each referee runs at once.
    #[arg(long, default_value_t = 8)]
    pub referee_capacity: u32,
    /// Bot behaviours, assigned to players in turn: random, always_even, always_odd, alternating,
    /// adaptive (and, for testing faults: silent, late:<ms>, invalid, declines, flaky:<n>).
    #[arg(long, default_value = "random,adaptive,alternating,always_even,always_odd")]
    pub strategies: String,
    /// The game: even_odd or tic_tac_toe.
    #[arg(long, default_value = "even_odd")]
    pub game: String,
    /// Time for a player to acknowledge an invitation.
    #[arg(long, default_value = "5s")]
    pub join_timeout: String,
    /// Time for a player to answer a move request.
    #[arg(long, default_value = "30s")]
    pub move_timeout: String,
    /// Pause between attempts after a timeout or connection error.
    #[arg(long, default_value = "2s")]
    pub retry_delay: String,
    /// Attempts before a technical loss.
    #[arg(long, default_value_t = 3)]
    pub max_attempts: u32,
    /// Where a private Postgres cluster lives if one must be started.
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: PathBuf,
    /// Give up if the league has not finished by then.
    #[arg(long, default_value = "30m")]
    pub deadline: String,
    /// Print only the final table.
    #[arg(long)]
    pub quiet: bool,
    /// Where the gateway serves `/mcp` for external agents (`…:0` picks a free port).
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub gateway_addr: String,
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
    /// Where each service's admin server answers `/metrics`, `/healthz` and `/readyz`.
    pub admin_urls: Vec<(String, String)>,
    /// Each gateway replica's `/mcp`.
    pub gateway_urls: Vec<String>,
}

/// What a finished run measured.
#[derive(Debug)]
pub struct RunSummary {
    pub league_id: String,
    pub total_matches: u32,
    pub elapsed: Duration,
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let (summary, ()) = run_league(&args, crate::report::after_run).await?;
    if !args.quiet {
        let per_second = f64::from(summary.total_matches) / summary.elapsed.as_secs_f64();
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
pub async fn run_league_with<G, T>(
    args: &RunArgs,
    external: impl AsyncFnOnce(&[String]) -> anyhow::Result<G>,
    inspect: impl AsyncFnOnce(&mut Finished, &G) -> anyhow::Result<T>,
) -> anyhow::Result<(RunSummary, T)> {
    anyhow::ensure!(
        args.players + args.external_players >= 2,
        "a league needs at least 2 players"
    );
    if args.referees == 0 {
        // Allowed: external referees registered through the gateway then run every match.
        eprintln!("no referee processes: matches wait for external referees registered through the gateway");
    }
    let deadline = parse_duration(&args.deadline)?;
    let server = postgres::resolve(&args.cluster_dir).await?;
    let database_url = postgres::create_database(&server, "league_run").await?;
    let operator_token = league_manager::tokens::issue()?;
    let league_id = format!("league_{}", args.game);
    let quiet_logs = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned());
    let common = vec![
        ("RUST_LOG".to_owned(), quiet_logs),
        ("LEAGUE_LISTEN_ADDR".to_owned(), "127.0.0.1:0".to_owned()),
        ("LEAGUE_ADMIN_ADDR".to_owned(), "127.0.0.1:0".to_owned()),
        ("LEAGUE_ID".to_owned(), league_id.clone()),
    ];
    let mut manager_env = common.clone();
    manager_env.extend([
        ("DATABASE_URL".to_owned(), database_url.expose_secret().to_owned()),
        (
            "LEAGUE_OPERATOR_TOKEN".to_owned(),
            operator_token.expose_secret().to_owned(),
        ),
        ("LEAGUE_GAME_TYPE".to_owned(), args.game.clone()),
        (
            "LEAGUE_AUTO_START_PLAYERS".to_owned(),
            (args.players + args.external_players).to_string(),
        ),
        ("LEAGUE_JOIN_TIMEOUT".to_owned(), args.join_timeout.clone()),
        ("LEAGUE_MOVE_TIMEOUT".to_owned(), args.move_timeout.clone()),
        ("LEAGUE_RETRY_DELAY".to_owned(), args.retry_delay.clone()),
        ("LEAGUE_MAX_ATTEMPTS".to_owned(), args.max_attempts.to_string()),
    ]);
    let ready = Duration::from_secs(60);
    let manager = children::start("manager", "manager", &manager_env, ready).await?;
    let mut services = vec![];
    let mut gateway_urls = vec![];
    let started = async {
        // The gateways first, so external agents can register while the bots do.
        for replica in 1..=args.gateways.max(1) {
            let addr = if replica == 1 {
                args.gateway_addr.clone()
            } else {
                "127.0.0.1:0".to_owned()
            };
            let mut gateway_env = common.clone();
            gateway_env.extend([
                ("LEAGUE_MANAGER_URL".to_owned(), manager.url.clone()),
                ("LEAGUE_HTTP_ADDR".to_owned(), addr),
                (
                    "LEAGUE_OPERATOR_TOKEN".to_owned(),
                    operator_token.expose_secret().to_owned(),
                ),
            ]);
            if let Some(limit) = args.agent_rate_limit {
                // Every local agent shares 127.0.0.1: the address's rate follows the agents'.
                gateway_env.push(("LEAGUE_AGENT_RATE_LIMIT".to_owned(), limit.to_string()));
                gateway_env.push(("LEAGUE_ADDRESS_RATE_LIMIT".to_owned(), limit.to_string()));
            }
            let gateway =
                children::start(&format!("gateway-{replica}"), "gateway", &gateway_env, ready).await?;
            if !args.quiet {
                println!(
                    "gateway: external agents POST league.v2 JSON-RPC to {}/mcp",
                    gateway.url
                );
            }
            gateway_urls.push(format!("{}/mcp", gateway.url));
            services.push(gateway);
        }
        let mut referee_env = common.clone();
        referee_env.push(("LEAGUE_MANAGER_URL".to_owned(), manager.url.clone()));
        referee_env.push((
            "LEAGUE_REFEREE_CAPACITY".to_owned(),
            args.referee_capacity.to_string(),
        ));
        for i in 1..=args.referees {
            let mut env = referee_env.clone();
            env.push(("LEAGUE_REFEREE_NAME".to_owned(), format!("referee-{i}")));
            services.push(children::start(&format!("referee-{i}"), "referee", &env, ready).await?);
        }
        // External players register once the referees are up, as the bots do: the league may start
        // as soon as the last player is in.
        let external = external(&gateway_urls).await?;
        let mut player_env = common.clone();
        player_env.push(("LEAGUE_MANAGER_URL".to_owned(), manager.url.clone()));
        player_env.push(("LEAGUE_PLAYERS".to_owned(), args.players.to_string()));
        player_env.push(("LEAGUE_STRATEGIES".to_owned(), args.strategies.clone()));
        let clock = Instant::now();
        if args.players > 0 {
            services.push(children::start("players", "player", &player_env, ready).await?);
        }
        let (summary, status, client) = follow(
            &manager.url,
            &operator_token,
            &league_id,
            deadline,
            args.quiet,
            clock,
        )
        .await?;
        let mut peak_rss_kib = vec![("manager".to_owned(), manager.peak_rss_kib().unwrap_or(0))];
        peak_rss_kib.extend(
            services
                .iter()
                .map(|service| (service.name.clone(), service.peak_rss_kib().unwrap_or(0))),
        );
        let admin_urls = std::iter::once(&manager)
            .chain(&services)
            .filter_map(|service| Some((service.name.clone(), service.admin_url.clone()?)))
            .collect();
        let mut finished = Finished {
            client,
            operator_token: operator_token.clone(),
            league_id: league_id.clone(),
            status,
            peak_rss_kib,
            admin_urls,
            gateway_urls: gateway_urls.clone(),
        };
        let inspected = inspect(&mut finished, &external).await?;
        anyhow::Ok((summary, inspected))
    }
    .await;
    for service in services {
        service.stop(Duration::from_secs(10)).await;
    }
    manager.stop(Duration::from_secs(10)).await;
    started
}

/// Watches the league until it completes, then prints the table.
async fn follow(
    manager_url: &str,
    operator_token: &SecretString,
    league_id: &str,
    deadline: Duration,
    quiet: bool,
    clock: Instant,
) -> anyhow::Result<(
    RunSummary,
    GetLeagueStatusResponse,
    ManagerServiceClient<league_runtime::grpc::GrpcChannel>,
)> {
    let mut client = ManagerServiceClient::new(league_runtime::grpc::channel(manager_url)?);
    let mut last_shown = (u32::MAX, u32::MAX);
    loop {
        let status = client
            .get_league_status(operator_request(
                operator_token,
                GetLeagueStatusRequest {
                    league_id: league_id.to_owned(),
                },
            ))
            .await
            .context("asking the manager for the league's status")?
            .into_inner();
        let progress = (status.current_round_id, status.finished_matches);
        if !quiet && progress != last_shown && status.total_matches > 0 {
            eprintln!(
                "round {}/{} · {}/{} matches",
                status.current_round_id, status.total_rounds, status.finished_matches, status.total_matches
            );
            last_shown = progress;
        }
        if status.status == LeagueStatus::Completed as i32 {
            let elapsed = clock.elapsed();
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
            if !quiet || standings.len() <= 64 {
                println!("\nFinal standings of {league_id}\n{}", table::render(&standings));
            }
            if let Some(champion) = standings.first() {
                println!(
                    "Champion: {} ({}) with {} points",
                    champion.player_id, champion.display_name, champion.points
                );
            }
            let summary = RunSummary {
                league_id: league_id.to_owned(),
                total_matches: status.total_matches,
                elapsed,
            };
            return Ok((summary, status, client));
        }
        anyhow::ensure!(
            clock.elapsed() < deadline,
            "the league did not finish within {deadline:?}"
        );
        // Progress display for a person, not synchronisation: the league runs on its own.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    humantime_serde::re::humantime::parse_duration(text).with_context(|| format!("invalid duration {text:?}"))
}
