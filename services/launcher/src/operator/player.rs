//! `league player <id>`: a player's row in the table and its matches.

use clap::Args;
use league_proto::v2::GetPlayerStatsRequest;

use super::{Common, Operator, failed};
use crate::output::{self, Format};

#[derive(Debug, Clone, Args)]
pub struct PlayerArgs {
    /// The player, e.g. P01 (without it: `league player` runs the bot host).
    pub player_id: Option<String>,
    #[command(flatten)]
    pub common: Common,
}

/// Shows `player_id`'s row and matches.
pub async fn show(player_id: String, common: Common) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(common.league).await?;
    let stats = operator
        .manager
        .get_player_stats(operator.request(GetPlayerStatsRequest { league_id, player_id }))
        .await
        .map_err(failed("reading the player"))?
        .into_inner();
    let json = || output::json("league.v2.GetPlayerStatsResponse", &stats);
    if common.output == Format::Json {
        return output::print(Format::Json, &output::Rows::default(), json);
    }
    let standing = super::standings::rows(stats.standing.as_slice());
    let mut matches = output::Rows::new(&[
        "round", "match", "player_a", "player_b", "status", "winner", "reason", "finished",
    ]);
    for scheduled in &stats.matches {
        matches.push(super::schedule::match_row(scheduled));
    }
    // Table and CSV: the row, then the matches.
    output::print(common.output, &standing, json)?;
    if common.output == Format::Table {
        println!();
    }
    output::print(common.output, &matches, json)
}
