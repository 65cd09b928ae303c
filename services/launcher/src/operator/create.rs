//! `league create`: a new league (game, timings, size, format, auto-start threshold) on the running
//! system.

use clap::Args;
use std::path::Path;
use std::time::SystemTime;

use league_domain::{GameType, LeagueId};
use league_proto::v2::{CreateLeagueRequest, CreateLeagueResponse, ListLeaguesRequest, MatchTiming};

use super::{Operator, failed};
use crate::args;
use crate::output::{self, Format, Rows};
use league_report::RUN_RESULTS;
use league_report::results_folder;

#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// The new league's id (default: the game and the time in UTC, `even_odd-20261205-1500`, with
    /// `-2`, `-3` … when a league or a results folder has it). An id whose results folder exists
    /// (results/<id>) is refused: that folder holds another league's results.
    #[arg(long)]
    pub league: Option<LeagueId>,
    #[arg(long, help = args::game_help(), default_value_t = GameType::default())]
    pub game: GameType,
    /// Start on its own once this many players have registered (0: only by `league start`).
    #[arg(long, default_value_t = 0)]
    pub auto_start: u32,
    /// At most this many players (default: the deployment's limit, LEAGUE_MAX_PLAYERS).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
    pub max_players: Option<u32>,
    /// Times every pairing is played; each second cycle swaps the seats (2: a double round robin).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub cycles: u32,
    /// Time for a player to acknowledge an invitation (default: the manager's).
    #[arg(long, allow_hyphen_values = true, value_parser = args::positive_duration)]
    pub join_timeout: Option<String>,
    /// Time for a player to answer a move request (default: the manager's).
    #[arg(long, allow_hyphen_values = true, value_parser = args::positive_duration)]
    pub move_timeout: Option<String>,
    /// How to print: table, json or csv.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

pub async fn create(args: CreateArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.auto_start != 1,
        "--auto-start must be 0 (start with `league start`) or at least 2"
    );
    let duration = |text: &Option<String>| -> anyhow::Result<Option<prost_types::Duration>> {
        text.as_deref()
            .map(|text| {
                let parsed = args::parse(text).map_err(anyhow::Error::msg)?;
                Ok(prost_types::Duration::try_from(parsed)?)
            })
            .transpose()
    };
    let timing = MatchTiming {
        join_timeout: duration(&args.join_timeout)?,
        move_timeout: duration(&args.move_timeout)?,
        ..MatchTiming::default()
    };
    // Refused before anything is asked of the system.
    if let Some(asked) = &args.league {
        results_folder::refuse_existing(Path::new(RUN_RESULTS), asked)?;
    }
    let mut operator = Operator::connect()?;
    let league_id = league_id(&args, &mut operator).await?;
    let created: CreateLeagueResponse = operator
        .manager
        .create_league(operator.request(CreateLeagueRequest {
            league_id: league_id.to_string(),
            game_type: args.game.to_string(),
            timing: Some(timing),
            auto_start_players: args.auto_start,
            cycles: args.cycles,
            max_players: args.max_players.unwrap_or(0),
        }))
        .await
        .map_err(failed("creating the league"))?
        .into_inner();
    let mut rows = Rows::new(&["league"]);
    rows.push(vec![created.league_id.clone()]);
    output::print(args.output, &rows, || {
        output::json("league.v2.CreateLeagueResponse", &created)
    })
}

/// The id asked for; else the game and the time, skipping every id a league of the running system or
/// a results folder here has.
async fn league_id(args: &CreateArgs, operator: &mut Operator) -> anyhow::Result<LeagueId> {
    let out = Path::new(RUN_RESULTS);
    if let Some(asked) = &args.league {
        return Ok(asked.clone());
    }
    let mut leagues = std::collections::HashSet::new();
    let mut page_token = String::new();
    loop {
        let page = operator
            .manager
            .list_leagues(operator.request(ListLeaguesRequest {
                page_size: 100,
                page_token: page_token.clone(),
            }))
            .await
            .map_err(failed("listing the leagues"))?
            .into_inner();
        leagues.extend(page.leagues.into_iter().map(|league| league.league_id));
        if page.next_page_token.is_empty() || page.next_page_token == page_token {
            break;
        }
        page_token = page.next_page_token;
    }
    results_folder::unclaimed_default_id(out, args.game, SystemTime::now(), |id| {
        leagues.contains(id.as_str())
    })
}
