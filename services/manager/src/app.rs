//! Building and running the manager: connect and migrate, create the configured league, bind, then
//! serve the API and run the event delivery until shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use league_proto::v2::agents_service_server::AgentsServiceServer;
use league_proto::v2::manager_service_server::ManagerServiceServer;
use league_runtime::admin::Readiness;
use league_runtime::{ShutdownSignal, grpc};
use secrecy::ExposeSecret;
use sqlx::PgPool;
use tokio::net::TcpListener;

use crate::agents::Agents;
use crate::auth::Authenticator;
use crate::config::ManagerConfig;
use crate::db;
use crate::event_delivery::EventDelivery;
use crate::league::referee_admission::RefereeAdmission;
use crate::league::registration;
use crate::league::start::{self, NewLeague};
use crate::report_route::ManagerRoutes;
use crate::service::Manager;
use crate::wakeups::Wakeups;

/// How long a readiness probe waits for the database to answer.
const READINESS_PING_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub struct ManagerApp {
    listener: TcpListener,
    local_addr: SocketAddr,
    pool: PgPool,
    /// The connections held for good (db::connect_held): LISTEN and the event-delivery lock.
    held: PgPool,
    service: Manager,
    agents: Agents,
    wakeups: Arc<Wakeups>,
}

impl ManagerApp {
    pub async fn build(config: &ManagerConfig) -> anyhow::Result<Self> {
        let url = config
            .database_url
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("DATABASE_URL is not set"))?;
        let pool = db::connect(url, config.db_max_connections).await?;
        let held = db::connect_held(url)?;
        db::migrate(&pool).await?;
        crate::league::contact_key::fill_in(&pool).await?;
        crate::league::round_completion::complete_final_rounds(
            &pool,
            &Default::default(),
            &Default::default(),
        )
        .await
        .map_err(|error| anyhow::anyhow!("completing rounds left final: {error}"))?;
        if let Some((league_id, game_type)) = config.first_league()? {
            start::ensure(
                &pool,
                &NewLeague {
                    league_id,
                    game_type,
                    timing: config.timing,
                    auto_start_players: config.auto_start_players,
                    // Other formats and sizes come with CreateLeague.
                    cycles: 1,
                    max_players: None,
                },
            )
            .await
            .map_err(|error| anyhow::anyhow!("creating league {}: {error}", config.league_id))?;
        }
        let wakeups = Arc::new(Wakeups::default());
        let auth = Arc::new(Authenticator::new(pool.clone(), config.operator_token.as_ref()));
        let admission = RefereeAdmission::resolve(&config.registration)?;
        let agents = Agents::new(pool.clone(), auth.clone(), admission.clone());
        let (listener, local_addr) = grpc::bind(config.listen_addr).await?;
        let rules = registration::Rules::new(
            &config.registration,
            local_addr,
            Some(url.expose_secret()),
            admission,
        );
        let service = Manager::new(pool.clone(), auth, wakeups.clone(), config.timing, rules);
        Ok(Self {
            listener,
            local_addr,
            pool,
            held,
            service,
            agents,
            wakeups,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Makes `readiness` ready — `build` has migrated the database — for as long as the database
    /// answers, asked on every probe: a manager cut off from Postgres can serve nothing.
    pub fn report_readiness(&self, readiness: &Readiness) {
        let pool = self.pool.clone();
        readiness.set_check(move || {
            let pool = pool.clone();
            async move {
                let ping = sqlx::query!("select 1 as one").fetch_one(&pool);
                matches!(
                    tokio::time::timeout(READINESS_PING_TIMEOUT, ping).await,
                    Ok(Ok(_))
                )
            }
        });
        readiness.set_ready(true);
    }

    pub async fn run(self, shutdown: ShutdownSignal) -> anyhow::Result<()> {
        // The gRPC health status says what `/readyz` says: migrated (`build` did it) and the database
        // answering, asked on every check.
        let readiness = Readiness::new();
        self.report_readiness(&readiness);
        tokio::spawn(self.wakeups.clone().listen(self.held.clone(), shutdown.clone()));
        let event_delivery = tokio::spawn(
            EventDelivery::new(self.pool.clone(), self.held.clone(), self.wakeups.clone())
                .run(shutdown.clone()),
        );
        tokio::spawn(self.agents.clone().listen(self.held.clone(), shutdown.clone()));
        tokio::spawn(self.agents.clone().end_watches_on(shutdown.clone()));
        let routes = tonic::service::Routes::new(ManagerRoutes::new(self.service))
            .add_service(AgentsServiceServer::new(self.agents));
        let routes =
            grpc::with_readiness_health_and_reflection::<ManagerServiceServer<Manager>>(routes, readiness)
                .await?;
        tracing::info!(addr = %self.local_addr, "manager listening");
        grpc::serve(self.listener, routes, shutdown).await?;
        event_delivery.await.ok();
        self.pool.close().await;
        self.held.close().await;
        Ok(())
    }
}
