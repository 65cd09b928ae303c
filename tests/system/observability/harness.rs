//! A league played by the real `league` binaries — a manager on a fresh database, referees and a player
//! host, each a separate process, and a gateway when external players are to join — plus one bot hosted
//! in the test process. Everything each process prints (stdout and stderr) is kept, and each announces
//! its admin server, so a test can read logs, scrape `/metrics` and receive spans.
//!
//! The end of the league is awaited, not guessed: the test's own bot is told LEAGUE_COMPLETED (the
//! manager sends it once the last result is recorded), and [`League::stop`] waits for every process to
//! exit after SIGTERM — by then each has exported its last spans.

use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use league_player::RegisteredBot;
use league_player::app::{PlayerApp, PlayerConfig};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_runtime::Shutdown;
use league_runtime::grpc::GrpcChannel;
use league_testkit::TestDatabase;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The operator token the manager is given.
pub const OPERATOR_TOKEN: &str = "5e1d0c9a4f3b2a1908e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281";
/// The referee registration token the manager asks of referees (ADR 0039).
pub const REFEREE_REGISTRATION_TOKEN: &str =
    "7a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b";

/// Bounds that only turn a hang into a failure saying what was awaited.
const READY_WITHIN: Duration = Duration::from_secs(60);
const LEAGUE_WITHIN: Duration = Duration::from_secs(120);
const EXIT_WITHIN: Duration = Duration::from_secs(30);

/// What league to play.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Bots of the player host process (the test hosts one more, always_even).
    pub players: u32,
    pub referees: u32,
    /// Behaviours of the player host's bots, in turn.
    pub strategies: &'static str,
    /// External players the league also waits for; when not 0, a `league gateway` process (named
    /// `gateway`, its `url` the public HTTP base) runs for them to register through.
    pub external_players: u32,
    /// Join, move and game-over timeouts.
    pub timeout: Duration,
    /// Variables every process gets on top (`OTEL_*`, `RUST_LOG`, `LEAGUE_LOG_FORMAT`).
    pub env: Vec<(String, String)>,
}

