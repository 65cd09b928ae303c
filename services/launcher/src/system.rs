//! The whole system on this machine, as compose runs it but without Docker: the manager, the gateways,
//! the referees and a player host, each a child process of this binary on loopback, and how they stop.
//! `league run` and `league serve` both start it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use league_domain::{GameType, LeagueId};
use league_gateway::GatewayConfig;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{CreateLeagueRequest, GetLeagueStatusRequest, MatchTiming};
use league_runtime::credentials::operator_request;
use secrecy::{ExposeSecret, SecretString};

use crate::orphans::ChildrenFile;
use crate::own_ports::{GatewayAddrs, OwnAddrs};
use crate::supervise::{Recipe, Stopping, Supervised};

/// How long a service has to say it is ready.
pub(crate) const READY_WITHIN: Duration = Duration::from_secs(60);
/// How long a service has to stop after SIGTERM before it is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);

/// What to start.
#[derive(Debug, Clone)]
pub struct Plan {
    pub database_url: SecretString,
    pub operator_token: SecretString,
    /// The league opened once the manager is up (kept if it exists already).
    pub league_id: String,
    /// Leagues opened at once, each with `players` bots of its own in a player host of its own: the
    /// first is `league_id`, the others named after it ([`league_ids`]). 1 but for the bench's
    /// `--concurrent-leagues`.
    pub leagues: u32,
    pub game: GameType,
    /// Start the league once this many players are in (0: by `league start`).
    pub auto_start_players: u32,
    /// Times the league plays its round robin (2: a double round robin).
    pub cycles: u32,
    /// Makes the bots' choices reproducible.
    pub seed: Option<u64>,
    /// The league's match timings (unset ones: the manager's defaults).
    pub timing: MatchTiming,
    pub gateways: u32,
    /// The first gateway's address (`…:0`: a free port).
    pub gateway_addr: String,
    pub agent_rate_limit: Option<u32>,
    /// External agents the league waits for, registering through the gateway: the bench's fake agents,
    /// or `league run --external-players`; on a local run, all from one address.
    pub external_players: u32,
    pub referees: u32,
    pub referee_capacity: u32,
    /// Who may register a referee; ours register the same way (ADR 0039).
    pub referee_registration: RefereeRegistration,
    /// Bots in the player host (0: no host).
    pub players: u32,
    pub strategies: String,
    /// How long every bot thinks before each move (`LEAGUE_THINK_TIME`; zero: not at all).
    pub think_time: Duration,
    /// Print the gateway's address.
    pub quiet: bool,
    /// Where the referees and the player host keep their identities (`LEAGUE_STATE_DIR`), each under its
    /// name (`referee-1` …, `players`), so that started again they resume them: `league serve`'s, kept
    /// from one start to the next, or a `league run`'s, for the run alone (crate::run_state_dir).
    pub state_dir: Option<PathBuf>,
    /// Where each child is noted as it starts, for the next `league serve` to stop if this one is killed.
    pub children: Option<ChildrenFile>,
    /// The first gateway's gRPC bridge address (`LEAGUE_LISTEN_ADDR`), where the league calls external
    /// players: `league serve` keeps it from one start to the next, so that the endpoints they registered
    /// with stay good.
    pub bridge_addr: String,
    /// The player host before the referees: a restarted `league serve`'s bots are back at their new
    /// address (and their matches given back) before a referee claims a match to call them.
    pub bots_first: bool,
}

/// Who may register a referee (ADR 0039), for the manager and our referees alike.
#[derive(Debug, Clone)]
pub enum RefereeRegistration {
    /// Anyone: a local trial.
    Open,
    /// Whoever presents the operator's token (`LEAGUE_REFEREE_REGISTRATION_TOKEN`), which the league
    /// never changes.
    Token(SecretString),
    /// Whoever presents the token kept in this file, which the manager generates at its first start and
    /// replaces when the operator rotates it (ADR 0082); our referees read it there.
    File(PathBuf),
}

impl RefereeRegistration {
    /// The variables that say it, every one set, so that nothing from the shell adds to them.
    fn env(&self) -> [(String, String); 3] {
        let (token, file, open) = match self {
            Self::Open => ("", String::new(), "true"),
            Self::Token(token) => (token.expose_secret(), String::new(), "false"),
            Self::File(path) => ("", path.display().to_string(), "false"),
        };
        [
            ("LEAGUE_REFEREE_REGISTRATION_TOKEN", token.to_owned()),
            ("LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE", file),
            ("LEAGUE_REFEREE_REGISTRATION_OPEN", open.to_owned()),
        ]
        .map(|(name, value)| (name.to_owned(), value))
    }
}

/// Where the started system answers.
#[derive(Debug)]
pub struct Started {
    pub manager_url: String,
    /// Each gateway replica's `/mcp`.
    pub gateway_urls: Vec<String>,
}

