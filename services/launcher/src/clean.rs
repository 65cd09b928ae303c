//! What a local run leaves behind, and `league clean` to remove it. A finished `league run` drops its
//! database unless `--keep`, and stops the private Postgres cluster if it was the one to start it; an
//! interrupted or failed run keeps its database (it is the evidence), names it, and notes it in the
//! user's state directory (`kept-databases` beside the state file). `league clean` drops the databases
//! noted there — this user's, never another's on a shared server — and stops the private cluster;
//! named, it drops those databases, a `league serve` one (`league_serve`) too, with the agents'
//! identities kept for it.

use std::path::{Path, PathBuf};

use std::io::Write;

use anyhow::Context;
use clap::Args;
use league_manager::postgres::{self, Origin, PostgresServer};

use crate::serve::{self, SERVE_DATABASE};
use crate::state;

/// How `league run` names its databases: `league_run_<16 hex digits>`.
pub const RUN_DATABASE_PREFIX: &str = "league_run";

/// With no database named and neither option: the databases this user's runs kept, and the cluster.
#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// Databases to drop: `league_run_<hex>` ones, as `league run` names them, and those of `league
    /// serve` (`league_serve`, or its `--database`), with the identities it kept for their agents.
    pub databases: Vec<String>,
    /// Drop every `league_run_<hex>` database on the server that nobody is connected to, whoever's run
    /// kept it.
    #[arg(long)]
    pub all: bool,
    /// Stop the private Postgres cluster under `--cluster-dir`, if one runs.
    #[arg(long)]
    pub stop_cluster: bool,
    /// Where a private Postgres cluster lives.
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: PathBuf,
}

impl CleanArgs {
    /// Whether nothing was named and no option given: then everything runs kept is cleaned.
    fn everything(&self) -> bool {
        self.databases.is_empty() && !self.all && !self.stop_cluster
    }
}

pub async fn clean(mut args: CleanArgs) -> anyhow::Result<()> {
    let everything = args.everything();
    if everything {
        args.databases = noted()?;
        args.stop_cluster = true;
    }
    let prefix = format!("{RUN_DATABASE_PREFIX}_");
    let served = serve::kept_databases();
    refuse_foreign(&args.databases, &prefix, &served)?;
    // A `league serve` running on one holds it: stopping that serve comes first.
    let mut held = vec![];
    for name in args.databases.iter().filter(|name| !name.starts_with(&prefix)) {
        let lock = serve::hold(&serve::default_state_dir(name)).with_context(|| {
            format!("database {name} is kept: stop its `league serve` (Ctrl-C) before dropping its data")
        })?;
        held.push(lock);
    }
    if !args.databases.is_empty() || args.all {
        drop_databases(&args, &prefix).await?;
        drop(held);
    }
    if everything && args.databases.is_empty() {
        println!(
            "no database kept by your runs (`league clean --all` drops every league run's on the server)"
        );
    }
    if everything && !served.is_empty() {
        println!(
            "kept the data of `league serve` ({}): name a database to drop it, e.g. `league clean {}`",
            served_list(&served),
            served[0]
        );
    }
    if args.stop_cluster {
        stop_private_cluster(&args.cluster_dir).await?;
    }
    Ok(())
}

/// Refuses a named database that is neither a run's nor a `league serve` one: clean drops nothing else.
fn refuse_foreign(databases: &[String], prefix: &str, served: &[String]) -> anyhow::Result<()> {
    if let Some(other) = databases
        .iter()
        .find(|name| !name.starts_with(prefix) && !served.contains(name) && *name != SERVE_DATABASE)
    {
        anyhow::bail!(
            "{other:?} is not a database of `league run` (those are named {prefix}<hex>) or of `league \
             serve` ({})",
            served_list(served)
        );
    }
    Ok(())
}

