//! The harness: a fresh database per test, the `league` binary started as each service through
//! `league_launcher::children` (the launcher's own process starter: it waits for `LEAGUE_READY`), the
//! services' logs in files, observation of a league through its database, and the invariant checks.
//!
//! The only waiting on time here is polling: a separate process's progress has no notification but its
//! database rows (or its API), so [`observe`] looks every few milliseconds, bounded by a deadline that
//! only turns a hang into a failure saying what was awaited.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use league_launcher::children::{self, Service};
use league_manager::postgres::PostgresServer;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::referee_service_client::RefereeServiceClient;
use league_proto::v2::{GetStandingsRequest, GetStandingsResponse, ListRunningMatchesRequest, RunningMatch};
use league_testkit::TestDatabase;
pub use league_testkit::observe;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::invariants::{self, Facts};

pub const OPERATOR_TOKEN: &str = "operator-token-for-reliability-tests";

/// Bound on a service announcing `LEAGUE_READY`.
const READY_WITHIN: Duration = Duration::from_secs(30);
/// A safety net only: these leagues take a few seconds.
pub const LEAGUE_DEADLINE: Duration = Duration::from_secs(90);
/// Bound on waiting for the point of a league a test acts on.
pub const OBSERVE_DEADLINE: Duration = Duration::from_secs(30);
/// Bound on a service's exit after SIGTERM (longer than any shutdown grace used here).
pub const EXIT_WITHIN: Duration = Duration::from_secs(40);

/// The scenarios run one at a time: each races real processes (and one measures throughput) on what
/// may be a two-core machine.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    SERIAL.lock().await
}

/// A league's match timings (the manager's `LEAGUE_*` timing variables).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub join: Duration,
    pub moves: Duration,
    pub game_over: Duration,
    pub retry: Duration,
    /// `None`: the league's default lease (`league_domain::Timing`).
    pub lease: Option<Duration>,
}

impl Timing {
    /// Millisecond timings no well-behaved bot comes near, and a 1 s lease: a dead referee's matches are
    /// claimable again within a second.
    pub fn short_lease() -> Timing {
        Timing {
            join: Duration::from_millis(1500),
            moves: Duration::from_millis(3000),
            game_over: Duration::from_millis(1000),
            retry: Duration::from_millis(20),
            lease: Some(Duration::from_secs(1)),
        }
    }

