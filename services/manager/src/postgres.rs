//! Finding a Postgres server, in the order the design fixes: `DATABASE_URL`; else the local default
//! `postgres://postgres@127.0.0.1:5432`; else, when PostgreSQL's binaries are installed, a private
//! cluster started under the project's own directory (as the `postgres` user when we are root, since
//! Postgres refuses to run as root); else a message saying how to get one. The launcher and the tests use
//! this; a deployed manager is simply given `DATABASE_URL`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection};

/// The local default: what docker compose and the project's machines provide. Without TLS: it is this
/// machine's loopback, where TLS protects nothing, and `prefer` (libpq's default, an `sslmode`-less
/// URL's meaning) would encrypt every statement to a local server with ssl = on: a 50-player bench took
/// 6.1–6.6 s with it against 5.4–5.6 s without in one series of three pairs (debug build; within noise
/// in a second series of two, docs/adr/0043-one-tls-stack.md). A `DATABASE_URL` keeps its own sslmode.
pub const LOCAL_DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable";

/// A reachable Postgres server and how it was found.
#[derive(Debug, Clone)]
pub struct PostgresServer {
    /// Connection URL of the server's `postgres` database (the maintenance database).
    pub url: SecretString,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// From `DATABASE_URL`.
    Environment,
    /// The local default on 127.0.0.1:5432.
    LocalDefault,
    /// A private cluster under this directory, started by us.
    PrivateCluster(PathBuf),
}

/// Resolves a server; `cluster_dir` is where a private cluster lives if one is needed.
pub async fn resolve(cluster_dir: &Path) -> anyhow::Result<PostgresServer> {
    if let Ok(url) = std::env::var("DATABASE_URL") {
        check_scheme("DATABASE_URL", &url)?;
        let url = with_database(&url, "postgres");
        reachable(&url).await.context("DATABASE_URL")?;
        return Ok(PostgresServer {
            url: SecretString::from(url),
            origin: Origin::Environment,
        });
    }
    if reachable(LOCAL_DEFAULT_URL).await.is_ok() {
        return Ok(PostgresServer {
            url: SecretString::from(LOCAL_DEFAULT_URL.to_owned()),
            origin: Origin::LocalDefault,
        });
    }
    start_private_cluster(cluster_dir).await
}

/// Creates a new, empty database named `<prefix>_<random>` on `server` and returns its URL.
pub async fn create_database(server: &PostgresServer, prefix: &str) -> anyhow::Result<SecretString> {
    let name = format!("{prefix}_{:016x}", rand::random::<u64>());
    let mut admin = PgConnectOptions::from_str(server.url.expose_secret())?
        .log_statements(tracing::log::LevelFilter::Debug)
        .connect()
        .await
        .context("connecting to create a database")?;
    // Built at run time, not a checked macro: a database's name is an identifier, which no statement
    // can take as a parameter.
    sqlx::query(&format!("create database \"{name}\""))
        .execute(&mut admin)
        .await
        .with_context(|| format!("creating database {name}"))?;
    admin.close().await.ok();
    Ok(SecretString::from(with_database(
        server.url.expose_secret(),
        &name,
    )))
}

/// The database `name` on `server`, created if it does not exist yet (a server's data across restarts).
pub async fn ensure_database(server: &PostgresServer, name: &str) -> anyhow::Result<SecretString> {
    anyhow::ensure!(
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "database name {name:?}: use letters, digits and _ only"
    );
    let mut admin = PgConnectOptions::from_str(server.url.expose_secret())?
        .log_statements(tracing::log::LevelFilter::Debug)
        .connect()
        .await
        .context("connecting to create a database")?;
    let exists = sqlx::query_scalar!("select 1 from pg_database where datname = $1", name)
        .fetch_optional(&mut admin)
        .await
        .context("looking for the database")?;
    if exists.is_none() {
        // Built at run time: a database's name is an identifier, not a parameter.
        sqlx::query(&format!("create database \"{name}\""))
            .execute(&mut admin)
            .await
            .with_context(|| format!("creating database {name}"))?;
    }
    admin.close().await.ok();
    Ok(SecretString::from(with_database(
        server.url.expose_secret(),
        name,
    )))
}

/// Drops the database `name` on `server` (Postgres refuses while anyone is connected to it).
pub async fn drop_database(server: &PostgresServer, name: &str) -> anyhow::Result<()> {
    let mut admin = PgConnectOptions::from_str(server.url.expose_secret())?
        .log_statements(tracing::log::LevelFilter::Debug)
        .connect()
        .await
        .context("connecting to drop a database")?;
    // Built at run time: a database's name is an identifier, not a parameter.
    let dropped = sqlx::query(&format!("drop database if exists \"{}\"", name.replace('"', "")))
        .execute(&mut admin)
        .await
        .with_context(|| format!("dropping database {name}"));
    admin.close().await.ok();
    dropped.map(|_| ())
}

