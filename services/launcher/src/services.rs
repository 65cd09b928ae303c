//! Each service as a subcommand: configuration from the environment, telemetry, the admin server
//! (metrics, health, readiness), build (binds), announce readiness, serve until SIGTERM/Ctrl-C. The
//! telemetry guard lives to the end of each function: dropping it exports the last spans.

use league_runtime::Shutdown;
use league_runtime::admin::{AdminConfig, AdminServer, Readiness};
use league_runtime::grpc::announce_ready;

/// Starts the admin server first, so `/healthz` answers (and `/readyz` says "not yet") while the service
/// is still starting — the manager's migrations may take a while.
async fn admin(readiness: &Readiness, shutdown: &Shutdown) -> anyhow::Result<AdminServer> {
    let config = AdminConfig::load()?;
    AdminServer::start(config.admin_addr, readiness.clone(), shutdown.signal()).await
}

pub async fn manager() -> anyhow::Result<()> {
    let _telemetry = league_runtime::telemetry::init("manager");
    let config = league_manager::ManagerConfig::load()?;
    let shutdown = Shutdown::new();
    let readiness = Readiness::new();
    let admin = admin(&readiness, &shutdown).await?;
    let app = league_manager::ManagerApp::build(&config).await?;
    app.report_readiness(&readiness);
    league_manager::metrics::refresh_on_scrape(app.pool().clone());
    admin.announce("manager");
    announce_ready("manager", app.local_addr());
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal()).await
}

/// Applies pending migrations and exits: compose runs it once before the manager, an upgrade runs it
/// before the new version rolls out. The manager still migrates at start-up; running both at once is safe
/// (sqlx holds an advisory lock while it migrates).
pub async fn migrate() -> anyhow::Result<()> {
    let _telemetry = league_runtime::telemetry::init("migrate");
    let config = league_manager::ManagerConfig::load()?;
    let url = config
        .database_url
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("DATABASE_URL is not set"))?;
    let pool = league_manager::db::connect(url, 2).await?;
    league_manager::db::migrate(&pool).await?;
    pool.close().await;
    let version = league_manager::db::MIGRATOR
        .iter()
        .map(|migration| migration.version)
        .max();
    println!("LEAGUE_MIGRATED {}", version.unwrap_or(0));
    Ok(())
}

pub async fn referee() -> anyhow::Result<()> {
    let _telemetry = league_runtime::telemetry::init("referee");
    let config = league_referee::app::RefereeConfig::load()?;
    let shutdown = Shutdown::new();
    let readiness = Readiness::new();
    let admin = admin(&readiness, &shutdown).await?;
    let app = league_referee::app::RefereeApp::build(config)
        .await?
        .with_readiness(readiness);
    admin.announce("referee");
    announce_ready("referee", app.local_addr());
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal()).await
}

pub async fn player() -> anyhow::Result<()> {
    let _telemetry = league_runtime::telemetry::init("player");
    let config = league_player::app::PlayerConfig::load()?;
    let shutdown = Shutdown::new();
    let readiness = Readiness::new();
    let admin = admin(&readiness, &shutdown).await?;
    let app = league_player::app::PlayerApp::build(config)
        .await?
        .with_readiness(readiness);
    admin.announce("player");
    announce_ready("player", app.local_addr());
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal(), None).await
}

pub async fn gateway() -> anyhow::Result<()> {
    let _telemetry = league_runtime::telemetry::init("gateway");
    let config = league_gateway::GatewayConfig::load()?;
    let shutdown = Shutdown::new();
    let readiness = Readiness::new();
    let admin = admin(&readiness, &shutdown).await?;
    let app = league_gateway::GatewayApp::build(config)
        .await?
        .with_readiness(readiness);
    admin.announce("gateway");
    announce_ready("gateway", app.http_addr());
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal()).await
}
