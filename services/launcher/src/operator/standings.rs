//! `league standings`: a league's table as it stands.

use clap::Args;
use league_proto::v2::{GetStandingsRequest, StandingRow};

use super::{Common, Operator, failed};
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
    output::print(args.common.output, &rows(&standings.standings), || {
        output::json("league.v2.GetStandingsResponse", &standings)
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