/// The services started so far, in the order they stop, each watched and started again if it dies
/// (crate::supervise).
#[derive(Debug, Default)]
pub struct Running {
    pub manager: Option<Supervised>,
    pub gateways: Vec<Supervised>,
    pub referees: Vec<Supervised>,
    pub players: Vec<Supervised>,
    stopping: Stopping,
}

impl Running {
    /// Starts `recipe` under watch (not yet in a group: the caller puts it in its own).
    async fn start(&self, recipe: Recipe) -> anyhow::Result<Supervised> {
        Supervised::start(recipe, &self.stopping).await
    }

    /// Nothing is started again from here on. Then referees first (no new match starts; running ones are
    /// given back), then the players and the gateways, the manager last: nobody is left talking to a
    /// service that is gone.
    pub async fn stop(self) {
        self.stopping.begin();
        let manager: Vec<Supervised> = self.manager.into_iter().collect();
        for group in [self.referees, self.players, self.gateways, manager] {
            futures::future::join_all(group.into_iter().map(Supervised::stop)).await;
        }
    }

    pub fn all(&self) -> impl Iterator<Item = &Supervised> {
        self.manager
            .iter()
            .chain(&self.gateways)
            .chain(&self.referees)
            .chain(&self.players)
    }
}

/// Refuses a gateway address that is taken or unusable before anything starts, naming the option to
/// change (a free port is found with `:0`). Only a first check: another program may take the port
/// before the gateway binds it, and then the gateway's own error says so.
pub fn check_gateway_addr(addr: &str) -> anyhow::Result<()> {
    match std::net::TcpListener::bind(addr) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => anyhow::bail!(
            "--gateway-addr {addr} is in use (another `league run` or `league serve`?): pass another \
             port, or --gateway-addr 127.0.0.1:0 for a free one"
        ),
        Err(error) => anyhow::bail!(
            "--gateway-addr {addr} cannot be used ({error}): pass host:port, e.g. 127.0.0.1:8000, or \
             127.0.0.1:0 for a free port"
        ),
    }
}

/// The ids of `leagues` leagues opened together: `first`, then `first-2`, `first-3` …
pub fn league_ids(first: &str, leagues: u32) -> anyhow::Result<Vec<String>> {
    (1..=leagues.max(1))
        .map(|n| {
            let id = if n == 1 {
                first.to_owned()
            } else {
                format!("{first}-{n}")
            };
            LeagueId::parse(&id)
                .map(String::from)
                .with_context(|| format!("naming league {n} of {leagues} after {first}"))
        })
        .collect()
}

/// Creates league `league_id` of the plan unless it exists (a `league serve` restarted on the same
/// database).
async fn open_league(plan: &Plan, manager_url: &str, league_id: &str) -> anyhow::Result<()> {
    let mut client = ManagerServiceClient::new(league_runtime::grpc::channel(manager_url)?);
    let exists = client
        .get_league_status(operator_request(
            &plan.operator_token,
            GetLeagueStatusRequest {
                league_id: league_id.to_owned(),
            },
        ))
        .await
        .is_ok();
    if exists {
        return Ok(());
    }
    client
        .create_league(operator_request(
            &plan.operator_token,
            CreateLeagueRequest {
                league_id: league_id.to_owned(),
                game_type: plan.game.to_string(),
                timing: Some(plan.timing),
                auto_start_players: plan.auto_start_players,
                cycles: plan.cycles,
                max_players: 0,
            },
        ))
        .await
        .map_err(|status| anyhow::anyhow!("creating league {league_id}: {}", status.message()))?;
    Ok(())
}

