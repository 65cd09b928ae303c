//! `league report`: a league's results as a folder people can open — `results/<league_id>/` with the
//! final table (`standings.json`, `standings.csv`), the table after each round
//! (`standings_by_round.csv`), every match (`matches.csv`), every pair's meetings (`head_to_head.csv`),
//! the ratings (`ratings.csv`), charts as SVG and PNG, `index.html` showing all of it and a page per
//! player (`players/<id>.html`). `league run` writes it at its end; `league report` writes it again, any time, for
//! any league, from its database. Everything is read through the manager's queries (see [`source`]).

pub mod charts;
pub mod data;
pub mod games;
pub mod head_to_head;
pub mod html;
pub mod ratings;
pub mod source;
pub mod tables;

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;

use data::LeagueData;

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The league (default: the newest league in the database).
    #[arg(long, default_value = "")]
    pub league: String,
    /// The folder the league's folder is written in.
    #[arg(long, default_value = RUN_RESULTS)]
    pub out: PathBuf,
    #[command(flatten)]
    pub source: source::SourceArgs,
}

pub async fn report(args: ReportArgs) -> anyhow::Result<()> {
    let mut connected = args.source.connect().await?;
    let data = LeagueData::load(&mut connected.client, &connected.token, &args.league).await?;
    let dir = write(&data, &args.out)?;
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

/// Where `league run` writes its results.
pub const RUN_RESULTS: &str = "results";

/// `league run`'s last step, while its manager and player host still answer: how the `llm` bots
/// decided their moves (a line, when there are any), the league's results folder, and one line saying
/// where it is. A report that cannot be written is said, not fatal: the league itself finished.
pub async fn after_run(finished: &mut crate::run::Finished) -> anyhow::Result<()> {
    let out = Path::new(RUN_RESULTS);
    let llm_moves = match crate::llm_moves::read(&finished.admin_urls).await {
        Ok(moves) => moves,
        Err(error) => {
            eprintln!("league: the llm bots' moves were not counted: {error:#}");
            Default::default()
        }
    };
    if let Some(line) = crate::llm_moves::summary_line(&llm_moves) {
        println!("{line}");
    }
    let written = async {
        let mut data = LeagueData::load(
            &mut finished.client,
            &finished.operator_token,
            &finished.league_id,
        )
        .await?;
        data.llm_moves = llm_moves;
        write(&data, out)
    };
    match written.await {
        // Writing them again later needs the run's database: `league run --keep` says how.
        Ok(dir) => println!("Results: {}", dir.join("index.html").display()),
        Err(error) => eprintln!("league: the results folder was not written: {error:#}"),
    }
    Ok(())
}

/// Writes the league's folder of results under `out`; returns the folder.
pub async fn write_from(
    client: &mut ManagerServiceClient<GrpcChannel>,
    token: &SecretString,
    league_id: &str,
    out: &Path,
) -> anyhow::Result<PathBuf> {
    let data = LeagueData::load(client, token, league_id).await?;
    write(&data, out)
}

/// Writes `data` to `<out>/<league_id>/`; returns that folder.
pub fn write(data: &LeagueData, out: &Path) -> anyhow::Result<PathBuf> {
    let dir = out.join(folder_name(data.league_id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = |name: &str, contents: &[u8]| {
        std::fs::write(dir.join(name), contents)
            .with_context(|| format!("writing {}", dir.join(name).display()))
    };
    let json = serde_json::to_vec_pretty(&tables::standings_json(data))?;
    file("standings.json", &json)?;
    file("standings.csv", tables::standings_csv(data).as_bytes())?;
    file(
        "standings_by_round.csv",
        tables::standings_by_round_csv(data).as_bytes(),
    )?;
    file("matches.csv", tables::matches_csv(data).as_bytes())?;
    file("head_to_head.csv", tables::head_to_head_csv(data).as_bytes())?;
    file("ratings.csv", tables::ratings_csv(data).as_bytes())?;
    if !data.llm_moves.is_empty() {
        let names = data
            .standings
            .iter()
            .map(|row| (row.player_id.clone(), row.display_name.clone()))
            .collect();
        file(
            "llm_moves.csv",
            crate::llm_moves::csv(&data.llm_moves, &names)?.as_bytes(),
        )?;
    }
    let charts = charts::all(data);
    for chart in &charts {
        chart.write(&dir)?;
    }
    let pages = html::Pages::new(data);
    file("index.html", pages.index(&charts).as_bytes())?;
    let players = dir.join("players");
    std::fs::create_dir_all(&players).with_context(|| format!("creating {}", players.display()))?;
    for (index, name) in pages.player_files() {
        file(&name, pages.player(index).as_bytes())?;
    }
    Ok(dir)
}

/// A league id as a folder name. An id in the league id grammar (`league_domain::league_id`) is its own
/// folder name; the manager refuses any other since that grammar was set, but a database made before
/// may hold one: each character outside the grammar (a separator, `.`, upper case) is written `~` and
/// its UTF-8 bytes in hex. `~` is in no id, so two ids never share a folder and none leaves the
/// results folder.
pub fn folder_name(league_id: &str) -> String {
    if league_domain::LeagueId::parse(league_id).is_ok() {
        return league_id.to_owned();
    }
    let mut name = String::from("~");
    for c in league_id.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-') {
            name.push(c);
        } else {
            let mut bytes = [0u8; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                name.push_str(&format!("~{byte:02x}"));
            }
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn league_ids_cannot_leave_the_results_folder() {
        assert_eq!(folder_name("league_even_odd"), "league_even_odd");
        assert_eq!(folder_name("../etc/x"), "~~2e~2e~2fetc~2fx");
        assert_eq!(folder_name(".."), "~~2e~2e");
        assert_eq!(folder_name(""), "~");
        assert_ne!(folder_name("a/b"), folder_name("a_b"), "two ids, two folders");
        assert_ne!(folder_name("L1"), folder_name("l1"));
    }
}