/// The databases on `server` that [`create_database`] made with `prefix`, by name.
pub async fn databases_with_prefix(server: &PostgresServer, prefix: &str) -> anyhow::Result<Vec<String>> {
    let mut admin = PgConnectOptions::from_str(server.url.expose_secret())?
        .connect()
        .await
        .context("connecting to list databases")?;
    let names = sqlx::query_scalar!(
        "select datname from pg_database where datname ~ ('^' || $1 || '_[0-9a-f]{16}$') order by datname",
        prefix
    )
    .fetch_all(&mut admin)
    .await
    .context("listing databases")?;
    admin.close().await.ok();
    Ok(names)
}

/// The database a connection URL names.
pub fn database_name(url: &str) -> &str {
    let base = url.split_once('?').map_or(url, |(base, _)| base);
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    base[authority_start..]
        .split_once('/')
        .map_or("", |(_, database)| database)
}

/// Whether the private cluster under `dir` looks started (its postmaster's pid file is there).
pub fn private_cluster_running(dir: &Path) -> bool {
    dir.join("data").join("postmaster.pid").exists()
}

/// `url` with its database name replaced by `database` (query parameters kept).
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{database}", &base[..host_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// Refuses a URL of another database system (`mysql://…`) before trying to connect to it: connected
/// to as Postgres it fails with something unrelated, such as a name lookup. Only the scheme is shown:
/// the rest may hold a password.
pub fn check_scheme(setting: &str, url: &str) -> anyhow::Result<()> {
    match url.split_once("://") {
        Some(("postgres" | "postgresql", _)) => Ok(()),
        Some((scheme, _)) => anyhow::bail!("{setting} must be postgres://… (saw {scheme}://…)"),
        None => anyhow::bail!("{setting} must be postgres://… (saw a value without a scheme)"),
    }
}

/// How long a server has to answer a connection.
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// Connects once to `url`. A failure says where it connected (host and port, or socket) and whether
/// the server is not there or refused the user: what to change differs.
async fn reachable(url: &str) -> anyhow::Result<()> {
    let options = crate::db::connect_options(url)?;
    let server = match options.get_socket() {
        Some(socket) => format!("the socket in {}", socket.display()),
        None => format!("{}:{}", options.get_host(), options.get_port()),
    };
    let connected = tokio::time::timeout(ANSWER_WITHIN, options.connect())
        .await
        .map_err(|_| {
            anyhow::anyhow!("Postgres at {server} cannot be reached: no answer within {ANSWER_WITHIN:?}")
        })?;
    match connected {
        Ok(connection) => {
            connection.close().await.ok();
            Ok(())
        }
        // Class 28, invalid authorization: a wrong password, or no such role.
        Err(sqlx::Error::Database(error)) if error.code().is_some_and(|code| code.starts_with("28")) => {
            anyhow::bail!(
                "Postgres at {server} refused user {:?}: {} (an authentication or role error: give a \
                 user and password the server accepts)",
                options.get_username(),
                error.message()
            )
        }
        // TLS (or its absence) named with the `sslmode` to change, as `db::connect` says it.
        Err(error) => anyhow::bail!(
            "Postgres at {server} cannot be reached: {:#}",
            crate::db::explained(error, &options)
        ),
    }
}

