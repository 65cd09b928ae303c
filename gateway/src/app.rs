//! Building and running the gateway: bind the public HTTP port and the internal gRPC bridge, then serve
//! both, relay separate-call replies and flush compliance warnings until shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use league_external_referees::Referees;
use league_manager_link::ManagerLink;
use league_proto::v2::RecordComplianceWarningsRequest;
use league_proto::v2::player_service_server::PlayerServiceServer;
use league_runtime::admin::Readiness;
use league_runtime::grpc::GrpcChannel;
use league_runtime::{ShutdownSignal, grpc};
use tokio::net::TcpListener;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::bridge::event_slots::EventSlots;
use crate::bridge::external_agents::ExternalAgents;
use crate::bridge::overhead::MeasuredBridge;
use crate::bridge::{FallbackTimeouts, PlayerBridge, Replies, client::AgentClient};
use crate::config::GatewayConfig;
use crate::connections::{self, ConnectionLimits};
use crate::http::{self, HttpState};
use crate::inbound::Inbound;
use crate::limits::{Rates, RequestLimits};
use crate::mcp::McpService;
use crate::warning_buffer::{FLUSH_INTERVAL, WarningBuffer};

#[derive(Debug)]
pub struct GatewayApp {
    config: Arc<GatewayConfig>,
    http_listener: TcpListener,
    http_addr: SocketAddr,
    grpc_listener: TcpListener,
    grpc_addr: SocketAddr,
    readiness: Readiness,
    /// Made before anything listens: extra roots that cannot be read stop the gateway at its start.
    client: AgentClient,
}

impl GatewayApp {
    pub async fn build(config: GatewayConfig) -> anyhow::Result<Self> {
        config.validate()?;
        let client = AgentClient::new(&config.tls)?;
        let (http_listener, http_addr) = grpc::bind(config.http_addr).await?;
        let (grpc_listener, grpc_addr) = grpc::bind(config.listen_addr).await?;
        Ok(Self {
            config: Arc::new(config),
            http_listener,
            http_addr,
            grpc_listener,
            grpc_addr,
            readiness: Readiness::new(),
            client,
        })
    }

    /// The public HTTP address (`/mcp`).
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The internal gRPC bridge's address.
    pub fn grpc_addr(&self) -> SocketAddr {
        self.grpc_addr
    }

    /// Shares readiness with the admin server (`/readyz` there and on the public port).
    pub fn with_readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    pub async fn run(self, shutdown: ShutdownSignal) -> anyhow::Result<()> {
        let config = self.config;
        let operator = config
            .operator_token
            .clone()
            .ok_or_else(|| anyhow::anyhow!("LEAGUE_OPERATOR_TOKEN is required"))?;
        let manager_link = ManagerLink::new(grpc::channel(&config.manager_url)?, operator);
        let urls = Urls {
            public: config
                .public_url
                .clone()
                .unwrap_or_else(|| format!("{}/mcp", grpc::local_url(self.http_addr))),
            bridge: config
                .advertise_url
                .clone()
                .unwrap_or_else(|| grpc::local_url(self.grpc_addr)),
        };
        let state = wire(
            config.clone(),
            manager_link.clone(),
            self.client,
            urls,
            self.readiness.clone(),
        );
        let inbound = &state.inbound;
        tokio::spawn(
            inbound
                .replies
                .clone()
                .watch(manager_link.clone(), shutdown.clone()),
        );
        tokio::spawn(inbound.referees.clone().run_claimers(shutdown.clone()));
        let flusher = tokio::spawn(flush_warnings(
            inbound.warnings.clone(),
            manager_link.clone(),
            shutdown.clone(),
        ));
        let bridge = MeasuredBridge(inbound.bridge.clone());
        let routes = tonic::service::Routes::new(PlayerServiceServer::new(bridge));
        let routes = grpc::with_health_and_reflection::<PlayerServiceServer<MeasuredBridge>>(routes).await?;
        let grpc_server = tokio::spawn(grpc::serve(self.grpc_listener, routes, shutdown.clone()));
        // Ready while the manager answers: without it the gateway can only refuse.
        let health = HealthClient::new(grpc::channel(&config.manager_url)?);
        self.readiness.set_check(move || manager_serving(health.clone()));
        self.readiness.set_ready(true);
        tracing::info!(http = %self.http_addr, grpc = %self.grpc_addr, "gateway listening");
        let limits = ConnectionLimits {
            max_connections: config.max_connections,
            max_per_address: config.max_connections_per_address,
            header_timeout: config.header_timeout,
        };
        let router = http::router(state).merge(league_live::router(manager_link.clone(), shutdown.clone()));
        connections::serve(self.http_listener, router, limits, shutdown.clone()).await?;
        grpc_server.await??;
        flusher.await.ok();
        Ok(())
    }
}

