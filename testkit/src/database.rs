//! A fresh Postgres database for one test, dropped when the test is done with it.
//!
//! The server is found the way the launcher finds it (`league_manager::postgres::resolve`: `DATABASE_URL`,
//! else 127.0.0.1:5432, else a private cluster under `.league/postgres`), so tests run wherever a league
//! runs. Dropping happens in `Drop`, on a thread of its own, `with (force)` so that connections a test
//! left open (a manager still serving) cannot keep the database alive: a passing test leaves nothing
//! behind, and a failing one keeps its database and names it.

use std::path::PathBuf;
use std::str::FromStr;

use league_manager::postgres;
use secrecy::{ExposeSecret, SecretString};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection};

/// Where a private cluster lives when no server is reachable: `.league/postgres` in the repository.
pub fn cluster_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.league/postgres")
}

/// A database that exists from [`TestDatabase::create`] until this value is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    url: SecretString,
    server: SecretString,
    name: String,
}

impl TestDatabase {
    /// Creates an empty database named `<prefix>_<random>`. Panics (it is a test) with the reason when no
    /// server can be found or the database cannot be created.
    pub async fn create(prefix: &str) -> Self {
        let server = postgres::resolve(&cluster_dir())
            .await
            .unwrap_or_else(|e| panic!("a Postgres server for the tests: {e:#}"));
        Self::create_on(&server, prefix).await
    }

    /// The same on a given server (a test that stops and starts its own cluster).
    pub async fn create_on(server: &postgres::PostgresServer, prefix: &str) -> Self {
        let url = postgres::create_database(server, prefix)
            .await
            .unwrap_or_else(|e| panic!("a fresh database for the test: {e:#}"));
        let name = database_name(url.expose_secret());
        Self {
            url,
            server: server.url.clone(),
            name,
        }
    }

    /// The database's connection URL.
    pub fn url(&self) -> &SecretString {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops the database now, under whoever is connected (a test of what happens when it goes away).
    pub async fn drop_now(&self) {
        drop_database(&self.server, &self.name)
            .await
            .unwrap_or_else(|e| panic!("dropping database {}: {e}", self.name));
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A failed test keeps its database for whoever investigates, and says which one it is.
            eprintln!("the failed test's database is kept for inspection: {}", self.name);
            return;
        }
        let server = self.server.clone();
        let name = std::mem::take(&mut self.name);
        if let Err(e) = on_own_thread(async move { drop_database(&server, &name).await }) {
            eprintln!("warning: could not drop the test database: {e}");
        }
    }
}

/// Drops the database `name` on the tests' server (found as [`TestDatabase::create`] finds it), for a
/// test whose database something else made (`league serve`). Works inside or outside a runtime; a
/// failure is printed, not raised, as it runs where the test is already ending.
pub fn drop_named(name: &str) {
    let name = name.to_owned();
    let dropped = on_own_thread(async move {
        let server = postgres::resolve(&cluster_dir())
            .await
            .map_err(|e| format!("{e:#}"))?;
        drop_database(&server.url, &name).await
    });
    if let Err(e) = dropped {
        eprintln!("warning: could not drop the test's database: {e}");
    }
}

type DropResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Runs `work` to its end on a thread with its own small runtime: a `Drop` may run inside a Tokio
/// runtime (which cannot be blocked on) or outside one, and this works in both.
fn on_own_thread(work: impl Future<Output = DropResult> + Send + 'static) -> DropResult {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(work)
    })
    .join()
    .map_err(|_| "the thread dropping the database panicked")?
}

async fn drop_database(server: &SecretString, name: &str) -> DropResult {
    let mut admin = PgConnectOptions::from_str(server.expose_secret())?
        .connect()
        .await?;
    sqlx::query(&format!("drop database if exists \"{name}\" with (force)"))
        .execute(&mut admin)
        .await?;
    admin.close().await?;
    Ok(())
}

/// The database name in a connection URL (the path after the authority, before any query).
fn database_name(url: &str) -> String {
    let base = url.split_once('?').map_or(url, |(base, _)| base);
    base.rsplit_once('/').map_or("", |(_, name)| name).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_the_last_path_segment() {
        assert_eq!(
            database_name("postgres://postgres@127.0.0.1:5432/league_x?sslmode=disable"),
            "league_x"
        );
        assert_eq!(database_name("postgres:///league_y?host=/tmp/sock"), "league_y");
    }
}
