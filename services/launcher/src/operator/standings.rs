//! `league standings`: a league's table as it stands (the columns of the results folder's
//! `standings.csv`), with each player's rating in the league as `ratings.csv` has it (points per match
//! and its standard error, `league ratings`); or, with
//! `--by-round`, the table after each completed round (`standings_by_round.csv`'s columns).

use clap::Args;
use league_proto::v2::{GetStandingsByRoundRequest, GetStandingsByRoundResponse, GetStandingsResponse};

use super::{Operator, Reading, failed};
use crate::output::{self, Rows};
use league_report::columns;
use league_report::data::LeagueData;
use league_report::ratings::{self, Rating};

#[derive(Debug, Clone, Args)]
pub struct StandingsArgs {
    /// The table after each completed round instead.
    #[arg(long)]
    pub by_round: bool,
    #[command(flatten)]
    pub reading: Reading,
}

pub async fn standings(args: StandingsArgs) -> anyhow::Result<()> {
    let mut operator = args.reading.connect().await?;
    let league_id = operator.league(args.reading.common.league.clone()).await?;
    if args.by_round {
        return by_round(&mut operator, league_id, &args).await;
    }
    let data = LeagueData::load(&mut operator.manager, &operator.token, &league_id).await?;
    // The league's own ratings, as the results folder's `ratings.csv` has them (one row per table row).
    let rated = ratings::ratings(&data);
    let mut table = Rows::new(&columns::STANDINGS);
    for row in &data.standings {
        table.push(columns::standing(row));
    }
    let rating = |row: &[String], value: fn(&Rating) -> f64| {
        rated
            .iter()
            .find(|rated| rated.player_id == row[1])
            .map(|rated| format!("{:.3}", value(&rated.rating)))
            .unwrap_or_default()
    };
    table.add_column(columns::LEAGUE_RATINGS[4], |row| {
        rating(row, |r| r.points_per_match)
    });
    table.add_column(columns::LEAGUE_RATINGS[5], |row| rating(row, |r| r.deviation));
    output::print(args.reading.common.output, &table, || {
        let standings = GetStandingsResponse {
            league_id: data.league_id().to_owned(),
            round_id: data.by_round.last().map_or(0, |round| round.round_id),
            standings: data.standings.clone(),
        };
        let mut json = output::json("league.v2.GetStandingsResponse", &standings)?;
        json["ratings"] = rated
            .iter()
            .map(|rated| {
                (
                    rated.player_id.clone(),
                    serde_json::json!({
                        "matches": rated.rating.matches,
                        "points_per_match": rated.rating.points_per_match,
                        "deviation": rated.rating.deviation,
                    }),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        Ok(json)
    })
}

/// The table after each completed round, read a page of rounds at a time.
async fn by_round(operator: &mut Operator, league_id: String, args: &StandingsArgs) -> anyhow::Result<()> {
    let mut all = GetStandingsByRoundResponse {
        league_id: league_id.clone(),
        ..GetStandingsByRoundResponse::default()
    };
    let mut first_round_id = 1;
    // Bounded: every page moves on by at least a round, and a league has at most this many.
    for _ in 0..100_000 {
        let page = operator
            .manager
            .get_standings_by_round(operator.request(GetStandingsByRoundRequest {
                league_id: league_id.clone(),
                first_round_id,
                max_rounds: 0,
            }))
            .await
            .map_err(failed("reading the standings by round"))?
            .into_inner();
        all.rounds.extend(page.rounds);
        if page.next_round_id <= first_round_id {
            break;
        }
        first_round_id = page.next_round_id;
    }
    let mut rows = Rows::new(&columns::STANDINGS_BY_ROUND);
    for round in &all.rounds {
        for row in &round.standings {
            rows.push(columns::standing_after_round(round.round_id, row));
        }
    }
    output::print(args.reading.common.output, &rows, || {
        output::json("league.v2.GetStandingsByRoundResponse", &all)
    })
}