/// One `league <service>` process.
#[derive(Debug)]
pub struct Process {
    pub name: String,
    pub url: String,
    pub admin_url: String,
    child: Child,
    output: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

/// A league being played.
#[derive(Debug)]
pub struct League {
    pub league_id: String,
    /// The test's own pool on the league's database.
    pub pool: PgPool,
    pub manager: ManagerServiceClient<GrpcChannel>,
    pub processes: Vec<Process>,
    /// The test's bot, as registered (its token included).
    pub bot: RegisteredBot,
    host: Arc<league_player::PlayerHost>,
    shutdown: Shutdown,
    bot_run: JoinHandle<anyhow::Result<()>>,
    /// Dropped with the league, after its processes stopped.
    _database: TestDatabase,
}

/// What a stopped league leaves: everything each process printed, by process name.
#[derive(Debug)]
pub struct Stopped {
    pub output: Vec<(String, String)>,
}

pub fn var(key: &str, value: impl Into<String>) -> (String, String) {
    (key.to_owned(), value.into())
}

/// Starts the manager, the referees and the player host, and registers the test's bot; the league
/// starts by itself once every bot has joined.
pub async fn start(setup: Setup) -> League {
    let database = TestDatabase::create("league_observability").await;
    let database_url = database.url().clone();
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(database_url.expose_secret())
        .await
        .expect("the test's pool connects");
    let league_id = "league_observed".to_owned();
    let timeout = format!("{}ms", setup.timeout.as_millis());
    let mut common = vec![
        var("RUST_LOG", "warn"),
        var("NO_COLOR", "1"),
        var("LEAGUE_LISTEN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ADMIN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ID", league_id.as_str()),
        // The token the manager asks of referees and ours present (ADR 0039).
        var("LEAGUE_REFEREE_REGISTRATION_TOKEN", REFEREE_REGISTRATION_TOKEN),
    ];
    common.extend(setup.env.iter().cloned());

    let mut manager_env = common.clone();
    manager_env.extend([
        var("DATABASE_URL", database_url.expose_secret()),
        var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
        var("LEAGUE_GAME_TYPE", "even_odd"),
        var(
            "LEAGUE_AUTO_START_PLAYERS",
            (setup.players + 1 + setup.external_players).to_string(),
        ),
        var("LEAGUE_JOIN_TIMEOUT", timeout.as_str()),
        var("LEAGUE_MOVE_TIMEOUT", timeout.as_str()),
        var("LEAGUE_GAME_OVER_TIMEOUT", timeout.as_str()),
        var("LEAGUE_RETRY_DELAY", "20ms"),
        var("LEAGUE_MAX_ATTEMPTS", "3"),
    ]);
    let manager = Process::start("manager", "manager", &manager_env).await;
    let manager_url = manager.url.clone();
    let mut processes = vec![manager];
    if setup.external_players > 0 {
        // Started before the referees, as `league run` does; stopped after them.
        let mut env = common.clone();
        env.extend([
            var("LEAGUE_MANAGER_URL", manager_url.as_str()),
            var("LEAGUE_HTTP_ADDR", "127.0.0.1:0"),
            var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
        ]);
        processes.push(Process::start("gateway", "gateway", &env).await);
    }
    for n in 1..=setup.referees {
        let mut env = common.clone();
        env.extend([
            var("LEAGUE_MANAGER_URL", manager_url.as_str()),
            var("LEAGUE_REFEREE_NAME", format!("referee-{n}")),
            var("LEAGUE_REFEREE_CAPACITY", "4"),
        ]);
        processes.push(Process::start(&format!("referee-{n}"), "referee", &env).await);
    }
    let mut player_env = common.clone();
    player_env.extend([
        var("LEAGUE_MANAGER_URL", manager_url.as_str()),
        var("LEAGUE_PLAYERS", setup.players.to_string()),
        var("LEAGUE_STRATEGIES", setup.strategies),
    ]);
    processes.push(Process::start("players", "player-host", &player_env).await);

    let app = PlayerApp::build(PlayerConfig {
        listen_addr: "127.0.0.1:0".parse().expect("an address"),
        manager_url: manager_url.clone(),
        advertise_url: None,
        players: 1,
        strategies: "always_even".to_owned(),
        league_id: league_id.clone(),
        seed: None,
        llm: Default::default(),
        ..PlayerConfig::default()
    })
    .await
    .expect("the test's player host builds");
    let host = app.host();
    let shutdown = Shutdown::new();
    let (registered, bots) = oneshot::channel();
    let bot_run = tokio::spawn(app.run(shutdown.signal(), Some(registered)));
    let bot = tokio::time::timeout(READY_WITHIN, bots)
        .await
        .expect("the test's bot registers in time")
        .expect("the test's player host sends its bot")
        .pop()
        .expect("one bot");
    let manager = ManagerServiceClient::new(league_runtime::grpc::channel(&manager_url).expect("a channel"));
    League {
        league_id,
        pool,
        manager,
        processes,
        bot,
        host,
        shutdown,
        bot_run,
        _database: database,
    }
}

/// A manager alone on a fresh database, whose database a test can take away.
#[derive(Debug)]
pub struct LoneManager {
    pub process: Process,
    database: TestDatabase,
}

/// Starts a manager on a fresh database; no league is played.
pub async fn start_manager() -> LoneManager {
    let database = TestDatabase::create("league_observability").await;
    let env = [
        var("RUST_LOG", "warn"),
        var("NO_COLOR", "1"),
        var("LEAGUE_LISTEN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ADMIN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ID", "league_alone"),
        var("DATABASE_URL", database.url().expose_secret()),
        var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
    ];
    LoneManager {
        process: Process::start("manager", "manager", &env).await,
        database,
    }
}

impl LoneManager {
    /// Drops the manager's database under it, its connections closed.
    pub async fn drop_database(&self) {
        self.database.drop_now().await;
    }

    /// SIGTERM, the exit awaited, and everything the manager printed.
    pub async fn stop(self) -> (String, String) {
        self.process.stop().await
    }
}

impl League {
    /// Returns once the league is over: every result recorded, LEAGUE_COMPLETED sent.
    pub async fn finished(&self) {
        self.finished_within(LEAGUE_WITHIN).await;
    }

