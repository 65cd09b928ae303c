//! The manager is ready only once its database is migrated, and only while the database answers; its
//! metrics are read from the database when scraped.

use league_manager::{ManagerApp, ManagerConfig};
use league_runtime::admin::Readiness;
use league_testkit::TestDatabase;

#[tokio::test]
async fn ready_while_the_database_answers_and_metrics_come_from_it() {
    let database = TestDatabase::create("league_readiness").await;
    let readiness = Readiness::new();
    assert!(
        !readiness.is_ready().await,
        "not ready before the database is migrated"
    );

    let config = ManagerConfig {
        listen_addr: "127.0.0.1:0".parse().expect("an address"),
        database_url: Some(database.url().clone()),
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
    database.drop_now().await;
    assert!(!readiness.is_ready().await, "not ready once the database is gone");
}
