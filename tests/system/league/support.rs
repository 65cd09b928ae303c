//! The harness: a manager on a fresh database, referees and a player host, all in this process on
//! 127.0.0.1:0 over real gRPC, and what a test needs to look at a league once it is over.
//!
//! The end of a league is awaited, never guessed: [`finish`] waits for every bot to have taken
//! LEAGUE_COMPLETED (the player host says so), then stops every service gracefully, which also waits for
//! the manager's event delivery to record its last deliveries. The database checks run after that on
//! the test's own pool (the manager closes its pool when it stops).

use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use league_domain::Timing;
use league_manager::{ManagerApp, ManagerConfig};
use league_player::app::{PlayerApp, PlayerConfig};
use league_player::{Behaviour, PlayerHost, RegisteredBot};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{GetLeagueStatusRequest, GetStandingsRequest, GetStandingsResponse};
use league_referee::app::{RefereeApp, RefereeConfig};
use league_runtime::Shutdown;
use league_runtime::grpc::GrpcChannel;
use league_testkit::TestDatabase;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use tokio::task::JoinHandle;

use league_testkit::invariants::{self, Facts};

pub const OPERATOR_TOKEN: &str = "operator-token-for-league-tests";

/// The well-behaved strategies, handed to the bots in turn.
pub const STRATEGIES: &str = "random,adaptive,alternating,always_even,always_odd";

/// A safety net only: the end of a league is awaited through the player host. Whole leagues here take
/// a second or two; this bound only turns a hang into a failure that says where the league stood.
pub const LEAGUE_DEADLINE: Duration = Duration::from_secs(30);

/// Bound on starting or stopping the services.
const SERVICE_DEADLINE: Duration = Duration::from_secs(15);

/// What league to run.
#[derive(Debug, Clone)]
pub struct Setup {
    pub players: u32,
    pub referees: u32,
    /// Matches each referee runs at once.
    pub capacity: u32,
    /// Behaviours handed to the bots in turn (`PlayerConfig::strategies`).
    pub strategies: &'static str,
    pub game: &'static str,
    pub timing: Timing,
}

impl Setup {
    /// An even_odd league of well-behaved bots.
    pub fn even_odd(players: u32, referees: u32) -> Setup {
        Setup {
            players,
            referees,
            capacity: 4,
            strategies: STRATEGIES,
            game: "even_odd",
            timing: relaxed_timing(),
        }
    }

    /// A small even_odd league with one bot per behaviour of `strategies`, on short real timings, for
    /// the faults: every timeout and retry really happens, in a few hundred milliseconds.
    pub fn faults(strategies: &'static str) -> Setup {
        Setup {
            players: strategies.split(',').count() as u32,
            referees: 1,
            capacity: 4,
            strategies,
            game: "even_odd",
            timing: fault_timing(),
        }
    }
}

/// Timings no well-behaved bot comes near, even on a loaded machine.
pub fn relaxed_timing() -> Timing {
    Timing {
        join_timeout: Duration::from_secs(5),
        move_timeout: Duration::from_secs(5),
        game_over_timeout: Duration::from_secs(5),
        max_attempts: 3,
        retry_delay: Duration::from_millis(20),
        lease_duration: Duration::from_secs(30),
    }
}

/// Short timings that faulty bots really run into.
pub fn fault_timing() -> Timing {
    Timing {
        join_timeout: Duration::from_millis(200),
        move_timeout: Duration::from_millis(200),
        game_over_timeout: Duration::from_millis(200),
        max_attempts: 3,
        retry_delay: Duration::from_millis(20),
        lease_duration: Duration::from_secs(30),
    }
}

/// One referee service running in this process.
#[derive(Debug)]
pub struct Referee {
    /// Where its `RefereeService` listens.
    pub addr: SocketAddr,
    /// `RefereeApp::run`; `None` once it ended (stopped or crashed).
    pub handle: Option<JoinHandle<anyhow::Result<()>>>,
}

/// A league being played by services in this process.
#[derive(Debug)]
pub struct RunningLeague {
    pub setup: Setup,
    pub league_id: String,
    /// Dropped with the league (kept when a test fails).
    _database: TestDatabase,
    /// The test's own pool on the league's database (not the manager's).
    pub pool: PgPool,
    pub manager_addr: SocketAddr,
    pub manager: ManagerServiceClient<GrpcChannel>,
    pub host: Arc<PlayerHost>,
    /// The bots as registered, in the order of their behaviours in `setup.strategies`.
    pub bots: Vec<RegisteredBot>,
    pub referees: Vec<Referee>,
    /// Stops every service of this league.
    pub shutdown: Shutdown,
    manager_task: Option<JoinHandle<anyhow::Result<()>>>,
    player_run: Option<JoinHandle<anyhow::Result<()>>>,
}

