//! Postgres over TLS, as `sslmode` in `DATABASE_URL` says, against a private cluster of the test's own
//! (never the shared server): TCP on a free loopback port, `ssl = on` with a certificate for `localhost`
//! that a CA the test makes signed, and a pg_hba.conf of `hostssl` lines only. The pool the manager
//! opens (league_manager::db::connect) connects with `require`, with `verify-full` and the right
//! `sslrootcert`, and without `sslmode` (`prefer`); a wrong root, a host name the certificate does not
//! hold, and `sslmode=disable` are refused, each with the setting to change named.

#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use league_manager::{db, postgres};
use secrecy::SecretString;

/// What to do when a program the test needs is missing: on a developer's machine the test is skipped
/// with the reason (the harness shows it with `--nocapture`); in CI (`CI` set, as .ci/run runs, having
/// installed both) it fails, so that a missing program can never pass the test unseen.
fn missing(what: &str) -> Option<Cluster> {
    assert!(
        std::env::var_os("CI").is_none_or(|value| value.is_empty()),
        "{what}: CI must run this test (.ci/run installs PostgreSQL and OpenSSL)"
    );
    eprintln!("SKIPPED: {what}");
    None
}

/// A cluster under a short directory in /tmp, stopped and removed when dropped.
struct Cluster {
    dir: PathBuf,
    port: u16,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = postgres::stop_private_cluster(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether we are root: Postgres refuses to run as root, so its programs then run as `postgres`.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

/// Runs `program args`, as the `postgres` user when we are root; panics with its stderr on failure.
fn as_postgres(program: &Path, args: &[&str]) {
    let output = if is_root() {
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(program)
            .args(args)
            .output()
    } else {
        Command::new(program).args(args).output()
    }
    .unwrap_or_else(|error| panic!("{}: {error}", program.display()));
    assert!(
        output.status.success(),
        "{} {args:?}: {}",
        program.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A CA (`ca.pem`) and the server certificate it signed for `localhost` alone (`server.pem`,
/// `server.key`), made with OpenSSL in `dir`.
fn certificates(openssl: &Path, dir: &Path) {
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n\
         extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost\n",
    )
    .unwrap();
    let key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    for command in [
        format!(
            "req -x509 {key} -keyout ca.key -out ca.pem -days 2 -subj /CN=league-postgres-test-ca \
             -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
        ),
        format!("req {key} -keyout server.key -out server.csr -subj /CN=localhost"),
        "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
         -extfile server.ext -out server.pem"
            .to_owned(),
    ] {
        let output = Command::new(openssl)
            .args(command.split_whitespace())
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "openssl {command}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The cluster, started; `None` (the test says why) when PostgreSQL's or OpenSSL's programs are missing.
fn start() -> Option<Cluster> {
    let (Some(initdb), Some(pg_ctl)) = (postgres::find_binary("initdb"), postgres::find_binary("pg_ctl"))
    else {
        return missing("PostgreSQL's initdb and pg_ctl are not installed");
    };
    let Some(openssl) = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
    else {
        return missing("openssl is not installed (it makes the test's certificates)");
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    let dir = PathBuf::from(format!("/tmp/league-pgtls-{}-{nanos:08x}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A free port, chosen by the system and given to Postgres.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cluster = Cluster { dir, port };
    let dir = &cluster.dir;
    certificates(&openssl, dir);
    // Postgres refuses a key others may read.
    std::fs::set_permissions(dir.join("server.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
    if is_root() {
        let chowned = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir)
            .status();
        assert!(
            chowned.is_ok_and(|status| status.success()),
            "chown {}",
            dir.display()
        );
    }
    let data = dir.join("data").display().to_string();
    as_postgres(&initdb, &["-A", "trust", "-U", "postgres", "-D", &data]);
    // TLS or nothing over TCP: no `host` line, so a connection without TLS matches no line at all.
    std::fs::write(
        dir.join("data/pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n",
    )
    .unwrap();
    let settings = format!(
        "-c listen_addresses=127.0.0.1 -p {} -k {} -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
        cluster.port,
        dir.display(),
        dir.join("server.pem").display(),
        dir.join("server.key").display(),
    );
    let log = dir.join("postgres.log").display().to_string();
    as_postgres(
        &pg_ctl,
        &["start", "-w", "-D", &data, "-l", &log, "-o", &settings],
    );
    Some(cluster)
}

impl Cluster {
    fn url(&self, host: &str, query: &str) -> SecretString {
        SecretString::from(format!(
            "postgres://postgres@{host}:{}/postgres{query}",
            self.port
        ))
    }

    fn ca(&self) -> String {
        self.dir.join("ca.pem").display().to_string()
    }

    /// Connects as the manager does; whether the connection is encrypted, or the error in full.
    async fn connect(&self, host: &str, query: &str) -> Result<bool, String> {
        let pool = db::connect(&self.url(host, query), 1)
            .await
            .map_err(|error| format!("{error:#}"))?;
        let (ssl,): (bool,) = sqlx::query_as("select ssl from pg_stat_ssl where pid = pg_backend_pid()")
            .fetch_one(&pool)
            .await
            .unwrap();
        pool.close().await;
        Ok(ssl)
    }
}

#[tokio::test]
async fn postgres_is_spoken_to_over_tls_as_sslmode_says() {
    let Some(cluster) = start() else { return };
    let ca = cluster.ca();

    assert_eq!(cluster.connect("127.0.0.1", "?sslmode=require").await, Ok(true));
    assert_eq!(
        cluster
            .connect("localhost", &format!("?sslmode=verify-full&sslrootcert={ca}"))
            .await,
        Ok(true)
    );
    // No sslmode is `prefer`, as with libpq: TLS when the server offers it.
    assert_eq!(cluster.connect("127.0.0.1", "").await, Ok(true));
    // verify-ca checks the CA. (It should not check the name either, but sqlx 0.8 does:
    // transact-rs/sqlx#3793; docs/operations.md says to use verify-full.)
    assert_eq!(
        cluster
            .connect("localhost", &format!("?sslmode=verify-ca&sslrootcert={ca}"))
            .await,
        Ok(true)
    );

    // A CA that did not sign the server's certificate.
    let wrong_root = league_testkit::tls::CA;
    let untrusted = cluster
        .connect(
            "localhost",
            &format!("?sslmode=verify-full&sslrootcert={wrong_root}"),
        )
        .await
        .expect_err("a certificate the wrong root did not sign");
    assert!(
        untrusted.contains("certificate is not trusted") && untrusted.contains("sslrootcert"),
        "{untrusted}"
    );
    // Without sslrootcert only the system's roots are trusted: not the test's CA either.
    let unknown = cluster
        .connect("localhost", "?sslmode=verify-full")
        .await
        .expect_err("the test's CA is not a system root");
    assert!(unknown.contains("sslrootcert"), "{unknown}");
    // The right root, but a host name the certificate does not hold.
    let elsewhere = cluster
        .connect("127.0.0.1", &format!("?sslmode=verify-full&sslrootcert={ca}"))
        .await
        .expect_err("the certificate names localhost only");
    assert!(
        elsewhere.contains("not valid for 127.0.0.1") && elsewhere.contains("verify-full"),
        "{elsewhere}"
    );
    // pg_hba.conf takes TLS only.
    let refused = cluster
        .connect("127.0.0.1", "?sslmode=disable")
        .await
        .expect_err("hostssl lines only");
    assert!(
        refused.contains("takes only TLS connections") && refused.contains("sslmode=disable"),
        "{refused}"
    );
    let missing = cluster
        .connect("localhost", "?sslmode=verify-full&sslrootcert=/nowhere/ca.pem")
        .await
        .expect_err("no such root file");
    assert!(missing.contains("sslrootcert /nowhere/ca.pem"), "{missing}");
}