/// Drops the named databases (and with `--all` every run's on the server), saying of each what became
/// of it; fails when one could not be dropped, unless `--all` (another user's may be in use).
async fn drop_databases(args: &CleanArgs, prefix: &str) -> anyhow::Result<()> {
    let server = postgres::resolve(&args.cluster_dir).await?;
    let mut dropped = vec![];
    let mut names = args.databases.clone();
    if args.all {
        names.extend(postgres::databases_with_prefix(&server, RUN_DATABASE_PREFIX).await?);
    }
    names.sort();
    names.dedup();
    // A run's database named twice (`league clean X`, again) is said to be gone, not dropped again.
    let runs = postgres::databases_with_prefix(&server, RUN_DATABASE_PREFIX).await?;
    let (gone, present): (Vec<String>, Vec<String>) = names
        .into_iter()
        .partition(|name| name.starts_with(prefix) && !runs.contains(name));
    for name in &gone {
        println!("no database {name} (dropped already)");
    }
    forget(&gone);
    let names = present;
    let mut failed = 0;
    for name in &names {
        match postgres::drop_database(&server, name).await {
            Ok(()) if name.starts_with(prefix) => {
                dropped.push(name.clone());
                println!("dropped database {name}");
            }
            Ok(()) => {
                dropped.push(name.clone());
                if !remove_serve_identities(name) {
                    failed += 1;
                }
            }
            Err(error) => {
                failed += 1;
                eprintln!("kept database {name}: {error:#}");
            }
        }
    }
    forget(&dropped);
    if names.is_empty() && gone.is_empty() {
        println!("no database of `league run` to drop");
    }
    anyhow::ensure!(
        failed == 0 || args.all,
        "{failed} database(s) could not be dropped"
    );
    Ok(())
}

/// After a `league serve` database is dropped: its agents' identities name players and referees of the
/// data just dropped, so they go too. False when they could not be removed (said on stderr).
fn remove_serve_identities(name: &str) -> bool {
    let dir = serve::default_state_dir(name);
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => {
            println!(
                "dropped database {name} and the identities `league serve` kept for it in {}",
                dir.display()
            );
            true
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            println!("dropped database {name}");
            true
        }
        Err(error) => {
            eprintln!("dropped database {name}, but not {}: {error}", dir.display());
            false
        }
    }
}

/// `--stop-cluster`: stops the private cluster under `cluster_dir` if one runs, and says which.
async fn stop_private_cluster(cluster_dir: &Path) -> anyhow::Result<()> {
    if postgres::private_cluster_running(cluster_dir) {
        stop_cluster(cluster_dir).await?;
        println!(
            "stopped the private Postgres cluster under {}",
            cluster_dir.display()
        );
    } else {
        println!("no private Postgres cluster runs under {}", cluster_dir.display());
    }
    Ok(())
}

/// Where the databases this user's runs kept are noted, one name a line: beside the state file.
fn kept_file() -> PathBuf {
    state::state_file().with_file_name("kept-databases")
}

/// Notes `database` as kept by a run of this user's, for a bare `league clean`. A note that cannot be
/// written is said, not fatal: the run names the database all the same.
pub fn note_kept(database: &str) {
    note(&format!("{database}\n"), database);
}

/// Notes `database` as the one this `league run` plays in, before any service starts: a run killed
/// with SIGKILL says nothing, and a bare `league clean` still finds its database. While the run lives
/// (its pid on the line), `league clean` leaves it alone; a run that drops its database forgets it.
pub fn note_in_use(database: &str) {
    note(&format!("{database} {}\n", std::process::id()), database);
}

fn note(line: &str, database: &str) {
    let path = kept_file();
    let noted = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            // One short line per append: appends of different runs do not interleave.
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            file.write_all(line.as_bytes())
        });
    if let Err(error) = noted {
        eprintln!(
            "warning: {database} could not be noted in {} for `league clean`: {error}",
            path.display()
        );
    }
}

/// A database noted by [`note_kept`] or [`note_in_use`]: its name, and the run using it, if noted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Noted {
    name: String,
    run: Option<u32>,
}

