//! `league standings`: a league's table as it stands (the columns of the results folder's
//! `standings.csv`), with each player's rating across the completed leagues (`league ratings`); or, with
//! `--by-round`, the table after each completed round (`standings_by_round.csv`'s columns).

use clap::Args;
use league_proto::v2::{
    GetLeagueStatusRequest, GetStandingsByRoundRequest, GetStandingsByRoundResponse, GetStandingsRequest,
};

use super::{Operator, Reading, failed, ratings};
use crate::columns;
use crate::output::{self, Rows};

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
    let standings = operator
        .manager
        .get_standings(operator.request(GetStandingsRequest { league_id }))
        .await
        .map_err(failed("reading the standings"))?
        .into_inner();
    // Ratings of the league's own game: games are rated apart.
    let game_type = operator
        .manager
        .get_league_status(operator.request(GetLeagueStatusRequest {
            league_id: standings.league_id.clone(),
        }))
        .await
        .map_err(failed("reading the league's game"))?
        .into_inner()
        .game_type;
    let (_, rated) = ratings::current(&mut operator.manager, &operator.token, &game_type).await?;
    let mut table = Rows::new(&columns::STANDINGS);
    for row in &standings.standings {
        table.push(columns::standing(row));
    }
    // Unrated (no completed league yet): empty cells. The names and values are ratings.csv's.
    let rating = |row: &[String]| rated.get(&row[1]).map(|rated| rated.rating);
    table.add_column(columns::RATINGS[1], |row| {
        rating(row)
            .map(|r| format!("{:.1}", r.rating))
            .unwrap_or_default()
    });
    table.add_column(columns::RATINGS[2], |row| {
        rating(row)
            .map(|r| format!("{:.1}", r.deviation))
            .unwrap_or_default()
    });
    output::print(args.reading.common.output, &table, || {
        let mut json = output::json("league.v2.GetStandingsResponse", &standings)?;
        json["ratings"] = rated
            .iter()
            .filter(|(player, _)| standings.standings.iter().any(|row| &row.player_id == *player))
            .map(|(player, rated)| {
                (
                    player.clone(),
                    serde_json::json!({
                        "rating": rated.rating.rating,
                        "deviation": rated.rating.deviation,
                        "leagues": rated.leagues,
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
