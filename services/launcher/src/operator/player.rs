//! `league player <id>`: a player's row in the table and its matches — two tables, so CSV prints the
//! one `--section` names.

use clap::Args;
use league_domain::PlayerId;
use league_proto::v2::GetPlayerStatsRequest;

use super::{Reading, failed};
use crate::output::{self, Rows};
use league_report::columns;

#[derive(Debug, Clone, Args)]
pub struct PlayerArgs {
    /// The player, e.g. P01 (`league players` lists them).
    pub player_id: PlayerId,
    /// Only this table: standing (the player's row of the league table) or matches. CSV needs one.
    #[arg(long)]
    pub section: Option<String>,
    #[command(flatten)]
    pub reading: Reading,
}

/// Shows `player_id`'s row and matches.
pub async fn show(args: PlayerArgs) -> anyhow::Result<()> {
    let player_id = args.player_id;
    let mut operator = args.reading.connect().await?;
    let league_id = operator.league(args.reading.common.league).await?;
    let stats = operator
        .manager
        .get_player_stats(operator.request(GetPlayerStatsRequest {
            league_id,
            player_id: player_id.into(),
        }))
        .await
        .map_err(failed("reading the player"))?
        .into_inner();
    let mut standing = Rows::new(&columns::STANDINGS);
    if let Some(row) = &stats.standing {
        standing.push(columns::standing(row));
    }
    let mut matches = Rows::new(&columns::MATCHES);
    for scheduled in &stats.matches {
        matches.push(columns::a_match(scheduled));
    }
    output::print_sections(
        args.reading.common.output,
        args.section.as_deref(),
        &[("standing", standing), ("matches", matches)],
        || output::json("league.v2.GetPlayerStatsResponse", &stats),
    )
}