    /// [`League::finished`], waiting at most `within`.
    pub async fn finished_within(&self, within: Duration) {
        tokio::time::timeout(within, self.host.league_completed_for_all())
            .await
            .expect("the league completes in time");
    }

    pub fn process(&self, name: &str) -> &Process {
        self.processes
            .iter()
            .find(|process| process.name == name)
            .unwrap_or_else(|| panic!("no process {name}"))
    }

    /// SIGTERM to every process, then waits for each to exit and for all its output.
    pub async fn stop(self) -> Stopped {
        let mut output = Vec::new();
        // Clients first, the manager last: each leaves as it would in production.
        for process in self.processes.into_iter().rev() {
            output.push(process.stop().await);
        }
        self.shutdown.trigger();
        let _ = tokio::time::timeout(EXIT_WITHIN, self.bot_run).await;
        self.pool.close().await;
        Stopped { output }
    }
}

impl Process {
    async fn start(name: &str, subcommand: &str, env: &[(String, String)]) -> Process {
        let mut child = Command::new(env!("CARGO_BIN_EXE_league"))
            .arg(subcommand)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("starting {name}: {error}"));
        let output = Arc::new(Mutex::new(String::new()));
        let (ready, announced) = oneshot::channel();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let readers = vec![
            tokio::spawn(keep(stdout, output.clone(), Some(ready))),
            tokio::spawn(keep(stderr, output.clone(), None)),
        ];
        let (url, admin_url) = tokio::time::timeout(READY_WITHIN, announced)
            .await
            .unwrap_or_else(|_| panic!("{name} did not announce itself in time"))
            .unwrap_or_else(|_| {
                let printed = output.lock().unwrap_or_else(PoisonError::into_inner).clone();
                panic!("{name} exited before it was ready:\n{printed}")
            });
        Process {
            name: name.to_owned(),
            url,
            admin_url: admin_url.unwrap_or_else(|| panic!("{name} announced no admin server")),
            child,
            output,
            readers,
        }
    }

    /// SIGTERM, the exit awaited, and everything the process printed.
    async fn stop(mut self) -> (String, String) {
        let pid = self.child.id().expect("still running").to_string();
        let signalled = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .await
            .expect("kill runs");
        assert!(signalled.success(), "cannot signal {}", self.name);
        let exited = tokio::time::timeout(EXIT_WITHIN, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("{} did not exit after SIGTERM", self.name))
            .expect("the exit status");
        for reader in self.readers {
            reader.await.expect("the output is read to its end");
        }
        let output = self.output.lock().unwrap_or_else(PoisonError::into_inner).clone();
        assert!(exited.success(), "{} exited with {exited}:\n{output}", self.name);
        (self.name, output)
    }
}

/// Appends every line of `stream` to `output`; on stdout, also says where the service listens once it
/// announces `LEAGUE_READY` (its `LEAGUE_ADMIN` line comes just before).
async fn keep(
    stream: impl AsyncRead + Unpin,
    output: Arc<Mutex<String>>,
    mut ready: Option<oneshot::Sender<(String, Option<String>)>>,
) {
    let mut lines = BufReader::new(stream).lines();
    let mut admin_url = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let announced = |prefix: &str| {
            line.strip_prefix(prefix)
                .and_then(|rest| rest.split_once(' '))
                .map(|(_, url)| url.to_owned())
        };
        if let Some(url) = announced("LEAGUE_ADMIN ") {
            admin_url = Some(url);
        }
        if let Some(url) = announced("LEAGUE_READY ")
            && let Some(ready) = ready.take()
        {
            let _ = ready.send((url, admin_url.clone()));
        }
        let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
        output.push_str(&line);
        output.push('\n');
    }
}

/// `GET {url}{path}`: the status code and the body.
pub async fn http_get(url: &str, path: &str) -> (u16, String) {
    let reply = league_testkit::http::try_get(&format!("{url}{path}"))
        .await
        .unwrap_or_else(|error| panic!("GET {url}{path}: {error:#}"));
    (reply.status, reply.text())
}

/// The operator's token, wrapped.
pub fn operator_token() -> SecretString {
    SecretString::from(OPERATOR_TOKEN.to_owned())
}
