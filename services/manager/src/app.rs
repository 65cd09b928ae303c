//! Building and running the manager: connect and migrate, create the configured league, bind, then
//! serve the API and run the outbox dispatcher until shutdown.

use std::net::SocketAddr;
use std::sync::Arc;

use league_proto::v2::manager_service_server::ManagerServiceServer;
use league_runtime::{ShutdownSignal, grpc};
use sqlx::PgPool;
use tokio::net::TcpListener;

use crate::auth::Authenticator;
use crate::config::ManagerConfig;
use crate::db;
use crate::dispatcher::Dispatcher;
use crate::league::start::{self, NewLeague};
use crate::service::Manager;
use crate::wakeups::Wakeups;

#[derive(Debug)]
pub struct ManagerApp {
    listener: TcpListener,
    local_addr: SocketAddr,
    pool: PgPool,
    service: Manager,
    wakeups: Arc<Wakeups>,
}

impl ManagerApp {
    pub async fn build(config: &ManagerConfig) -> anyhow::Result<Self> {
        let url = config
            .database_url
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("DATABASE_URL is not set"))?;
        let pool = db::connect(url, config.db_max_connections).await?;
        db::migrate(&pool).await?;
        if !config.league_id.is_empty() {
            start::ensure(
                &pool,
                &NewLeague {
                    league_id: config.league_id.clone(),
                    game_type: config.game_type.clone(),
                    timing: config.timing,
                    auto_start_players: config.auto_start_players,
                },
            )
            .await
            .map_err(|error| anyhow::anyhow!("creating league {}: {error}", config.league_id))?;
        }
        let wakeups = Arc::new(Wakeups::default());
        let auth = Arc::new(Authenticator::new(pool.clone(), config.operator_token.as_ref()));
        let service = Manager::new(pool.clone(), auth, wakeups.clone(), config.timing);
        let (listener, local_addr) = grpc::bind(config.listen_addr).await?;
        Ok(Self {
            listener,
            local_addr,
            pool,
            service,
            wakeups,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub async fn run(self, shutdown: ShutdownSignal) -> anyhow::Result<()> {
        tokio::spawn(self.wakeups.clone().listen(self.pool.clone(), shutdown.clone()));
        let dispatcher =
            tokio::spawn(Dispatcher::new(self.pool.clone(), self.wakeups.clone()).run(shutdown.clone()));
        let routes = tonic::service::Routes::new(ManagerServiceServer::new(self.service));
        let routes = grpc::with_health_and_reflection::<ManagerServiceServer<Manager>>(routes).await?;
        tracing::info!(addr = %self.local_addr, "manager listening");
        grpc::serve(self.listener, routes, shutdown).await?;
        dispatcher.await.ok();
        self.pool.close().await;
        Ok(())
    }
}
