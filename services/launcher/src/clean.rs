//! What a local run leaves behind, and `league clean` to remove it. A finished `league run` drops its
//! database unless `--keep`, and stops the private Postgres cluster if it was the one to start it; an
//! interrupted or failed run keeps its database (it is the evidence) and names it. `league clean` drops
//! such databases and stops the private cluster.

use std::path::{Path, PathBuf};

use clap::Args;
use league_manager::postgres::{self, Origin, PostgresServer};

/// How `league run` names its databases: `league_run_<16 hex digits>`.
pub const RUN_DATABASE_PREFIX: &str = "league_run";

#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// Databases to drop (only `league_run_<hex>` ones, as `league run` names them).
    pub databases: Vec<String>,
    /// Drop every `league_run_<hex>` database that nobody is connected to.
    #[arg(long)]
    pub all: bool,
    /// Stop the private Postgres cluster under `--cluster-dir`, if one runs.
    #[arg(long)]
    pub stop_cluster: bool,
    /// Where a private Postgres cluster lives.
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: PathBuf,
}

pub async fn clean(args: CleanArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        !args.databases.is_empty() || args.all || args.stop_cluster,
        "nothing to clean: name databases, or pass --all or --stop-cluster"
    );
    let prefix = format!("{RUN_DATABASE_PREFIX}_");
    if let Some(other) = args.databases.iter().find(|name| !name.starts_with(&prefix)) {
        anyhow::bail!("{other:?} is not a database of `league run` (those are named {prefix}<hex>)");
    }
    if !args.databases.is_empty() || args.all {
        let server = postgres::resolve(&args.cluster_dir).await?;
        let mut names = args.databases.clone();
        if args.all {
            names.extend(postgres::databases_with_prefix(&server, RUN_DATABASE_PREFIX).await?);
        }
        names.sort();
        names.dedup();
        let mut failed = 0;
        for name in &names {
            match postgres::drop_database(&server, name).await {
                Ok(()) => println!("dropped database {name}"),
                Err(error) => {
                    failed += 1;
                    eprintln!("kept database {name}: {error:#}");
                }
            }
        }
        if names.is_empty() {
            println!("no database of `league run` to drop");
        }
        anyhow::ensure!(
            failed == 0 || args.all,
            "{failed} database(s) could not be dropped"
        );
    }
    if args.stop_cluster {
        if postgres::private_cluster_running(&args.cluster_dir) {
            stop_cluster(&args.cluster_dir).await?;
            println!(
                "stopped the private Postgres cluster under {}",
                args.cluster_dir.display()
            );
        } else {
            println!(
                "no private Postgres cluster runs under {}",
                args.cluster_dir.display()
            );
        }
    }
    Ok(())
}

/// After a finished run: drops its database unless `keep`, and stops a private cluster this run started;
/// says what it did (unless `quiet`) and what was kept.
pub async fn after_run(
    server: &PostgresServer,
    database: &str,
    started_cluster: bool,
    keep: bool,
    quiet: bool,
) -> anyhow::Result<()> {
    if keep {
        eprintln!(
            "kept database {database} (`league report --database {database}` writes its results again; \
             `league clean {database}` drops it)"
        );
        if let Origin::PrivateCluster(dir) = &server.origin {
            eprintln!(
                "the private Postgres cluster under {} keeps running (`league clean --stop-cluster` stops it)",
                dir.display()
            );
        }
        return Ok(());
    }
    postgres::drop_database(server, database).await?;
    if !quiet {
        eprintln!("dropped database {database} (--keep keeps it, for `league report` later)");
    }
    if let (true, Origin::PrivateCluster(dir)) = (started_cluster, &server.origin) {
        stop_cluster(dir).await?;
        if !quiet {
            eprintln!("stopped the private Postgres cluster this run started");
        }
    }
    Ok(())
}

async fn stop_cluster(dir: &Path) -> anyhow::Result<()> {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || postgres::stop_private_cluster(&dir)).await?
}
