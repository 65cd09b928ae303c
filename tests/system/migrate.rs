//! `league migrate`, run the way compose's one-shot `migrate` service and an upgrade run it: it applies
//! every migration to a fresh database, exits 0, and changes nothing the second time.

use league_testkit::TestDatabase;
use secrecy::ExposeSecret;
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn league_migrate_applies_every_migration_once_and_exits() {
    let test_database = TestDatabase::create("league_migrate").await;
    let url = test_database.url();
    let latest = league_manager::db::MIGRATOR
        .iter()
        .map(|migration| migration.version)
        .max()
        .expect("at least one migration");

    for attempt in ["first", "second"] {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_league"))
            .arg("migrate")
            .env("DATABASE_URL", url.expose_secret())
            .env("RUST_LOG", "warn")
            .output()
            .await
            .expect("the league binary runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "the {attempt} `league migrate` failed\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(stdout.trim(), format!("LEAGUE_MIGRATED {latest}"));
    }

    let mut database = PgConnection::connect(url.expose_secret())
        .await
        .expect("a connection to the migrated database");
    let (applied,): (i64,) = sqlx::query_as("select count(*) from _sqlx_migrations where success")
        .fetch_one(&mut database)
        .await
        .expect("sqlx's migration table");
    assert_eq!(
        usize::try_from(applied).expect("a count"),
        league_manager::db::MIGRATOR.iter().count()
    );
    database.close().await.ok();
}
