//! `league report` and `league verify`, the commands, and `league run`'s last step: the launcher's side
//! of the results report. What a results folder holds and how it is written and checked is the report's
//! own crate (`league_report`); here is only what needs the launcher — the command-line arguments, the
//! connection to the league ([`source`]: the running system by its state file, or a database), what
//! `league run` was told ([`run_settings`]) and the run it just finished ([`after_run`]).

pub mod run_settings;
pub mod source;
pub mod verify;

use std::path::{Path, PathBuf};

use clap::Args;
use league_domain::LeagueId;
use league_report::data::LeagueData;
use league_report::{RUN_RESULTS, Writing, archive, write_archive};
use secrecy::ExposeSecret;
use serde_json::Value;

/// The `league` binary's version and commit (its build script's `LEAGUE_GIT_COMMIT`), which a results
/// folder's provenance records.
const VERSION: &str = env!("CARGO_PKG_VERSION");
const COMMIT: &str = env!("LEAGUE_GIT_COMMIT");

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The league (default: LEAGUE_ID, else the running system's league, else the newest; with
    /// --database, the newest league in it) — as the operator's commands choose it.
    #[arg(long)]
    pub league: Option<LeagueId>,
    /// The folder the league's folder is written in.
    #[arg(long, default_value = RUN_RESULTS)]
    pub out: PathBuf,
    /// Write the league's folder again when it already holds this league's results (the same league
    /// id, database and start, as its provenance.json records): the folder is rebuilt whole, nothing
    /// of the old one left but what only `league run` could write (its settings, llm_moves.csv). A
    /// folder holding another league is never written over, with or without --force.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub source: source::SourceArgs,
}

pub async fn report(args: ReportArgs) -> anyhow::Result<()> {
    let connected = args.source.connect().await?;
    let mut client = connected.client.clone();
    let league_id = match args.league {
        Some(league_id) => Some(league_id.to_string()),
        // A database read on its own has no running system's league: its newest, as `--database` reads.
        None if connected.nothing_runs_it() => None,
        None => crate::operator::league_id_setting()?.or(connected.league_id.clone()),
    };
    let mut data = LeagueData::load(&mut client, &connected.token, &league_id.unwrap_or_default()).await?;
    data.stopped = connected.nothing_runs_it();
    let reader = archive::Reader {
        client: &client,
        token: &connected.token,
    };
    let writing = Writing {
        command: "league report",
        version: VERSION,
        commit: COMMIT,
        database: connected.database.clone(),
        run_settings: None,
        force: args.force,
    };
    let dir = write_archive(&data, &reader, &writing, &args.out).await?;
    if let Some(database) = &connected.database {
        println!("read league {} from database {database}", data.league_id());
    }
    println!(
        "results of {}: {}",
        data.league_id(),
        dir.join("index.html").display()
    );
    Ok(())
}

/// `league run`'s last step, while its manager and player host still answer: how the `llm` bots
/// decided their moves (a line, when there are any), the league's results folder, and one line saying
/// where it is. A report that cannot be written is said, not fatal: the league itself finished.
pub async fn after_run(finished: &mut crate::run::Finished, run_settings: Value) -> anyhow::Result<()> {
    let out = Path::new(RUN_RESULTS);
    let llm_moves = match crate::llm_bots::read(&finished.admin_urls).await {
        Ok(moves) => moves,
        Err(error) => {
            eprintln!("league: the llm bots' moves were not counted: {error:#}");
            Default::default()
        }
    };
    if let Some(line) = league_report::llm_moves::summary_line(&llm_moves) {
        println!("{line}");
    }
    let database = league_manager::postgres::database_name(finished.database_url.expose_secret()).to_owned();
    let written = async {
        let mut data = LeagueData::load(
            &mut finished.client,
            &finished.operator_token,
            &finished.league_id,
        )
        .await?;
        data.llm_moves = llm_moves;
        let reader = archive::Reader {
            client: &finished.client,
            token: &finished.operator_token,
        };
        let writing = Writing {
            command: "league run",
            version: VERSION,
            commit: COMMIT,
            database: Some(database),
            run_settings: Some(run_settings),
            force: false,
        };
        write_archive(&data, &reader, &writing, out).await
    };
    match written.await {
        // Writing them again later needs the run's database: `league run --keep` says how.
        Ok(dir) => println!("Results: {}", dir.join("index.html").display()),
        Err(error) => eprintln!("league: the results folder was not written: {error:#}"),
    }
    Ok(())
}