/// Starts (initialising it the first time) a cluster that listens only on a Unix socket in `dir`. Keep
/// `dir` short: the socket's path must fit in about 100 bytes.
pub async fn start_private_cluster(dir: &Path) -> anyhow::Result<PostgresServer> {
    let (initdb, pg_ctl) = match (find_binary("initdb"), find_binary("pg_ctl")) {
        (Some(initdb), Some(pg_ctl)) => (initdb, pg_ctl),
        _ => anyhow::bail!(
            "no Postgres found: DATABASE_URL is not set, nothing answers on 127.0.0.1:5432, and \
             PostgreSQL's binaries (initdb, pg_ctl) are not installed. Install PostgreSQL \
             (e.g. `apt-get install postgresql`) or point DATABASE_URL at a server."
        ),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = dir.canonicalize()?;
    let data = dir.join("data");
    let as_root = is_root();
    if as_root {
        chown_to_postgres(&dir)?;
    }
    if !data.join("PG_VERSION").exists() {
        run_as_postgres(
            as_root,
            Command::new(&initdb)
                .args(["-A", "trust", "-U", "postgres", "-D"])
                .arg(&data),
        )
        .context("initdb")?;
    }
    let socket_option = format!("-c listen_addresses='' -k {}", dir.display());
    let running = data.join("postmaster.pid").exists()
        && run_as_postgres(as_root, Command::new(&pg_ctl).arg("status").arg("-D").arg(&data)).is_ok();
    if !running {
        run_as_postgres(
            as_root,
            Command::new(&pg_ctl)
                .args(["start", "-w", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(dir.join("postgres.log"))
                .arg("-o")
                .arg(&socket_option),
        )
        .context("pg_ctl start")?;
    }
    let url = format!("postgres://postgres@localhost/postgres?host={}", dir.display());
    reachable(&url)
        .await
        .context("the private cluster started but does not answer")?;
    Ok(PostgresServer {
        url: SecretString::from(url),
        origin: Origin::PrivateCluster(dir),
    })
}

/// Stops the private cluster under `dir` (`pg_ctl stop -m fast`: every connection is cut, as in a
/// database restart or failover). [`start_private_cluster`] starts it again on the same data.
pub fn stop_private_cluster(dir: &Path) -> anyhow::Result<()> {
    let pg_ctl = find_binary("pg_ctl").context("pg_ctl is not installed")?;
    let data = dir.join("data");
    run_as_postgres(
        is_root(),
        Command::new(&pg_ctl)
            .args(["stop", "-w", "-m", "fast", "-D"])
            .arg(&data),
    )
    .context("pg_ctl stop")
}

/// PostgreSQL's program `name` (`initdb`, `pg_ctl`): on PATH, or where Debian installs the server's.
pub fn find_binary(name: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join(name)).collect())
        .unwrap_or_default();
    // Debian installs the server binaries outside PATH.
    if let Ok(versions) = std::fs::read_dir("/usr/lib/postgresql") {
        candidates.extend(
            versions
                .flatten()
                .map(|version| version.path().join("bin").join(name)),
        );
    }
    candidates.into_iter().find(|candidate| candidate.is_file())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

fn chown_to_postgres(dir: &Path) -> anyhow::Result<()> {
    let status = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir)
        .status()?;
    anyhow::ensure!(
        status.success(),
        "cannot give {} to the postgres user",
        dir.display()
    );
    Ok(())
}

fn run_as_postgres(as_root: bool, command: &mut Command) -> anyhow::Result<()> {
    let output = if as_root {
        let mut wrapped = Command::new("runuser");
        wrapped
            .args(["-u", "postgres", "--"])
            .arg(command.get_program())
            .args(command.get_args());
        wrapped.output()?
    } else {
        command.output()?
    };
    anyhow::ensure!(
        output.status.success(),
        "{:?} failed: {}",
        command.get_program(),
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_of_another_database_system_is_refused_showing_only_its_scheme() {
        assert!(check_scheme("DATABASE_URL", "postgres://u:p@h/db").is_ok());
        assert!(check_scheme("DATABASE_URL", "postgresql://h/db").is_ok());
        let refused = check_scheme("DATABASE_URL", "mysql://root:secret@db:3306/league")
            .expect_err("not Postgres")
            .to_string();
        assert_eq!(refused, "DATABASE_URL must be postgres://… (saw mysql://…)");
        let bare = check_scheme("DATABASE_URL", "secret@db").expect_err("no scheme");
        assert!(!bare.to_string().contains("secret"), "{bare}");
    }

    #[tokio::test]
    async fn an_unreachable_server_is_named_by_host_and_port() {
        // Port 1 on loopback: nothing listens there, and the refusal is immediate.
        let error = reachable("postgres://postgres@127.0.0.1:1/postgres")
            .await
            .expect_err("nothing listens on port 1");
        let message = format!("{error:#}");
        assert!(
            message.starts_with("Postgres at 127.0.0.1:1 cannot be reached: "),
            "{message}"
        );
    }

    #[test]
    fn the_database_name_is_read_from_a_url() {
        assert_eq!(
            database_name("postgres://p@h:5432/league_run_00ff"),
            "league_run_00ff"
        );
        assert_eq!(database_name("postgres://p@localhost/a?host=/tmp/pg"), "a");
        assert_eq!(database_name("postgres://p@h:5432"), "");
    }

    #[test]
    fn the_database_name_is_replaced_and_the_rest_kept() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "league_x"),
            "postgres://postgres@127.0.0.1:5432/league_x"
        );
        assert_eq!(
            with_database("postgres://u:p@db:5432", "league"),
            "postgres://u:p@db:5432/league"
        );
        assert_eq!(
            with_database("postgres://postgres@localhost/postgres?host=/tmp/pg", "a"),
            "postgres://postgres@localhost/a?host=/tmp/pg"
        );
    }
}