/// What a finished league leaves besides its database.
#[derive(Debug)]
pub struct Finished {
    /// `GetStandings` (operator) once the league was completed.
    pub standings: GetStandingsResponse,
}

/// Logs go to stderr only when asked for (`RUST_LOG=…`): libtest does not capture them.
fn telemetry() {
    if std::env::var_os("RUST_LOG").is_some() {
        league_runtime::telemetry::init("league-tests");
    }
}

pub fn operator<T>(message: T) -> tonic::Request<T> {
    league_runtime::credentials::operator_request(&SecretString::from(OPERATOR_TOKEN.to_owned()), message)
}

/// Starts a manager on a fresh database, `setup.referees` referees and a player host whose bots register;
/// once every bot is registered and hosted, starts the league (operator `StartLeague`) and returns.
pub async fn start_league(setup: Setup) -> RunningLeague {
    telemetry();
    let database = TestDatabase::create("league_suite").await;
    let database_url = database.url().clone();
    let league_id = format!("league_{}_{}", setup.game, setup.players);
    let config = ManagerConfig {
        listen_addr: "127.0.0.1:0".parse().expect("an address"),
        database_url: Some(database_url.clone()),
        db_max_connections: 8,
        operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
        league_id: league_id.clone(),
        game_type: setup.game.to_owned(),
        // As `league run` does: the registration that completes the league starts it.
        auto_start_players: setup.players,
        timing: setup.timing,
        ..ManagerConfig::default()
    };
    // A local trial: its referees register without a token.
    let mut config = config;
    config.registration.referee_registration_open = true;
    let app = ManagerApp::build(&config).await.expect("the manager builds");
    let manager_addr = app.local_addr();
    let shutdown = Shutdown::new();
    let manager_task = tokio::spawn(app.run(shutdown.signal()));
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(database_url.expose_secret())
        .await
        .expect("the test's pool connects");
    let manager = ManagerServiceClient::new(
        league_runtime::grpc::channel(&manager_url(manager_addr)).expect("a manager channel"),
    );

    let mut league = RunningLeague {
        setup: setup.clone(),
        league_id: league_id.clone(),
        _database: database,
        pool,
        manager_addr,
        manager,
        host: Arc::new(PlayerHost::new()),
        bots: Vec::new(),
        referees: Vec::new(),
        shutdown,
        manager_task: Some(manager_task),
        player_run: None,
    };
    for _ in 0..setup.referees {
        league.add_referee().await;
    }

    let players = PlayerApp::build(PlayerConfig {
        listen_addr: "127.0.0.1:0".parse().expect("an address"),
        manager_url: manager_url(manager_addr),
        advertise_url: None,
        players: setup.players,
        strategies: setup.strategies.to_owned(),
        league_id,
        seed: None,
        llm: Default::default(),
        ..PlayerConfig::default()
    })
    .await
    .expect("the player host builds");
    league.host = players.host();
    let (registered, bots) = tokio::sync::oneshot::channel();
    league.player_run = Some(tokio::spawn(
        players.run(league.shutdown.signal(), Some(registered)),
    ));
    league.bots = tokio::time::timeout(SERVICE_DEADLINE, bots)
        .await
        .expect("the bots register in time")
        .expect("the player host sends its bots");
    assert_eq!(league.bots.len(), setup.players as usize);

    let n = setup.players;
    let started = league
        .manager
        .get_league_status(operator(GetLeagueStatusRequest {
            league_id: league.league_id.clone(),
        }))
        .await
        .expect("the league's status")
        .into_inner();
    let rounds = if n.is_multiple_of(2) { n - 1 } else { n };
    assert_eq!(
        (started.total_rounds, started.total_matches),
        (rounds, n * (n - 1) / 2)
    );
    league
}

fn manager_url(addr: SocketAddr) -> String {
    format!("http://{addr}")
}

impl RunningLeague {
    /// Starts one more referee; returns its index in `referees`.
    pub async fn add_referee(&mut self) -> usize {
        let index = self.referees.len();
        let app = RefereeApp::build(RefereeConfig {
            listen_addr: "127.0.0.1:0".parse().expect("an address"),
            manager_url: manager_url(self.manager_addr),
            advertise_url: None,
            referee_name: format!("referee-{}", index + 1),
            referee_capacity: self.setup.capacity,
            ..RefereeConfig::default()
        })
        .await
        .expect("a referee builds");
        let addr = app.local_addr();
        let handle = tokio::spawn(app.run(self.shutdown.signal()));
        self.referees.push(Referee {
            addr,
            handle: Some(handle),
        });
        index
    }

