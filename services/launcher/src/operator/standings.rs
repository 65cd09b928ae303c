//! `league standings`: a league's table as it stands, with each player's rating across the completed
//! leagues (`league ratings`).

use clap::Args;
use league_proto::v2::{GetStandingsRequest, StandingRow};

use super::{Common, Operator, failed, ratings};
use crate::output::{self, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct StandingsArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn standings(args: StandingsArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let standings = operator
        .manager
        .get_standings(operator.request(GetStandingsRequest { league_id }))
        .await
        .map_err(failed("reading the standings"))?
        .into_inner();
    let (_, rated) = ratings::current(&mut operator.manager, &operator.token).await?;
    let mut table = rows(&standings.standings);
    // Unrated (no completed league yet): empty cells.
    let shown = |row: &[String]| rated.get(&row[1]).map(ratings::Rated::shown);
    table.add_column("rating", |row| {
        shown(row).map(|(rating, _)| rating).unwrap_or_default()
    });
    table.add_column("±", |row| shown(row).map(|(_, error)| error).unwrap_or_default());
    output::print(args.common.output, &table, || {
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

pub fn rows(standings: &[StandingRow]) -> Rows {
    let mut rows = Rows::new(&["rank", "player", "name", "played", "W", "D", "L", "TL", "points"]);
    for row in standings {
        rows.push(vec![
            cell(row.rank),
            row.player_id.clone(),
            row.display_name.clone(),
            cell(row.played),
            cell(row.wins),
            cell(row.draws),
            cell(row.losses),
            cell(row.technical_losses),
            cell(row.points),
        ]);
    }
    rows
}
