//! Each service as a subcommand: configuration from the environment, telemetry, build (binds), announce
//! readiness, serve until SIGTERM/Ctrl-C.

use league_runtime::Shutdown;
use league_runtime::grpc::announce_ready;

pub async fn manager() -> anyhow::Result<()> {
    league_runtime::telemetry::init("manager");
    let config = league_manager::ManagerConfig::load()?;
    let app = league_manager::ManagerApp::build(&config).await?;
    announce_ready("manager", app.local_addr());
    let shutdown = Shutdown::new();
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal()).await
}

pub async fn referee() -> anyhow::Result<()> {
    league_runtime::telemetry::init("referee");
    let config = league_referee::app::RefereeConfig::load()?;
    let app = league_referee::app::RefereeApp::build(config).await?;
    announce_ready("referee", app.local_addr());
    let shutdown = Shutdown::new();
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal()).await
}

pub async fn player() -> anyhow::Result<()> {
    league_runtime::telemetry::init("player");
    let config = league_player::app::PlayerConfig::load()?;
    let app = league_player::app::PlayerApp::build(config).await?;
    announce_ready("player", app.local_addr());
    let shutdown = Shutdown::new();
    tokio::spawn(shutdown.clone().trigger_on_os_signal());
    app.run(shutdown.signal(), None).await
}
