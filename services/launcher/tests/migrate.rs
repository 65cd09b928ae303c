//! `league migrate`, run the way compose's one-shot `migrate` service and an upgrade run it: it applies
//! every migration to a fresh database, exits 0, and changes nothing the second time.

use std::path::PathBuf;

use league_manager::postgres;
use secrecy::ExposeSecret;
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn league_migrate_applies_every_migration_once_and_exits() {
    let cluster_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.league/postgres");
    let server = postgres::resolve(&cluster_dir).await.expect("a Postgres server");
    let url = postgres::create_database(&server, "league_migrate")
        .await
        .expect("a fresh database");
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
    let (name,): (String,) = sqlx::query_as("select current_database()")
        .fetch_one(&mut database)
        .await
        .expect("the database's name");
    database.close().await.ok();

    let mut admin = PgConnection::connect(server.url.expose_secret())
        .await
        .expect("an admin connection");
    sqlx::query(&format!("drop database if exists \"{name}\" with (force)"))
        .execute(&mut admin)
        .await
        .expect("the test database is dropped");
}