    /// The same with a 30 s lease: within a test's few seconds, only a release (or a bug) can hand a
    /// match to a second referee, so `claims = 1` means "claimed once".
    pub fn long_lease() -> Timing {
        Timing {
            lease: Some(Duration::from_secs(30)),
            ..Timing::short_lease()
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        let millis = |d: Duration| format!("{}ms", d.as_millis());
        let mut env = vec![
            var("LEAGUE_JOIN_TIMEOUT", millis(self.join)),
            var("LEAGUE_MOVE_TIMEOUT", millis(self.moves)),
            var("LEAGUE_GAME_OVER_TIMEOUT", millis(self.game_over)),
            var("LEAGUE_RETRY_DELAY", millis(self.retry)),
            var("LEAGUE_MAX_ATTEMPTS", "3"),
        ];
        env.extend(
            self.lease
                .map(|lease| var("LEAGUE_LEASE_DURATION", millis(lease))),
        );
        env
    }
}

/// The league a test runs.
#[derive(Debug, Clone)]
pub struct Spec {
    pub league_id: String,
    pub players: u32,
    /// Behaviours handed to the bots in turn (`LEAGUE_STRATEGIES`).
    pub strategies: String,
    pub timing: Timing,
}

impl Spec {
    pub fn new(league_id: &str, players: u32, strategies: &str, timing: Timing) -> Spec {
        Spec {
            league_id: league_id.to_owned(),
            players,
            strategies: strategies.to_owned(),
            timing,
        }
    }
}

fn var(key: &str, value: impl Into<String>) -> (String, String) {
    (key.to_owned(), value.into())
}

/// Where a test's services write their logs: kept when the test fails, removed by [`Logs::remove`].
#[derive(Debug)]
pub struct Logs {
    pub dir: PathBuf,
}

impl Logs {
    pub fn new(test: &str) -> Logs {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir()
            .join("league-reliability")
            .join(format!("{test}-{}-{nanos:08x}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a log directory");
        Logs { dir }
    }

    pub fn path(&self, service: &str) -> PathBuf {
        self.dir.join(format!("{service}.log"))
    }

    fn stderr(&self, service: &str) -> Stdio {
        let file = std::fs::File::create(self.path(service)).expect("a log file");
        Stdio::from(file)
    }

    /// Removes the logs once the test passed.
    pub fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh database of its own for one test, and the test's own pool on it.
#[derive(Debug)]
pub struct Database {
    pub url: SecretString,
    pub pool: PgPool,
    database: TestDatabase,
}

impl Database {
    /// On the server every test uses (`DATABASE_URL`, 127.0.0.1:5432, or the project's private cluster).
    pub async fn fresh() -> Database {
        Database::with(TestDatabase::create("league_reliability").await).await
    }

    pub async fn create_on(server: PostgresServer) -> Database {
        Database::with(TestDatabase::create_on(&server, "league_reliability").await).await
    }

    async fn with(database: TestDatabase) -> Database {
        let url = database.url().clone();
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(30))
            .connect(url.expose_secret())
            .await
            .expect("the test's pool connects");
        Database { url, pool, database }
    }

    /// Drops the database once the test passed (a failed test leaves it for inspection: `TestDatabase`).
    pub async fn drop(self) {
        self.pool.close().await;
        drop(self.database);
    }
}

/// The referee registration token the manager asks and the referees present (ADR 0039).
const REFEREE_REGISTRATION_TOKEN: &str = "reliability-referee-registration-token";

fn common_env(league_id: &str) -> Vec<(String, String)> {
    vec![
        var("LEAGUE_REFEREE_REGISTRATION_TOKEN", REFEREE_REGISTRATION_TOKEN),
        var("RUST_LOG", log_filter()),
        var("LEAGUE_LISTEN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ADMIN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ID", league_id),
        var("NO_COLOR", "1"),
    ]
}

fn log_filter() -> String {
    std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned())
}

/// Starts `league <subcommand>` as a separate process, its stderr in the test's logs.
pub async fn start(logs: &Logs, name: &str, subcommand: &str, env: &[(String, String)]) -> Service {
    let program = Path::new(env!("CARGO_BIN_EXE_league"));
    children::start_program(program, name, subcommand, env, READY_WITHIN, logs.stderr(name))
        .await
        .unwrap_or_else(|error| panic!("{name} did not start: {error:#} (logs in {})", logs.dir.display()))
}

/// A manager on `database_url` that creates `spec`'s league and starts it once every player joined.
/// `listen` is `127.0.0.1:0`, or the address of a manager it replaces.
pub async fn start_manager(
    logs: &Logs,
    name: &str,
    database_url: &SecretString,
    spec: &Spec,
    listen: &str,
) -> Service {
    let mut env = common_env(&spec.league_id);
    env.extend([
        var("LEAGUE_LISTEN_ADDR", listen),
        var("DATABASE_URL", database_url.expose_secret()),
        var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
        var("LEAGUE_GAME_TYPE", "even_odd"),
        var("LEAGUE_AUTO_START_PLAYERS", spec.players.to_string()),
        var("LEAGUE_DB_MAX_CONNECTIONS", "8"),
    ]);
    env.extend(spec.timing.env());
    start(logs, name, "manager", &env).await
}

/// A referee of `capacity` matches at once on the manager at `manager_url`; `extra` adds variables
/// (`LEAGUE_SHUTDOWN_GRACE`).
pub async fn start_referee(
    logs: &Logs,
    name: &str,
    manager_url: &str,
    capacity: u32,
    extra: &[(&str, &str)],
) -> Service {
    let mut env = common_env("");
    env.extend([
        var("LEAGUE_MANAGER_URL", manager_url),
        var("LEAGUE_REFEREE_NAME", name),
        var("LEAGUE_REFEREE_CAPACITY", capacity.to_string()),
    ]);
    env.extend(extra.iter().map(|(key, value)| var(key, *value)));
    start(logs, name, "referee", &env).await
}

/// A player host of `players` bots (behaviours from `spec`) registering through `manager_url`. It logs
/// JSON lines with the host at debug level, so every redelivered league event is in its log
/// ([`redeliveries`]).
pub async fn start_players(logs: &Logs, name: &str, manager_url: &str, spec: &Spec, players: u32) -> Service {
    start_players_with(logs, name, manager_url, spec, players, &[]).await
}

/// [`start_players`], `extra` adding variables (`LEAGUE_STATE_DIR`, `LEAGUE_LISTEN_ADDR`).
pub async fn start_players_with(
    logs: &Logs,
    name: &str,
    manager_url: &str,
    spec: &Spec,
    players: u32,
    extra: &[(&str, &str)],
) -> Service {
    let mut env = common_env(&spec.league_id);
    env.extend([
        var("RUST_LOG", format!("{},league_player::host=debug", log_filter())),
        var("LEAGUE_LOG_FORMAT", "json"),
        var("LEAGUE_MANAGER_URL", manager_url),
        var("LEAGUE_PLAYERS", players.to_string()),
        var("LEAGUE_STRATEGIES", spec.strategies.as_str()),
    ]);
    env.extend(extra.iter().map(|(key, value)| var(key, *value)));
    start(logs, name, "player-host", &env).await
}

/// A gateway on the manager at `manager_url`: `/mcp` on `http_addr`, the external players' gRPC bridge on
/// `grpc_addr` (`127.0.0.1:0`, or the addresses of a gateway it replaces).
pub async fn start_gateway(
    logs: &Logs,
    name: &str,
    manager_url: &str,
    http_addr: &str,
    grpc_addr: &str,
) -> Service {
    let mut env = common_env("");
    env.extend([
        var("LEAGUE_MANAGER_URL", manager_url),
        var("LEAGUE_HTTP_ADDR", http_addr),
        var("LEAGUE_LISTEN_ADDR", grpc_addr),
        var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
    ]);
    start(logs, name, "gateway", &env).await
}

/// `127.0.0.1:<port>` of a service's `http://127.0.0.1:<port>` URL.
pub fn listen_addr(service: &Service) -> String {
    service
        .url
        .strip_prefix("http://")
        .expect("an http URL")
        .to_owned()
}

/// The agent ids the referees registered under, in the order given (waits for each to register).
pub async fn referee_ids(pool: &PgPool, referees: &[Service]) -> Vec<String> {
    let mut ids = Vec::new();
    for referee in referees {
        let id = observe(
            &format!("{} registers", referee.name),
            OBSERVE_DEADLINE,
            async || {
                sqlx::query_as::<_, (String,)>(
                    "select agent_id from agents where kind = 'referee' and contact_endpoint = $1",
                )
                .bind(&referee.url)
                .fetch_optional(pool)
                .await
                .ok()
                .flatten()
            },
        )
        .await;
        ids.push(id.0);
    }
    ids
}

/// The player id of the bot whose behaviour is `behaviour` (its display name ends with it), once it
/// has registered.
pub async fn bot(pool: &PgPool, behaviour: &str) -> Option<String> {
    let found: Option<(String,)> =
        sqlx::query_as("select agent_id from agents where kind = 'player' and display_name like '%-' || $1")
            .bind(behaviour)
            .fetch_optional(pool)
            .await
            .ok()?;
    found.map(|(id,)| id)
}

/// What a referee runs now (`RefereeService.ListRunningMatches`); empty if it cannot be asked.
pub async fn running_on(referee: &Service) -> Vec<RunningMatch> {
    let Ok(channel) = league_runtime::grpc::channel(&referee.url) else {
        return Vec::new();
    };
    RefereeServiceClient::new(channel)
        .list_running_matches(ListRunningMatchesRequest {})
        .await
        .map(|response| response.into_inner().matches)
        .unwrap_or_default()
}

/// Whether `running` is a match of `player` still waiting for the moves it asked for, asked less than
/// `within` ago: with a bot that answers only after a longer delay, it will still be running a moment
/// later, whatever is done to its referee in between.
pub fn collecting_recently(running: &RunningMatch, player: &str, within: Duration) -> bool {
    let Some(scheduled) = running.r#match.as_ref() else {
        return false;
    };
    let started = running
        .started_at
        .and_then(|at| SystemTime::try_from(at).ok())
        .and_then(|at| SystemTime::now().duration_since(at).ok());
    running.state() == league_proto::v2::MatchState::CollectingChoices
        && (scheduled.player_a_id == player || scheduled.player_b_id == player)
        && started.is_some_and(|age| age < within)
}

