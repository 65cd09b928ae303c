//! Where a report reads its league from: the manager's gRPC queries, always. Either a running manager
//! (`--manager`, else the `league serve` or `league run` this user runs, by its state file), or — for
//! a past league whose services have stopped — the manager's query service run inside this process over
//! the league's database (`--database`, else `DATABASE_URL`). Never a database nobody named: the
//! newest `league_run_*` on a shared server may be anyone's. The in-process service serves queries only: no
//! event delivery, no match queue, nothing that changes the league (the migrations are applied,
//! as any manager start does, so an older database gains the JSON columns and views).

use std::path::Path;
use std::sync::Arc;

use league_domain::Timing;
use league_manager::auth::Authenticator;
use league_manager::config::RegistrationConfig;
use league_manager::league::referee_admission::RefereeAdmission;
use league_manager::league::registration::Rules;
use league_manager::service::Manager;
use league_manager::wakeups::Wakeups;
use league_manager::{db, postgres};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::manager_service_server::ManagerServiceServer;
use league_runtime::Shutdown;
use league_runtime::grpc::{self, GrpcChannel};
use secrecy::{ExposeSecret, SecretString};

/// Where a command that reads a league (`league report`; the operator's reading commands with
/// `--database`) finds it.
#[derive(Debug, Clone, clap::Args)]
pub struct SourceArgs {
    /// Read a running manager at this gRPC URL (with LEAGUE_OPERATOR_TOKEN) instead of a database.
    #[arg(long, env = "LEAGUE_MANAGER_URL")]
    pub manager: Option<String>,
    /// The league database: a URL or a database name on the local server (default: DATABASE_URL, else
    /// the system this user runs, `league serve` or `league run`; `league run --keep` names its
    /// database).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database: Option<String>,
    /// Where a private Postgres cluster lives, if `league run` started one.
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: std::path::PathBuf,
}

impl SourceArgs {
    pub async fn connect(&self) -> anyhow::Result<Connected> {
        // An empty variable (LEAGUE_MANAGER_URL= in a shell) is no choice at all.
        let given = |value: &Option<String>| value.clone().filter(|v| !v.trim().is_empty());
        let source = match (given(&self.manager), given(&self.database)) {
            (Some(url), _) => Source::Manager {
                url,
                token: std::env::var("LEAGUE_OPERATOR_TOKEN")
                    .map(SecretString::from)
                    .map_err(|_| anyhow::anyhow!("--manager needs LEAGUE_OPERATOR_TOKEN"))?,
            },
            (None, Some(database)) => Source::Database(database_url(&database, &self.cluster_dir).await?),
            // The `league serve` (or a `league run` still going) of this user; nothing else is a guess.
            (None, None) => match crate::state::State::read()? {
                Some(running) => {
                    eprintln!("reading {}", running.describe());
                    // The system's database is known: a results folder records it.
                    let mut connected = connect(Source::Manager {
                        token: running.operator_token()?,
                        url: running.manager_url,
                    })
                    .await?;
                    connected.database = Some(running.database);
                    connected.league_id = Some(running.league_id);
                    return Ok(connected);
                }
                None => anyhow::bail!(
                    "no league to read: nothing runs (no {}); pass --database <name or URL> (the \
                     database `league run --keep` kept) or --manager <URL>",
                    crate::state::state_file().display()
                ),
            },
        };
        connect(source).await
    }
}

/// Where the league is read from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A running manager and the operator token.
    Manager { url: String, token: SecretString },
    /// A league database (a connection URL).
    Database(SecretString),
}

/// A manager to ask, and what keeps it up when it runs in this process.
#[derive(Debug)]
pub struct Connected {
    pub client: ManagerServiceClient<GrpcChannel>,
    pub token: SecretString,
    /// Set when the query service runs here; dropping it stops the service.
    _service: Option<StopOnDrop>,
    /// The database read: when this process reads one, or the running system's (`league serve`,
    /// `league run`) as its state file names it.
    pub database: Option<String>,
    /// The running system's league, as its state file names it: the league read when none is named,
    /// as the operator's commands do (None: the newest league).
    pub league_id: Option<String>,
}

impl Connected {
    /// Whether the league is read from a database no manager runs (`--database`): a league not over
    /// there is stopped — its run was interrupted or killed — not in progress.
    pub fn nothing_runs_it(&self) -> bool {
        self._service.is_some()
    }
}

#[derive(Debug)]
struct StopOnDrop(Shutdown);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.trigger();
    }
}

pub async fn connect(source: Source) -> anyhow::Result<Connected> {
    let database_url = match source {
        Source::Manager { url, token } => {
            return Ok(Connected {
                client: ManagerServiceClient::new(grpc::channel(&url)?),
                token,
                _service: None,
                database: None,
                league_id: None,
            });
        }
        Source::Database(url) => url,
    };
    let database = database_name(database_url.expose_secret());
    let pool = db::connect(&database_url, 4).await?;
    db::migrate(&pool).await?;
    let token = league_manager::tokens::issue()?;
    let auth = Arc::new(Authenticator::new(pool.clone(), Some(&token)));
    let (listener, addr) = grpc::bind(([127, 0, 0, 1], 0).into()).await?;
    // Read-only use: nobody registers here (a referee would need a token nobody knows).
    let rules = Rules::new(
        &RegistrationConfig::default(),
        addr,
        None,
        RefereeAdmission::Operator(league_manager::tokens::issue()?),
    );
    let service = Manager::new(pool, auth, Arc::new(Wakeups::default()), Timing::default(), rules);
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
        league_id: None,
    })
}

/// `--database`: a connection URL, or the name of a database on the server Postgres is found on.
pub async fn database_url(given: &str, cluster_dir: &Path) -> anyhow::Result<SecretString> {
    if given.contains("://") {
        postgres::check_scheme("--database (or DATABASE_URL)", given)?;
        return Ok(SecretString::from(given.to_owned()));
    }
    anyhow::ensure!(
        !given.is_empty() && given.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "--database takes a connection URL or a database name, not {given:?}"
    );
    let server = postgres::resolve(cluster_dir).await?;
    Ok(SecretString::from(postgres::with_database(
        server.url.expose_secret(),
        given,
    )))
}

/// The database part of a connection URL, for saying what was read (never the credentials).
fn database_name(url: &str) -> String {
    let path = url.split_once('?').map_or(url, |(path, _)| path);
    path.rsplit_once('/').map_or(path, |(_, name)| name).to_owned()
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
