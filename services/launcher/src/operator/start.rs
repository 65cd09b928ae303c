//! `league start`: starts a league with the players registered so far.

use clap::Args;
use league_proto::v2::StartLeagueRequest;

use super::{Common, Operator, failed};
use crate::output::{self, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn start(args: StartArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let started = operator
        .manager
        .start_league(operator.request(StartLeagueRequest { league_id }))
        .await
        .map_err(failed("starting the league"))?
        .into_inner();
    let mut rows = Rows::new(&["league", "rounds", "matches"]);
    rows.push(vec![
        started.league_id.clone(),
        cell(started.total_rounds),
        cell(started.total_matches),
    ]);
    output::print(args.common.output, &rows, || {
        output::json("league.v2.StartLeagueResponse", &started)
    })
}