/// How far a league got, for the message of one that did not finish.
pub async fn progress(pool: &PgPool, league_id: &str) -> String {
    let matches: Vec<(String, i64)> =
        sqlx::query_as("select status, count(*) from matches where league_id = $1 group by status")
            .bind(league_id)
            .fetch_all(pool)
            .await
            .unwrap_or_default();
    let deliveries: Option<(i64, i64)> =
        sqlx::query_as("select count(*), count(delivered_at) from every_event_delivery where league_id = $1")
            .bind(league_id)
            .fetch_optional(pool)
            .await
            .unwrap_or_default();
    format!("matches by status {matches:?}; deliveries (rows, delivered) {deliveries:?}")
}

/// Waits until the league is completed and every notification of it delivered. Database errors are
/// tolerated (the database may be restarting).
pub async fn wait_for_completion(pool: &PgPool, league_id: &str, logs: &Logs) {
    let deadline = Instant::now() + LEAGUE_DEADLINE;
    loop {
        let done: Option<(bool,)> = sqlx::query_as(
            "select l.status = 'completed' and not exists (
                 select 1 from event_deliveries d join league_events e using (event_id)
                 where e.league_id = l.league_id and d.delivered_at is null and d.gave_up_at is null)
                 and not exists (select 1 from league_events e where e.league_id = l.league_id and not e.fanned_out)
             from leagues l where l.league_id = $1",
        )
        .bind(league_id)
        .fetch_optional(pool)
        .await
        .ok()
        .flatten();
        if done == Some((true,)) {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "{league_id} did not complete within {LEAGUE_DEADLINE:?}: {} (logs in {})",
                progress(pool, league_id).await,
                logs.dir.display()
            );
        }
        tokio::time::sleep(league_testkit::observe::POLL * 4).await;
    }
}

