//! `league ratings`: a league's ratings as its results folder's `ratings.csv` has them (docs/adr/0049,
//! 0080): each player's points per match with its own standard error, in the table's order, with its
//! name, and against the next player the difference, its 95 % interval and the likelihood of
//! superiority. Computed by the report's own code (`league_report::ratings`) from the league's results,
//! so the command line and the folder tell one story.

use clap::Args;
use serde_json::json;

use super::Reading;
use crate::output::{self, Rows};
use league_report::columns;
use league_report::data::LeagueData;
use league_report::ratings;

#[derive(Debug, Clone, Args)]
pub struct RatingsArgs {
    #[command(flatten)]
    pub reading: Reading,
}

pub async fn ratings(args: RatingsArgs) -> anyhow::Result<()> {
    let mut operator = args.reading.connect().await?;
    let league_id = operator.league(args.reading.common.league.clone()).await?;
    let data = LeagueData::load(&mut operator.manager, &operator.token, &league_id).await?;
    let rated = ratings::ratings(&data);
    let mut rows = Rows::new(&columns::LEAGUE_RATINGS);
    for (row, rated) in data.standings.iter().zip(&rated) {
        rows.push(columns::league_rating(row.rank, rated));
    }
    output::print(args.reading.common.output, &rows, || {
        Ok(json!({
            "league_id": data.league_id(),
            "game_type": data.status.game_type,
            "ratings": data.standings.iter().zip(&rated).map(|(row, rated)| {
                let next = rated.above_next.as_ref();
                json!({
                    "rank": row.rank,
                    "player_id": rated.player_id,
                    "display_name": rated.display_name,
                    "matches": rated.rating.matches,
                    "points_per_match": rated.rating.points_per_match,
                    "deviation": rated.rating.deviation,
                    "difference_to_next": next.map(|c| c.difference),
                    "difference_low": next.map(|c| c.low),
                    "difference_high": next.map(|c| c.high),
                    "los_over_next": next.map(|c| c.los),
                })
            }).collect::<Vec<_>>(),
        }))
    })
}