impl Noted {
    fn parse(line: &str) -> Option<Noted> {
        let mut words = line.split_whitespace();
        let name = words.next()?.to_owned();
        let run = words.next().and_then(|pid| pid.parse().ok());
        Some(Noted { name, run })
    }

    /// The pid of the live run playing in it, if one is.
    fn in_use_by(&self) -> Option<u32> {
        self.run.filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
    }
}

/// The notes of [`note_kept`] and [`note_in_use`] (none when nothing was noted).
fn notes() -> anyhow::Result<Vec<Noted>> {
    let path = kept_file();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    let mut notes: Vec<Noted> = text.lines().filter_map(Noted::parse).collect();
    notes.sort_by(|a, b| (&a.name, a.run).cmp(&(&b.name, b.run)));
    notes.dedup();
    Ok(notes)
}

/// The databases noted and not dropped since, but those a live run still plays in (said).
fn noted() -> anyhow::Result<Vec<String>> {
    let notes = notes()?;
    let mut names: Vec<String> = notes.iter().map(|note| note.name.clone()).collect();
    names.dedup();
    names.retain(|name| {
        let in_use = notes
            .iter()
            .filter(|note| &note.name == name)
            .find_map(Noted::in_use_by);
        if let Some(pid) = in_use {
            println!("kept database {name}: `league run` (pid {pid}) plays in it");
        }
        in_use.is_none()
    });
    Ok(names)
}

/// Takes `dropped` out of the notes.
pub fn forget(dropped: &[String]) {
    let path = kept_file();
    let noted = match notes() {
        Ok(noted) => noted,
        Err(error) => {
            eprintln!("warning: {} was not updated: {error:#}", path.display());
            return;
        }
    };
    let left: Vec<String> = noted
        .into_iter()
        .filter(|note| !dropped.contains(&note.name))
        .map(|note| match note.run {
            Some(pid) => format!("{} {pid}", note.name),
            None => note.name,
        })
        .collect();
    let written = match left.is_empty() {
        true => std::fs::remove_file(&path).or_else(|error| match error.kind() {
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(error),
        }),
        false => std::fs::write(
            &path,
            left.iter().map(|name| format!("{name}\n")).collect::<String>(),
        ),
    };
    if let Err(error) = written {
        eprintln!("warning: {} was not updated: {error}", path.display());
    }
}

/// The databases of `league serve`, as words.
fn served_list(served: &[String]) -> String {
    match served {
        [] => format!("{SERVE_DATABASE} by default"),
        names => names.join(", "),
    }
}

/// A league a run finished, and the database it is in.
#[derive(Debug)]
pub struct Finished<'a> {
    pub database: &'a str,
    pub league: &'a str,
}

/// After a finished run: drops its database unless `keep`, and stops a private cluster this run started;
/// says what it did (unless `quiet`) and what was kept.
pub async fn after_run(
    server: &PostgresServer,
    finished: &Finished<'_>,
    started_cluster: bool,
    keep: bool,
    quiet: bool,
) -> anyhow::Result<()> {
    let Finished { database, league } = *finished;
    if keep {
        note_kept(database);
        eprintln!(
            "kept database {database} (`league report --database {database} --league {league}` writes its \
             results again; `league clean {database}` drops it)"
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
    forget(&[database.to_owned()]);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> CleanArgs {
        #[derive(Debug, clap::Parser)]
        struct Only {
            #[command(flatten)]
            clean: CleanArgs,
        }
        let all = std::iter::once("clean").chain(args.iter().copied());
        <Only as clap::Parser>::try_parse_from(all)
            .expect("valid arguments")
            .clean
    }

    #[test]
    fn bare_clean_cleans_everything_runs_kept_and_named_clean_only_what_is_named() {
        assert!(parsed(&[]).everything());
        assert!(!parsed(&["league_run_00ff00ff00ff00ff"]).everything());
        assert!(!parsed(&["--stop-cluster"]).everything());
        assert!(!parsed(&["--all"]).everything());
    }
}