/// `GetStandings` as the operator.
pub async fn standings(manager_url: &str, league_id: &str) -> GetStandingsResponse {
    let channel = league_runtime::grpc::channel(manager_url).expect("a manager channel");
    ManagerServiceClient::new(channel)
        .get_standings(league_runtime::credentials::operator_request(
            &SecretString::from(OPERATOR_TOKEN.to_owned()),
            GetStandingsRequest {
                league_id: league_id.to_owned(),
            },
        ))
        .await
        .expect("the final standings")
        .into_inner()
}

/// Every invariant the database and `GetStandings` can show: exactly one result per match, every pair
/// once, standings equal to the recomputation (GetStandings, LEAGUE_COMPLETED and every round's
/// update), rounds in order, each league event recorded once and delivered once per player,
/// choices before the draw. Returns the facts for the test's own checks.
pub async fn check_invariants(pool: &PgPool, spec: &Spec, standings: &GetStandingsResponse) -> Facts {
    let facts = Facts::load(pool, &spec.league_id).await;
    assert_eq!(
        facts.players.len(),
        spec.players as usize,
        "players in the league"
    );
    invariants::one_result_per_match(&facts);
    invariants::pairs_meet_once(&facts);
    invariants::standings_equal_recomputation(&facts, standings);
    invariants::rounds_run_in_order(&facts);
    invariants::league_events_recorded_once(&facts);
    invariants::choices_before_the_draw(&facts);
    facts
}