/// Starts `plan` into `running` (which keeps whatever started, even when a later start fails), calling
/// `external` once the gateways and referees are up and before the bots, with each gateway's `/mcp`.
pub async fn start<G>(
    plan: &Plan,
    running: &mut Running,
    external: impl AsyncFnOnce(&[String]) -> anyhow::Result<G>,
) -> anyhow::Result<(Started, G)> {
    let quiet_logs = std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned());
    let common = vec![
        ("RUST_LOG".to_owned(), quiet_logs),
        ("LEAGUE_LISTEN_ADDR".to_owned(), "127.0.0.1:0".to_owned()),
        ("LEAGUE_ADMIN_ADDR".to_owned(), "127.0.0.1:0".to_owned()),
        ("LEAGUE_ID".to_owned(), plan.league_id.clone()),
    ];
    // Who may register a referee, for the manager and our referees alike (whatever the shell says).
    let admission = plan.referee_registration.env();
    // Every port but the manager's gRPC one is fixed now, so the manager refuses them all as contact
    // endpoints from its start (crate::own_ports).
    let own = OwnAddrs::pick(plan.gateways, &plan.gateway_addr, &plan.bridge_addr)?;
    let manager_env = manager_env(plan, &common, &admission, &own);
    // Each child is noted in the children file as it starts (the first time and every time again).
    let recipe = |name: &str, subcommand: &str, env: Vec<(String, String)>| Recipe {
        name: name.to_owned(),
        subcommand: subcommand.to_owned(),
        env,
        same_address: None,
        children: plan.children.clone(),
    };
    // The manager comes back on its address: every other service was given it.
    let manager = Recipe {
        same_address: Some("LEAGUE_LISTEN_ADDR"),
        ..recipe("manager", "manager", manager_env)
    };
    let manager = running.manager.insert(running.start(manager).await?);
    let manager_url = manager.url();
    let league_ids = league_ids(&plan.league_id, plan.leagues)?;
    for league_id in &league_ids {
        open_league(plan, &manager_url, league_id).await?;
    }
    // The gateways first, so external agents can register while the bots do.
    let gateway_urls = start_gateways(plan, &own.gateways, running, &common, &manager_url, &recipe).await?;
    let mut agent_env = common.clone();
    agent_env.push(("LEAGUE_MANAGER_URL".to_owned(), manager_url.clone()));
    if let Some(dir) = &plan.state_dir {
        agent_env.push(("LEAGUE_STATE_DIR".to_owned(), dir.display().to_string()));
    }
    if plan.bots_first {
        start_players(plan, &league_ids, running, &agent_env, &recipe).await?;
    }
    let mut referee_env = agent_env.clone();
    referee_env.extend(admission);
    referee_env.extend([
        (
            "LEAGUE_REFEREE_CAPACITY".to_owned(),
            plan.referee_capacity.to_string(),
        ),
        // A stop should not wait long for the matches in flight.
        ("LEAGUE_SHUTDOWN_GRACE".to_owned(), "3s".to_owned()),
    ]);
    for i in 1..=plan.referees {
        let mut env = referee_env.clone();
        // Also the name its identity is kept under.
        env.push(("LEAGUE_REFEREE_NAME".to_owned(), format!("referee-{i}")));
        // A referee comes back on a new port: it registers its endpoint again.
        let referee = running
            .start(recipe(&format!("referee-{i}"), "referee", env))
            .await?;
        running.referees.push(referee);
    }
    // External players register once the referees are up, as the bots do: the league may start as
    // soon as the last player is in.
    let external = external(&gateway_urls).await?;
    if !plan.bots_first {
        start_players(plan, &league_ids, running, &agent_env, &recipe).await?;
    }
    Ok((
        Started {
            manager_url,
            gateway_urls,
        },
        external,
    ))
}

/// The manager's environment: `common`, who may register a referee (`admission`), its database and
/// operator token, its admin address, the ports it refuses as contact endpoints, and a larger league
/// than a deployment's usual when the run asks for one.
fn manager_env(
    plan: &Plan,
    common: &[(String, String)],
    admission: &[(String, String)],
    own: &OwnAddrs,
) -> Vec<(String, String)> {
    let operators_refused = std::env::var("LEAGUE_ENDPOINT_REFUSED").ok();
    let mut env = common.to_vec();
    env.extend_from_slice(admission);
    env.extend([
        (
            "DATABASE_URL".to_owned(),
            plan.database_url.expose_secret().to_owned(),
        ),
        (
            "LEAGUE_OPERATOR_TOKEN".to_owned(),
            plan.operator_token.expose_secret().to_owned(),
        ),
        ("LEAGUE_ADMIN_ADDR".to_owned(), own.manager_admin.clone()),
        (
            "LEAGUE_ENDPOINT_REFUSED".to_owned(),
            own.refused(operators_refused.as_deref()),
        ),
        // No league from the configuration: the launcher creates it below, with its format.
        ("LEAGUE_ID".to_owned(), String::new()),
    ]);
    // A local league larger than a deployment's usual limit: the run asked for it (args::check_size
    // bounded it), so the manager takes that many players.
    let usual = league_manager::config::RegistrationConfig::default().max_players;
    let largest = plan.auto_start_players.max(plan.players + plan.external_players);
    if largest > usual {
        env.push(("LEAGUE_MAX_PLAYERS".to_owned(), largest.to_string()));
    }
    env
}

