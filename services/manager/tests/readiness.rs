//! The manager is ready only once its database is migrated, and only while the database answers; its
//! metrics are read from the database when scraped.

use std::path::PathBuf;
use std::str::FromStr;

use league_manager::{ManagerApp, ManagerConfig, postgres};
use league_runtime::admin::Readiness;
use secrecy::ExposeSecret;
use sqlx::{ConnectOptions, Connection};

#[tokio::test]
async fn ready_while_the_database_answers_and_metrics_come_from_it() {
    let cluster = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.league/postgres");
    let server = postgres::resolve(&cluster).await.expect("a Postgres server");
    let database_url = postgres::create_database(&server, "league_readiness")
        .await
        .expect("a fresh database");
    let readiness = Readiness::new();
    assert!(
        !readiness.is_ready().await,
        "not ready before the database is migrated"
    );

    let config = ManagerConfig {
        listen_addr: "127.0.0.1:0".parse().expect("an address"),
        database_url: Some(database_url.clone()),
        league_id: "league_ready".into(),
        ..ManagerConfig::default()
    };
    let app = ManagerApp::build(&config).await.expect("the manager builds");
    app.report_readiness(&readiness);
    assert!(
        readiness.is_ready().await,
        "ready once built (migrated) and the database answers"
    );

    league_manager::metrics::refresh_on_scrape(app.pool().clone());
    let text = league_runtime::metrics::render().await.expect("metrics render");
    assert!(
        text.contains("league_manager_matches{status=\"finished\"} 0"),
        "{text}"
    );
    assert!(text.contains("league_manager_match_queue_depth 0"), "{text}");

    // The database goes away under the manager.
    let name = database_url
        .expose_secret()
        .rsplit('/')
        .next()
        .and_then(|rest| rest.split('?').next())
        .expect("a database name")
        .to_owned();
    let mut admin = sqlx::postgres::PgConnectOptions::from_str(server.url.expose_secret())
        .expect("the server's URL")
        .connect()
        .await
        .expect("an admin connection");
    sqlx::query(&format!("drop database \"{name}\" with (force)"))
        .execute(&mut admin)
        .await
        .expect("the database is dropped");
    admin.close().await.ok();
    assert!(!readiness.is_ready().await, "not ready once the database is gone");
}
