//! Where a report reads its league from: the manager's gRPC queries, always. Either a running manager
//! (`--manager`), or — for a past league whose services have stopped — the manager's query service run
//! inside this process over the league's database (`--database`, else `DATABASE_URL`, else the newest
//! database `league run` left on the local server). The in-process service serves queries only: no
//! outbox dispatcher, no match queue, nothing that changes the league (the migrations are applied,
//! as any manager start does, so an older database gains the JSON columns and views).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use league_manager::auth::Authenticator;
use league_manager::config::TimingConfig;
use league_manager::service::Manager;
use league_manager::wakeups::Wakeups;
use league_manager::{db, postgres};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::manager_service_server::ManagerServiceServer;
use league_runtime::Shutdown;
use league_runtime::grpc::{self, GrpcChannel};
use secrecy::{ExposeSecret, SecretString};

/// The prefix of the databases `league run` creates (one per run).
pub const RUN_DATABASE_PREFIX: &str = "league_run";

/// Where the league is read from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A running manager and the operator token.
    Manager { url: String, token: SecretString },
    /// A league database (a connection URL).
    Database(SecretString),
    /// The newest database `league run` created on the server Postgres is found on.
    NewestRun,
}

/// A manager to ask, and what keeps it up when it runs in this process.
#[derive(Debug)]
pub struct Connected {
    pub client: ManagerServiceClient<GrpcChannel>,
    pub token: SecretString,
    /// Set when the query service runs here; dropping it stops the service.
    _service: Option<StopOnDrop>,
    /// The database read, when this process reads one.
    pub database: Option<String>,
}

#[derive(Debug)]
struct StopOnDrop(Shutdown);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.trigger();
    }
}

pub async fn connect(source: Source, cluster_dir: &Path) -> anyhow::Result<Connected> {
    let database_url = match source {
        Source::Manager { url, token } => {
            return Ok(Connected {
                client: ManagerServiceClient::new(grpc::channel(&url)?),
                token,
                _service: None,
                database: None,
            });
        }
        Source::Database(url) => url,
        Source::NewestRun => newest_run_database(cluster_dir).await?,
    };
    let database = database_name(database_url.expose_secret());
    let pool = db::connect(&database_url, 4).await?;
    db::migrate(&pool).await?;
    let token = league_manager::tokens::issue()?;
    let auth = Arc::new(Authenticator::new(pool.clone(), Some(&token)));
    let service = Manager::new(pool, auth, Arc::new(Wakeups::default()), TimingConfig::default());
    let (listener, addr) = grpc::bind(([127, 0, 0, 1], 0).into()).await?;
    let shutdown = Shutdown::new();
    let routes = tonic::service::Routes::new(ManagerServiceServer::new(service));
    let signal = shutdown.signal();
    tokio::spawn(async move {
        if let Err(error) = grpc::serve(listener, routes, signal).await {
            tracing::warn!(%error, "the report's query service stopped");
        }
    });
    Ok(Connected {
        client: ManagerServiceClient::new(grpc::channel(&grpc::local_url(addr))?),
        token,
        _service: Some(StopOnDrop(shutdown)),
        database: Some(database),
    })
}

/// The most recently created `league_run_*` database on the server Postgres is found on.
async fn newest_run_database(cluster_dir: &Path) -> anyhow::Result<SecretString> {
    let server = postgres::resolve(cluster_dir).await?;
    let pool = db::connect(&server.url, 1).await?;
    // Database oids grow as databases are created: the largest is the newest.
    let newest: Option<(String,)> =
        sqlx::query_as("select datname from pg_database where datname like $1 order by oid desc limit 1")
            .bind(format!("{RUN_DATABASE_PREFIX}\\_%"))
            .fetch_optional(&pool)
            .await
            .context("listing databases")?;
    pool.close().await;
    let (name,) = newest.ok_or_else(|| {
        anyhow::anyhow!("no league database found: run `league run` first, or pass --database or --manager")
    })?;
    Ok(SecretString::from(postgres::with_database(
        server.url.expose_secret(),
        &name,
    )))
}

/// The database part of a connection URL, for saying what was read (never the credentials).
fn database_name(url: &str) -> String {
    let path = url.split('?').next().unwrap_or_default();
    path.rsplit('/').next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_the_last_path_segment_without_parameters() {
        assert_eq!(
            database_name("postgres://user:secret@host:5432/league_run_00ff?sslmode=disable"),
            "league_run_00ff"
        );
    }
}