/// Starts a gateway at each of `addrs` in front of the manager at `manager_url`; each one's `/mcp`.
async fn start_gateways(
    plan: &Plan,
    addrs: &[GatewayAddrs],
    running: &mut Running,
    common: &[(String, String)],
    manager_url: &str,
    recipe: &impl Fn(&str, &str, Vec<(String, String)>) -> Recipe,
) -> anyhow::Result<Vec<String>> {
    let mut gateway_urls = vec![];
    for (replica, addrs) in (1..).zip(addrs) {
        let mut gateway_env = common.to_vec();
        // The bridge is where the referees call external players, at the endpoint they registered with:
        // a gateway started again serves it on the same port, which is why every port is chosen here.
        gateway_env.extend([
            ("LEAGUE_LISTEN_ADDR".to_owned(), addrs.bridge.clone()),
            ("LEAGUE_ADMIN_ADDR".to_owned(), addrs.admin.clone()),
            ("LEAGUE_MANAGER_URL".to_owned(), manager_url.to_owned()),
            ("LEAGUE_HTTP_ADDR".to_owned(), addrs.http.clone()),
            (
                "LEAGUE_OPERATOR_TOKEN".to_owned(),
                plan.operator_token.expose_secret().to_owned(),
            ),
        ]);
        if let Some(limit) = plan.agent_rate_limit {
            // Every local agent shares 127.0.0.1: the address's rate follows the agents'.
            gateway_env.push(("LEAGUE_AGENT_RATE_LIMIT".to_owned(), limit.to_string()));
            gateway_env.push(("LEAGUE_ADDRESS_RATE_LIMIT".to_owned(), limit.to_string()));
        }
        // A local run's external agents register from one address, the bench's all in the same
        // second: the per-address registration limit (a minute's worth) would refuse those beyond it.
        let registrations = GatewayConfig::default().registration_rate_limit;
        if plan.external_players > registrations {
            gateway_env.push((
                "LEAGUE_REGISTRATION_RATE_LIMIT".to_owned(),
                plan.external_players.to_string(),
            ));
        }
        let gateway = running
            .start(recipe(&format!("gateway-{replica}"), "gateway", gateway_env))
            .await?;
        let gateway_url = gateway.url();
        if !plan.quiet {
            println!("gateway: external agents POST league.v2 JSON-RPC to {gateway_url}/mcp");
            if replica == 1 {
                println!("live page: {gateway_url}/ (the standings as results arrive)");
            }
        }
        gateway_urls.push(format!("{gateway_url}/mcp"));
        running.gateways.push(gateway);
    }
    Ok(gateway_urls)
}

/// A player host of `plan.players` bots (none for 0) for each league, its bots registered to it: the
/// first league's identities kept under the name `players`, the others' under `players-2` …
async fn start_players(
    plan: &Plan,
    league_ids: &[String],
    running: &mut Running,
    agent_env: &[(String, String)],
    recipe: &impl Fn(&str, &str, Vec<(String, String)>) -> Recipe,
) -> anyhow::Result<()> {
    if plan.players == 0 {
        return Ok(());
    }
    for (n, league_id) in (1..).zip(league_ids) {
        let name = if n == 1 {
            "players".to_owned()
        } else {
            format!("players-{n}")
        };
        // A player host comes back on a new port: its bots register their endpoint again.
        let env = player_host_env(plan, &name, league_id, agent_env);
        let players = running.start(recipe(&name, "player-host", env)).await?;
        running.players.push(players);
    }
    Ok(())
}

/// The environment of player host `name` of `plan.players` bots, registering them to `league_id`.
fn player_host_env(
    plan: &Plan,
    name: &str,
    league_id: &str,
    agent_env: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env = agent_env.to_vec();
    env.extend([
        ("LEAGUE_ID".to_owned(), league_id.to_owned()),
        ("LEAGUE_PLAYERS".to_owned(), plan.players.to_string()),
        ("LEAGUE_STRATEGIES".to_owned(), plan.strategies.clone()),
        ("LEAGUE_PLAYER_HOST_NAME".to_owned(), name.to_owned()),
    ]);
    if let Some(seed) = plan.seed {
        env.push(("LEAGUE_SEED".to_owned(), seed.to_string()));
    }
    if !plan.think_time.is_zero() {
        env.push((
            "LEAGUE_THINK_TIME".to_owned(),
            format!("{}ms", plan.think_time.as_millis()),
        ));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_gateway_address_is_refused_naming_the_option_and_the_way_out() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr = taken.local_addr().expect("its address").to_string();
        let refused = check_gateway_addr(&addr).expect_err("the port is taken");
        assert_eq!(
            refused.to_string(),
            format!(
                "--gateway-addr {addr} is in use (another `league run` or `league serve`?): pass \
                 another port, or --gateway-addr 127.0.0.1:0 for a free one"
            )
        );
        let nonsense = check_gateway_addr("nowhere").expect_err("not an address");
        assert!(
            nonsense
                .to_string()
                .starts_with("--gateway-addr nowhere cannot be used"),
            "{nonsense}"
        );
        assert!(check_gateway_addr("127.0.0.1:0").is_ok());
    }
}