/// Where agents reach the gateway.
#[derive(Debug, Clone)]
pub(crate) struct Urls {
    /// `/mcp`, as agents reach it.
    pub(crate) public: String,
    /// The `PlayerService` bridge, as referees reach it.
    pub(crate) bridge: String,
}

/// The gateway's parts wired together, as the HTTP surface holds them; nothing listens or runs yet
/// (tests drive the router built from it without a socket).
pub(crate) fn wire(
    config: Arc<GatewayConfig>,
    manager_link: ManagerLink,
    client: AgentClient,
    urls: Urls,
    readiness: Readiness,
) -> HttpState {
    let replies = Arc::new(Replies::default());
    let warnings = Arc::new(WarningBuffer::default());
    let bridge = PlayerBridge {
        agents: ExternalAgents::new(manager_link.clone()),
        client,
        replies: replies.clone(),
        warnings: warnings.clone(),
        mode: config.compliance,
        public_url: urls.public.clone(),
        timeouts: FallbackTimeouts {
            game_over: league_domain::Timing::default()
                .game_over_timeout
                .min(config.agent_call_timeout),
            other: config.agent_call_timeout,
        },
        event_slots: Arc::new(EventSlots::new(config.event_slots, config.event_slot_window)),
    };
    let referees = Arc::new(Referees::new(
        manager_link.clone(),
        Arc::new(bridge.clone()),
        urls.public.clone(),
    ));
    let limits = Arc::new(RequestLimits::new(Rates {
        per_address: config.address_rate_limit,
        per_agent: config.agent_rate_limit,
        failed_auth_per_minute: config.failed_auth_limit,
        registrations_per_minute: config.registration_rate_limit,
    }));
    let inbound = Inbound {
        manager_link,
        limits: limits.clone(),
        config: config.clone(),
        warnings,
        replies,
        referees,
        standings: Arc::default(),
        bridge,
        bridge_url: urls.bridge,
        public_url: urls.public,
    };
    HttpState {
        mcp: McpService::new(inbound.clone()),
        inbound,
        limits,
        max_body_bytes: config.max_body_bytes,
        body_timeout: config.body_timeout,
        readiness,
    }
}

/// How long a readiness probe waits for the manager's health answer.
const MANAGER_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether the manager says it is serving (its own readiness: up, and its database answering).
async fn manager_serving(mut health: HealthClient<GrpcChannel>) -> bool {
    let check = health.check(HealthCheckRequest::default());
    match tokio::time::timeout(MANAGER_PROBE_TIMEOUT, check).await {
        Ok(Ok(response)) => response.into_inner().status() == ServingStatus::Serving,
        Ok(Err(status)) => {
            tracing::debug!(%status, "the manager is not serving");
            false
        }
        Err(_) => false,
    }
}

/// Writes buffered compliance warnings to the manager every [`FLUSH_INTERVAL`], and once more at
/// shutdown; a failed write keeps them for the next try.
async fn flush_warnings(warnings: Arc<WarningBuffer>, manager_link: ManagerLink, shutdown: ShutdownSignal) {
    loop {
        let stopping = tokio::select! {
            () = tokio::time::sleep(FLUSH_INTERVAL) => false,
            () = shutdown.clone().wait() => true,
        };
        let pending = warnings.take();
        if !pending.is_empty() {
            let request = manager_link.as_operator(RecordComplianceWarningsRequest {
                warnings: pending.clone(),
            });
            if let Err(status) = manager_link
                .agents
                .clone()
                .record_compliance_warnings(request)
                .await
            {
                tracing::warn!(%status, "cannot record compliance warnings yet");
                warnings.restore(pending);
            }
        }
        if stopping {
            return;
        }
    }
}
