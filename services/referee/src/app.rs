//! Running a referee as a service: register with the manager (getting its id and token), serve the
//! `RefereeService` debugging API, and run the worker that claims and plays matches until shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use league_domain::GameType;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::referee_service_server::RefereeServiceServer;
use league_proto::v2::{AgentMeta, RegisterRefereeRequest};
use league_proto::{ErrorCode, error_code};
use league_runtime::admin::Readiness;
use league_runtime::grpc::GrpcChannel;
use league_runtime::{Credentials, Revoked, SavedIdentities, ShutdownSignal, grpc};
use serde::Deserialize;
use tokio::net::TcpListener;

use crate::service::RefereeApi;
use crate::worker::{Worker, WorkerConfig};

/// The file a referee's identity is kept in, inside its instance directory.
const SAVED_AS: &str = "referee";

/// Matches a referee runs at once unless `LEAGUE_REFEREE_CAPACITY` says otherwise. A match in flight is a
/// task waiting on its players, not a core, so the capacity is not what a machine's cores bound; what it
/// bounds is how many matches of the system's leagues can be under way at once, and so how many calls
/// each player endpoint gets together (ADR 0058). Two referees of 64 held ten 50-player leagues at once
/// (250 matches a round between them) to 0.65-0.82 of one 200-player league's rate; of 128, 0.93-1.02, and
/// a 1,000-player league took 103 s instead of 115 (docs/adr/0063-referee-capacity-128.md).
pub const DEFAULT_CAPACITY: u32 = 128;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RefereeConfig {
    /// `LEAGUE_LISTEN_ADDR`: where the RefereeService (and health) listens.
    pub listen_addr: SocketAddr,
    /// `LEAGUE_MANAGER_URL`.
    pub manager_url: String,
    /// `LEAGUE_ADVERTISE_URL`: how others reach this referee (default: the bound address).
    pub advertise_url: Option<String>,
    /// `LEAGUE_REFEREE_NAME`: the display name it registers with, and the name its identity is kept
    /// under in the state directory (where a second live referee of the same name takes `<name>-2`,
    /// and registers with that name).
    pub referee_name: String,
    /// `LEAGUE_REFEREE_CAPACITY`: matches run at once.
    pub referee_capacity: u32,
    /// `LEAGUE_SHUTDOWN_GRACE`: on SIGTERM, how long running matches may take to finish before the
    /// referee gives them back to the queue (released, not left to expire). Kept under the 30 s a
    /// container orchestrator waits by default before SIGKILL.
    #[serde(with = "humantime_serde")]
    pub shutdown_grace: Duration,
    /// `LEAGUE_STATE_DIR`: where the referee keeps its id and token (`<referee name>/referee.json`), so
    /// that after a restart, on whatever address, it resumes its registration instead of registering as
    /// a new referee. Unset: nothing is kept, and a restart is refused or becomes a new referee.
    pub state_dir: Option<PathBuf>,
    /// `LEAGUE_REFEREE_REGISTRATION_TOKEN`: the token the league asks of a registering referee (its
    /// bearer token on RegisterReferee; ADR 0039).
    pub referee_registration_token: Option<secrecy::SecretString>,
    /// `LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE`: where to read it instead (the file the manager keeps).
    pub referee_registration_token_file: Option<PathBuf>,
    /// `LEAGUE_REFEREE_REGISTRATION_OPEN`: the manager asks no token (`league run`), so an empty
    /// `LEAGUE_REFEREE_REGISTRATION_TOKEN` is no mistake.
    pub referee_registration_open: bool,
}

impl Default for RefereeConfig {
    fn default() -> Self {
        Self {
            listen_addr: SocketAddr::from(([0, 0, 0, 0], 50052)),
            manager_url: "http://127.0.0.1:50051".to_owned(),
            advertise_url: None,
            referee_name: "referee".to_owned(),
            referee_capacity: DEFAULT_CAPACITY,
            shutdown_grace: WorkerConfig::default().shutdown_grace,
            state_dir: None,
            referee_registration_token: None,
            referee_registration_token_file: None,
            referee_registration_open: false,
        }
    }
}

impl RefereeConfig {
    pub fn load() -> anyhow::Result<Self> {
        let config: Self = league_runtime::config::load()?;
        anyhow::ensure!(
            config.referee_capacity >= 1,
            "LEAGUE_REFEREE_CAPACITY must be at least 1"
        );
        league_runtime::secret_file::refuse_empty_referee_token(
            config.referee_registration_token.as_ref(),
            config.referee_registration_token_file.as_deref(),
            config.referee_registration_open,
        )?;
        Ok(config)
    }
}

#[derive(Debug)]
pub struct RefereeApp {
    config: RefereeConfig,
    listener: TcpListener,
    local_addr: SocketAddr,
    readiness: Readiness,
}

impl RefereeApp {
    pub async fn build(config: RefereeConfig) -> anyhow::Result<Self> {
        let (listener, local_addr) = grpc::bind(config.listen_addr).await?;
        crate::metrics::register_all();
        Ok(Self {
            config,
            listener,
            local_addr,
            readiness: Readiness::new(),
        })
    }

