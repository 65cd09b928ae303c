//! Running the player host as a service: bind, serve `PlayerService`, register the configured bots with
//! the manager (each served the moment its registration returns), and serve until shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::player_service_server::PlayerServiceServer;
use league_runtime::admin::Readiness;
use league_runtime::{SavedIdentities, ShutdownSignal, grpc};
use serde::Deserialize;
use tokio::net::TcpListener;

use crate::llm::{LlmClient, LlmConfig};
use crate::registration::resume_or_register_bots;
use crate::strategy::StrategyKind;
use crate::{Behaviour, BotSpec, PlayerHost, RegisteredBot};

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct PlayerConfig {
    /// `LEAGUE_LISTEN_ADDR`.
    pub listen_addr: SocketAddr,
    /// `LEAGUE_MANAGER_URL`.
    pub manager_url: String,
    /// `LEAGUE_ADVERTISE_URL`: how referees and the manager reach this host (default: the bound address).
    pub advertise_url: Option<String>,
    /// `LEAGUE_PLAYERS`: how many bots to host.
    pub players: u32,
    /// `LEAGUE_STRATEGIES`: behaviours assigned to the bots in turn (empty: every strategy,
    /// [`StrategyKind::every`]).
    pub strategies: String,
    /// `LEAGUE_ID`: the league to join (empty: the one open for registration).
    #[serde(rename = "id")]
    pub league_id: String,
    /// `LEAGUE_STATE_DIR`: where the host keeps its bots' ids and tokens (`<host name>/bot-01.json` …),
    /// so that after a restart, on whatever address, every bot resumes its registration and plays its
    /// remaining matches. Unset: nothing is kept, and a restarted host cannot rejoin a running league.
    pub state_dir: Option<PathBuf>,
    /// `LEAGUE_PLAYER_HOST_NAME`: the name its bots' identities are kept under in the state directory.
    pub player_host_name: String,
    /// `LEAGUE_SEED`: makes the bots' choices reproducible (none: the OS RNG).
    pub seed: Option<u64>,
    /// `LEAGUE_THINK_TIME`: how long every bot thinks before each move (`300ms`: a league people can
    /// watch); none by default. Not a behaviour: the same for every bot.
    #[serde(with = "humantime_serde")]
    pub think_time: Duration,
    /// `LEAGUE_LLM_*`: the chat endpoint of `llm` bots (read flat, beside the rest).
    #[serde(skip)]
    pub llm: LlmConfig,
}

impl Default for PlayerConfig {
    fn default() -> Self {
        Self {
            listen_addr: SocketAddr::from(([0, 0, 0, 0], 50053)),
            manager_url: "http://127.0.0.1:50051".to_owned(),
            advertise_url: None,
            players: 4,
            strategies: StrategyKind::every(),
            league_id: String::new(),
            state_dir: None,
            player_host_name: "players".to_owned(),
            seed: None,
            think_time: Duration::ZERO,
            llm: LlmConfig::default(),
        }
    }
}

impl PlayerConfig {
    pub fn load() -> anyhow::Result<Self> {
        let mut config: Self = league_runtime::config::load()?;
        config.llm = league_runtime::config::load()?;
        unavailable_llm(&config.specs()?, &config.llm)?;
        Ok(config)
    }

    /// One bot per player, behaviours taken from the list in turn. A bot's name says its behaviour
    /// (`bot-adaptive`); its player id, given at registration, is what tells it apart.
    pub fn specs(&self) -> anyhow::Result<Vec<BotSpec>> {
        let behaviours = match self.strategies.trim() {
            "" => Behaviour::parse_list(&StrategyKind::every()),
            named => Behaviour::parse_list(named),
        }
        .context("LEAGUE_STRATEGIES")?;
        anyhow::ensure!(!behaviours.is_empty(), "LEAGUE_STRATEGIES names no behaviour");
        Ok((0..self.players as usize)
            .map(|i| {
                let behaviour = behaviours[i % behaviours.len()];
                BotSpec {
                    display_name: crate::bot_name::bot_name(behaviour),
                    behaviour,
                }
            })
            .collect())
    }
}

