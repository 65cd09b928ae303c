//! The connection pool and the migrations (migrations/ at the repository root, embedded at build time),
//! and what a failed connection means for `DATABASE_URL`: Postgres is spoken to over the league's one
//! TLS stack (docs/adr/0043-one-tls-stack.md) as `sslmode` there says, a private CA named by its
//! `sslrootcert`.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use rustls::CertificateError;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};

pub static MIGRATOR: Migrator = sqlx::migrate!("../../migrations");

/// Connects, retrying for a while so the manager can start before its database is up (compose). A URL
/// of another database system is refused at once, not retried.
pub async fn connect(url: &SecretString, max_connections: u32) -> anyhow::Result<PgPool> {
    crate::postgres::check_scheme("DATABASE_URL", url.expose_secret())?;
    let options = connect_options(url.expose_secret())?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(30))
        // No ping to Postgres before every use of a pooled connection: that was a round trip more for
        // every claim, every batch of results and every completion check (docs/benchmarks.md). A
        // connection that died while idle (Postgres restarted) fails its next statement instead, is
        // closed, and that call fails like any other database error: referees repeat their claims and
        // reports, and event delivery its batch (tests/reliability/postgres_restart.rs).
        .test_before_acquire(false)
        .connect_with(options.clone())
        .await
        .map_err(|error| explained(error, &options))
        .context("connecting to Postgres")
}

/// A connection URL read once, before any connection: a `sslrootcert` that names no file is said so now,
/// not as a bare "No such file" from the first TLS handshake. The URL itself is never repeated (it may
/// hold a password).
pub fn connect_options(url: &str) -> anyhow::Result<PgConnectOptions> {
    let options = PgConnectOptions::from_str(url).context("DATABASE_URL is not a Postgres URL")?;
    let root = url::Url::parse(url).ok().and_then(|url| {
        url.query_pairs()
            .find(|(name, _)| name == "sslrootcert")
            .map(|(_, path)| path.into_owned())
    });
    if let Some(root) = root {
        anyhow::ensure!(
            Path::new(&root).is_file(),
            "DATABASE_URL's sslrootcert {root}: no such file (the PEM file of the CA that signed the \
             Postgres server's certificate)"
        );
    }
    Ok(options)
}

/// `error`, from connecting as `options` say, with what to change in `DATABASE_URL` when TLS (or its
/// absence) is why: the driver's own words name neither the setting nor the remedy. Said on one line:
/// the driver's words already hold their sources, which a chain would repeat.
pub fn explained(error: sqlx::Error, options: &PgConnectOptions) -> anyhow::Error {
    match advice(&error, options) {
        Some(advice) => anyhow::anyhow!("{advice}: {error}"),
        None => anyhow::Error::new(error),
    }
}

fn advice(error: &sqlx::Error, options: &PgConnectOptions) -> Option<String> {
    let host = options.get_host();
    let mode = match options.get_ssl_mode() {
        PgSslMode::Disable => "disable",
        PgSslMode::Allow => "allow",
        PgSslMode::Prefer => "prefer",
        PgSslMode::Require => "require",
        PgSslMode::VerifyCa => "verify-ca",
        PgSslMode::VerifyFull => "verify-full",
    };
    if let Some(tls) = league_runtime::tls::rustls_error(error) {
        return Some(match tls {
            rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            ) => format!(
                "Postgres's TLS certificate is not valid for {host}, the host DATABASE_URL names \
                 (sslmode={mode} checks the name): connect by a name the certificate holds"
            ),
            rustls::Error::InvalidCertificate(_) => format!(
                "Postgres's TLS certificate is not trusted (sslmode={mode} in DATABASE_URL): it must \
                 chain to the system's roots or to the CA that DATABASE_URL's sslrootcert names \
                 (?sslmode={mode}&sslrootcert=/path/to/ca.pem)"
            ),
            _ => format!("TLS with Postgres at {host} failed (sslmode={mode} in DATABASE_URL)"),
        });
    }
    match error {
        // pg_hba.conf has only `hostssl` lines for this client: the server says "no encryption".
        sqlx::Error::Database(refused)
            if refused.code().as_deref() == Some("28000") && refused.message().contains("no encryption") =>
        {
            Some(format!(
                "the Postgres server at {host} takes only TLS connections and DATABASE_URL says \
                 sslmode={mode}: use sslmode=verify-full with sslrootcert=/path/to/ca.pem (or \
                 sslmode=require, which encrypts without checking who answers)"
            ))
        }
        sqlx::Error::Tls(_) => Some(format!(
            "TLS with Postgres at {host} failed (sslmode={mode} in DATABASE_URL)"
        )),
        _ => None,
    }
}