/// [`check_invariants`] for a league whose services went down and came back: a notification may take
/// more than one attempt (its receiver was down for a while), but it is still delivered; and nobody is
/// charged a match for the outage (no technical loss, no double forfeit).
pub async fn check_invariants_through_restarts(
    pool: &PgPool,
    spec: &Spec,
    standings: &GetStandingsResponse,
) -> Facts {
    let facts = Facts::load(pool, &spec.league_id).await;
    assert_eq!(
        facts.players.len(),
        spec.players as usize,
        "players in the league"
    );
    invariants::one_result_per_match(&facts);
    invariants::pairs_meet_once(&facts);
    invariants::standings_equal_recomputation(&facts, standings);
    invariants::rounds_run_in_order(&facts);
    invariants::choices_before_the_draw(&facts);
    let undelivered: Vec<_> = facts
        .deliveries
        .iter()
        .filter(|delivery| !delivery.delivered || delivery.gave_up)
        .collect();
    assert!(
        undelivered.is_empty(),
        "notifications not delivered: {undelivered:?}"
    );
    let charged: Vec<(&str, &str)> = facts
        .matches
        .iter()
        .filter_map(|m| {
            let status = m.result_status.as_deref()?;
            (status == "technical_loss" || status == "double_forfeit")
                .then_some((m.match_id.as_str(), status))
        })
        .collect();
    assert!(charged.is_empty(), "nobody is charged for a restart: {charged:?}");
    facts
}

/// Matches by how often they were claimed: `{claims: matches}`.
pub fn claims_histogram(facts: &Facts) -> std::collections::BTreeMap<i32, usize> {
    let mut histogram = std::collections::BTreeMap::new();
    for m in &facts.matches {
        *histogram.entry(m.claims).or_default() += 1;
    }
    histogram
}

/// SIGTERM to every service, managers last; each must exit on its own, successfully.
pub async fn stop_all(services: &mut [Service]) {
    async fn stop(service: &mut Service) {
        let status = service
            .terminate(EXIT_WITHIN)
            .await
            .unwrap_or_else(|error| panic!("stopping {}: {error:#}", service.name));
        assert!(
            status.success(),
            "{} exited with {status} after SIGTERM",
            service.name
        );
    }
    let (managers, others): (Vec<&mut Service>, Vec<&mut Service>) = services
        .iter_mut()
        .partition(|service| service.name.starts_with("manager"));
    futures::future::join_all(others.into_iter().map(stop)).await;
    futures::future::join_all(managers.into_iter().map(stop)).await;
}

/// The (player, event number) pairs a player host logged as redelivered — taken before, so ignored —
/// each as often as it was logged.
pub fn redeliveries(log: &Path) -> Vec<(String, i64)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut found = Vec::new();
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let field = |name: &str| {
            value
                .get(name)
                .or_else(|| value.get("fields").and_then(|fields| fields.get(name)))
                .and_then(|field| field.as_str())
                .map(str::to_owned)
        };
        if field("message").as_deref() != Some("event redelivered") {
            continue;
        }
        let (Some(player), Some(event)) = (field("player_id"), field("event_id")) else {
            continue;
        };
        // Event ids are `<league>/<number>`.
        let number = event
            .rsplit('/')
            .next()
            .and_then(|number| number.parse().ok())
            .expect("an event id ending in its number");
        found.push((player, number));
    }
    found
}

/// The (player, event number) pairs of `found`, checking none is there twice.
pub fn once_each(found: &[(String, i64)], what: &str) -> BTreeSet<(String, i64)> {
    let set: BTreeSet<(String, i64)> = found.iter().cloned().collect();
    assert_eq!(set.len(), found.len(), "{what}: a pair twice in {found:?}");
    set
}
