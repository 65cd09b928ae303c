//! A real manager in the test's own process: gRPC on 127.0.0.1:0 over a fresh database (dropped after
//! the test), with the operator token [`OPERATOR_TOKEN`]. The suites that test the real binaries start
//! `league manager` as a process instead (tests/reliability, tests/system/observability).

use std::net::SocketAddr;

use league_domain::Timing;
use league_manager::{ManagerApp, ManagerConfig};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_runtime::Shutdown;
use league_runtime::credentials::operator_request;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;
use sqlx::PgPool;

use crate::TestDatabase;

/// The operator credential of every manager started here.
pub const OPERATOR_TOKEN: &str = "operator-token-for-tests";

/// A running manager; it stops when this is dropped, and its database goes with it.
#[derive(Debug)]
pub struct TestManager {
    pub addr: SocketAddr,
    /// `http://` and the address.
    pub url: String,
    pub pool: PgPool,
    pub database_url: SecretString,
    pub shutdown: Shutdown,
    pub database: TestDatabase,
}

impl TestManager {
    /// A client of its `ManagerService`.
    pub fn client(&self) -> ManagerServiceClient<GrpcChannel> {
        ManagerServiceClient::new(league_runtime::grpc::channel(&self.url).expect("the manager's URL"))
    }

    /// `message` with the operator's credential.
    pub fn operator<T>(&self, message: T) -> tonic::Request<T> {
        operator_request(&SecretString::from(OPERATOR_TOKEN.to_owned()), message)
    }
}

impl Drop for TestManager {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

/// A manager over a fresh database named after `database_prefix`, with one even_odd league
/// `league_id` started by the operator, the default timings and 8 database connections;
/// `configure` changes any of it.
pub async fn spawn_manager(
    database_prefix: &str,
    league_id: &str,
    configure: impl FnOnce(&mut ManagerConfig),
) -> TestManager {
    let database = TestDatabase::create(database_prefix).await;
    let database_url = database.url().clone();
    let mut config = ManagerConfig {
        listen_addr: "127.0.0.1:0".parse().expect("address"),
        database_url: Some(database_url.clone()),
        db_max_connections: 8,
        operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
        league_id: league_id.into(),
        game_type: "even_odd".into(),
        auto_start_players: 0,
        timing: Timing::default(),
        ..ManagerConfig::default()
    };
    // A test's league is a local trial: any referee registers, unless the test asks for a token.
    config.registration.referee_registration_open = true;
    configure(&mut config);
    let app = ManagerApp::build(&config).await.expect("manager builds");
    let addr = app.local_addr();
    let pool = app.pool().clone();
    let shutdown = Shutdown::new();
    tokio::spawn(app.run(shutdown.signal()));
    TestManager {
        addr,
        url: format!("http://{addr}"),
        pool,
        database_url,
        shutdown,
        database,
    }
}