    /// Set ready once this referee is registered with the manager (the admin server's `/readyz`).
    pub fn with_readiness(self, readiness: Readiness) -> Self {
        Self { readiness, ..self }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Registers, then serves and plays until shutdown; running matches finish and report first, or are
    /// released once the shutdown grace has passed. A referee the operator revoked ends in
    /// [`Revoked`], at once, and so does one started again under a revoked identity (ADR 0082).
    pub async fn run(self, shutdown: ShutdownSignal) -> anyhow::Result<()> {
        let channel =
            grpc::connect_with_retry(&self.config.manager_url, Duration::from_secs(60), &shutdown).await?;
        let mut manager = ManagerServiceClient::new(channel.clone());
        let endpoint = self
            .config
            .advertise_url
            .clone()
            .unwrap_or_else(|| grpc::local_url(self.local_addr));
        // Held until the referee exits: its lock keeps other processes out of this referee's identity.
        let saved = match self.config.state_dir.as_deref() {
            Some(dir) => Some(SavedIdentities::claim(dir, &self.config.referee_name)?),
            None => None,
        };
        // Replicas with one configuration are told apart by their instances (`referee`, `referee-2`).
        let display_name = saved
            .as_ref()
            .map_or(self.config.referee_name.as_str(), SavedIdentities::name);
        let request = RegisterRefereeRequest {
            meta: Some(AgentMeta {
                display_name: display_name.to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                game_types: GameType::all().map(|game| game.as_str().to_owned()).collect(),
                contact_endpoint: endpoint.clone(),
                service_endpoint: endpoint.clone(),
                protocol_version: "2.1.0".to_owned(),
                labels: Default::default(),
            }),
            max_concurrent_matches: self.config.referee_capacity,
        };
        let credentials = self.register(&mut manager, saved.as_ref(), request).await?;
        self.readiness.set_ready(true);
        let worker = Worker::new(
            channel,
            credentials.clone(),
            WorkerConfig {
                shutdown_grace: self.config.shutdown_grace,
                ..WorkerConfig::new(
                    self.config.referee_capacity,
                    GameType::all().map(GameType::as_str),
                )
            },
        );
        let api = RefereeApi::new(credentials.agent_id, worker.running_matches()).into_server();
        let routes = tonic::service::Routes::new(api);
        let routes = grpc::with_health_and_reflection::<RefereeServiceServer<RefereeApi>>(routes).await?;
        let server = tokio::spawn(grpc::serve(self.listener, routes, shutdown.clone()));
        if let Err(revoked) = worker.run(shutdown).await {
            // Nothing left to serve: its matches went to other referees.
            server.abort();
            return Err(revoked.into());
        }
        server
            .await
            .map_err(|error| anyhow::anyhow!("referee server task: {error}"))?
    }

    /// The referee registration token it presents, if it was given one.
    fn registration_token(&self) -> anyhow::Result<Option<secrecy::SecretString>> {
        use secrecy::ExposeSecret;
        // A variable set to nothing (compose passes an unset one so) names nothing.
        if let Some(token) = self
            .config
            .referee_registration_token
            .as_ref()
            .filter(|token| !token.expose_secret().trim().is_empty())
        {
            return Ok(Some(token.clone()));
        }
        self.config
            .referee_registration_token_file
            .as_deref()
            .filter(|path| !path.as_os_str().is_empty())
            .map(league_runtime::secret_file::read)
            .transpose()
    }

    /// Registers this referee, or resumes its previous registration when its identity was kept under
    /// the state directory (by the referee's name); keeps the identity it ends up with there.
    async fn register(
        &self,
        manager: &mut ManagerServiceClient<GrpcChannel>,
        saved: Option<&SavedIdentities>,
        request: RegisterRefereeRequest,
    ) -> anyhow::Result<Credentials> {
        let previous = match saved {
            Some(saved) => saved.load(SAVED_AS)?,
            None => None,
        };
        if let Some(previous) = previous {
            match manager.register_referee(previous.request(request.clone())).await {
                Ok(_) => {
                    tracing::info!(referee_id = %previous.agent_id, "referee resumed its registration");
                    return Ok(previous);
                }
                // Revoked: out for good, not back under a new id (ADR 0082).
                Err(status) if error_code::is_revoked(&status) => {
                    return Err(Revoked {
                        agent_id: previous.agent_id,
                    }
                    .into());
                }
                // The manager forgot it (a new database): register anew.
                Err(status) if error_code::code_of(&status) == Some(ErrorCode::RefereeNotRegistered) => {
                    tracing::warn!(referee_id = %previous.agent_id, %status, "saved registration unknown; registering anew");
                }
                Err(status) => anyhow::bail!(
                    "resuming the registration of {}: {}",
                    previous.agent_id,
                    status.message()
                ),
            }
        }
        let request = match self.registration_token()? {
            Some(token) => league_runtime::credentials::operator_request(&token, request),
            None => tonic::Request::new(request),
        };
        let registered = manager
            .register_referee(request)
            .await
            .map_err(|status| anyhow::anyhow!("registering with the manager: {}", status.message()))?
            .into_inner();
        tracing::info!(referee_id = %registered.referee_id, "referee registered");
        let credentials = Credentials::new(registered.referee_id, registered.auth_token);
        if let Some(saved) = saved {
            saved.save(SAVED_AS, &credentials)?;
        }
        Ok(credentials)
    }
}