/// Refuses `llm` bots without a chat endpoint to ask (or with an unusable one).
pub fn unavailable_llm(specs: &[BotSpec], llm: &LlmConfig) -> anyhow::Result<()> {
    let client = LlmClient::from_config(llm)?;
    anyhow::ensure!(
        client.is_some() || !specs.iter().any(|spec| spec.behaviour == Behaviour::Llm),
        "the llm strategy is unavailable: set LEAGUE_LLM_URL (an OpenAI-compatible chat completions URL) \
         and LEAGUE_LLM_MODEL"
    );
    Ok(())
}

#[derive(Debug)]
pub struct PlayerApp {
    config: PlayerConfig,
    listener: TcpListener,
    local_addr: SocketAddr,
    host: Arc<PlayerHost>,
    readiness: Readiness,
}

impl PlayerApp {
    pub async fn build(config: PlayerConfig) -> anyhow::Result<Self> {
        let (listener, local_addr) = grpc::bind(config.listen_addr).await?;
        let seed = config.seed;
        let think_time = config.think_time;
        let llm = LlmClient::from_config(&config.llm)?;
        Ok(Self {
            config,
            listener,
            local_addr,
            host: Arc::new(PlayerHost::new().seeded(seed).thinking(think_time).with_llm(llm)),
            readiness: Readiness::new(),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Set ready once every bot is registered with the manager (the admin server's `/readyz`).
    pub fn with_readiness(self, readiness: Readiness) -> Self {
        Self { readiness, ..self }
    }

    /// The bots, for tests that look at what each one saw.
    pub fn host(&self) -> Arc<PlayerHost> {
        self.host.clone()
    }

    /// Serves, registers the bots, and runs until shutdown. `registered` receives the bots once all
    /// are registered.
    pub async fn run(
        self,
        shutdown: ShutdownSignal,
        registered: Option<tokio::sync::oneshot::Sender<Vec<RegisteredBot>>>,
    ) -> anyhow::Result<()> {
        let endpoint = self
            .config
            .advertise_url
            .clone()
            .unwrap_or_else(|| grpc::local_url(self.local_addr));
        // Until the bots are registered (or resumed), a call for one of them waits instead of being
        // refused: a restarted host may be called at once by a referee that was waiting for it.
        let host = self.host.clone();
        let registering = host.registration();
        let routes = tonic::service::Routes::new(self.host.service());
        let routes = grpc::with_health_and_reflection::<PlayerServiceServer<PlayerHost>>(routes).await?;
        let server = tokio::spawn(grpc::serve(self.listener, routes, shutdown.clone()));

        let specs = self.config.specs()?;
        // The manager may still be starting (compose starts everything at once).
        let channel =
            grpc::connect_with_retry(&self.config.manager_url, Duration::from_secs(60), &shutdown).await?;
        let mut client = ManagerServiceClient::new(channel);
        // Held until the host exits: its lock keeps other processes out of these bots' identities.
        let saved = match self.config.state_dir.as_deref() {
            Some(dir) => Some(SavedIdentities::claim(dir, &self.config.player_host_name)?),
            None => None,
        };
        let bots = resume_or_register_bots(
            &mut client,
            &self.host,
            &specs,
            &endpoint,
            &self.config.league_id,
            saved.as_ref(),
        )
        .await?;
        drop(registering);
        tracing::info!(players = bots.len(), %endpoint, "bots registered");
        self.readiness.set_ready(true);
        if let Some(sender) = registered {
            let _ = sender.send(bots);
        }
        server.await.context("player server task")?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_strategies_named_is_every_strategy_in_turn() {
        let every = [
            "random",
            "adaptive",
            "alternating",
            "always_even",
            "always_odd",
            "random",
        ];
        for strategies in [PlayerConfig::default().strategies, String::new(), " ".to_owned()] {
            let config = PlayerConfig {
                players: 6,
                strategies,
                ..PlayerConfig::default()
            };
            let specs = config.specs().expect("every strategy");
            let names: Vec<String> = specs.iter().map(|spec| spec.behaviour.to_string()).collect();
            assert_eq!(names, every);
        }
    }
}