    /// Kills referee `index` as a crash would: its worker, its match tasks and its lease renewals are
    /// dropped on the spot; nothing is reported (its gRPC server lingers until shutdown, serving an
    /// empty list of running matches).
    pub async fn crash_referee(&mut self, index: usize) {
        let handle = self.referees[index]
            .handle
            .take()
            .expect("the referee is running");
        handle.abort();
        let ended = handle.await;
        assert!(
            ended.as_ref().is_err_and(|error| error.is_cancelled()),
            "the referee was still running when killed: {ended:?}"
        );
    }

    /// The one bot that behaves as `behaviour` (e.g. "silent").
    pub fn bot(&self, behaviour: &str) -> String {
        let found = self.bots_with(behaviour);
        assert_eq!(found.len(), 1, "exactly one {behaviour} bot: {found:?}");
        found.into_iter().next().expect("one bot")
    }

    /// Every bot that behaves as `behaviour`.
    pub fn bots_with(&self, behaviour: &str) -> Vec<String> {
        let behaviour = Behaviour::from_str(behaviour).expect("a behaviour name");
        self.bots
            .iter()
            .filter(|bot| bot.behaviour == behaviour)
            .map(|bot| bot.player_id.clone())
            .collect()
    }

    /// Stops every service and waits for each to end (crashed referees are already gone).
    pub async fn stop(&mut self) {
        self.shutdown.trigger();
        if let Some(run) = self.player_run.take() {
            tokio::time::timeout(SERVICE_DEADLINE, run)
                .await
                .expect("the player host stops in time")
                .expect("the player host task ends")
                .expect("the player host stops cleanly");
        }
        let tasks = self
            .referees
            .iter_mut()
            .filter_map(|referee| referee.handle.take())
            .chain(self.manager_task.take());
        for task in tasks {
            let ended = tokio::time::timeout(SERVICE_DEADLINE, task)
                .await
                .expect("a service stops in time");
            ended
                .expect("a service task ends without panicking")
                .expect("a service stops cleanly");
        }
    }

    /// Drops the league's database once a test has passed (a failed test leaves it for inspection:
    /// `TestDatabase`).
    pub async fn cleanup(self) {
        self.pool.close().await;
    }

    /// Where the league stands, for the message of a league that did not finish.
    async fn progress(&self) -> String {
        let matches: Vec<(String, i64)> =
            sqlx::query_as("select status, count(*) from matches where league_id = $1 group by status")
                .bind(&self.league_id)
                .fetch_all(&self.pool)
                .await
                .unwrap_or_default();
        let deliveries: Option<(i64, i64, i64, Option<String>)> = sqlx::query_as(
            "select count(*), count(delivered_at), coalesce(sum(attempts), 0)::bigint, max(last_error)
             from every_event_delivery",
        )
        .fetch_optional(&self.pool)
        .await
        .unwrap_or_default();
        format!(
            "matches by status {matches:?}; deliveries (rows, delivered, attempts, an error) {deliveries:?}"
        )
    }
}

/// Waits for the end of the league — every bot has taken LEAGUE_COMPLETED — reads the final standings,
/// then stops every service (so every delivery made is recorded before the checks).
pub async fn finish(league: &mut RunningLeague) -> Finished {
    if tokio::time::timeout(LEAGUE_DEADLINE, league.host.league_completed_for_all())
        .await
        .is_err()
    {
        panic!(
            "{} did not complete within {LEAGUE_DEADLINE:?}: {}",
            league.league_id,
            league.progress().await
        );
    }
    let standings = league
        .manager
        .clone()
        .get_standings(operator(GetStandingsRequest {
            league_id: league.league_id.clone(),
        }))
        .await
        .expect("the final standings")
        .into_inner();
    league.stop().await;
    Finished { standings }
}

/// Every check of [`invariants`], as every full-league test runs them; returns the
/// facts for the test's own assertions.
pub async fn check_all(league: &RunningLeague, finished: &Finished) -> Facts {
    let facts = Facts::load(&league.pool, &league.league_id).await;
    assert_eq!(facts.players.len(), league.setup.players as usize);
    assert_eq!(facts.game, league.setup.game);
    invariants::one_result_per_match(&facts);
    invariants::pairs_meet_once(&facts);
    invariants::standings_equal_recomputation(&facts, &finished.standings);
    invariants::rounds_run_in_order(&facts);
    invariants::league_events_delivered_once(&facts, &league.host);
    invariants::choices_before_the_draw(&facts);
    invariants::bots_remember_their_results(&facts, &league.host);
    facts
}