/// Connections the manager holds for as long as it runs: the LISTEN connection of the wake-ups
/// (crate::wakeups), the LISTEN connection of relayed replies (crate::agents) and the event-delivery
/// lock's connection (crate::event_delivery), and one spare for a reconnection.
const HELD_CONNECTIONS: u32 = 4;

/// The pool of the connections the manager holds for good ([`HELD_CONNECTIONS`]), apart from the pool
/// that does the work: inside it they took three of its connections for good, so a working pool of
/// three starved, and a pool sized for the work had to be sized for them as well. Opened lazily: its
/// holders connect, and reconnect, as they start.
pub fn connect_held(url: &SecretString) -> anyhow::Result<PgPool> {
    PgPoolOptions::new()
        .max_connections(HELD_CONNECTIONS)
        .acquire_timeout(Duration::from_secs(30))
        .connect_lazy(url.expose_secret())
        .context("the database URL of the held connections")
}

/// The result writer's own connection (crate::league::report_queue), apart from the working pool.
/// The writer records batches and completes rounds one after another, so one connection is all it
/// uses; on its own it also plans its statements once ([`planned_once`]): in a 20-player league most
/// releases of a round (crate::league::queue::release_round) were custom-planned on the working pool,
/// 1–1.5 ms each (docs/benchmarks.md).
pub fn connect_writer(pool: &PgPool) -> PgPool {
    planned_once(pool, 1)
}

/// The claims' own connections (crate::league::queue::claim), as many as the working pool has. On the
/// working pool Postgres never settled on a generic plan for the claim, whose cost it estimates from
/// its parameters: at 1,000 players it planned every claim afresh, 0.4 ms each, 4.7 s of Postgres's
/// time in a league (pg_stat_statements, docs/benchmarks.md). The generic plan reads the same indexes
/// (the current round's matches through matches_by_round).
pub fn connect_claims(pool: &PgPool) -> PgPool {
    planned_once(pool, pool.options().get_max_connections())
}

/// A pool apart from the working one, on its options, whose statements are planned at their first
/// execution on each connection, for good (`plan_cache_mode = force_generic_plan`). Postgres plans a
/// statement afresh on its first five executions on each connection, and from then on whenever it
/// judges the generic plan dearer than the custom ones: the plan a statement of this kind settles on
/// is the generic one (the same indexes, whatever the parameters), without those plannings. Opened
/// lazily.
fn planned_once(pool: &PgPool, max_connections: u32) -> PgPool {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(30))
        .test_before_acquire(false)
        .connect_lazy_with(
            pool.connect_options()
                .as_ref()
                .clone()
                .options([("plan_cache_mode", "force_generic_plan")]),
        )
}

/// Applies pending migrations. Safe to run from several managers at once (sqlx takes an advisory lock).
pub async fn migrate(pool: &PgPool) -> anyhow::Result<()> {
    MIGRATOR.run(pool).await.context("applying migrations")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(error: sqlx::Error, url: &str) -> String {
        let options = PgConnectOptions::from_str(url).expect("a URL");
        format!("{:#}", explained(error, &options))
    }

    /// The TLS layer's error as the driver hands it on: inside an I/O error.
    fn handshake_failed(certificate: CertificateError) -> sqlx::Error {
        sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(certificate),
        ))
    }

    #[test]
    fn a_certificate_postgres_does_not_pass_names_the_setting_to_change() {
        let untrusted = said(
            handshake_failed(CertificateError::UnknownIssuer),
            "postgres://u@db.example/league?sslmode=verify-full",
        );
        assert!(
            untrusted.contains("not trusted")
                && untrusted.contains("sslrootcert")
                && untrusted.contains("sslmode=verify-full")
                && untrusted.contains("UnknownIssuer"),
            "{untrusted}"
        );
        let elsewhere = said(
            handshake_failed(CertificateError::NotValidForName),
            "postgres://u@10.0.0.5/league?sslmode=verify-full",
        );
        assert!(
            elsewhere.contains("not valid for 10.0.0.5") && elsewhere.contains("sslmode=verify-full"),
            "{elsewhere}"
        );
        let refused = said(
            sqlx::Error::Io(std::io::ErrorKind::ConnectionRefused.into()),
            "postgres://u@db.example/league",
        );
        assert!(!refused.contains("sslmode"), "not TLS: {refused}");
    }

    #[test]
    fn a_root_certificate_that_is_not_there_is_said_before_connecting() {
        let refused =
            connect_options("postgres://u:secret@db/league?sslmode=verify-full&sslrootcert=/nowhere/ca.pem")
                .expect_err("refused");
        let text = format!("{refused:#}");
        assert!(text.contains("sslrootcert /nowhere/ca.pem"), "{text}");
        assert!(!text.contains("secret"), "the password stays out: {text}");
        assert!(connect_options("postgres://u@db/league?sslmode=require").is_ok());
    }
}
