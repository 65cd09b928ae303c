//! `league cancel`: end a league that is not over; its unfinished matches are cancelled and nobody is
//! charged for them.

use clap::Args;
use league_proto::v2::CancelLeagueRequest;

use super::{Common, Operator, failed};
use crate::output::{self, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct CancelArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn cancel(args: CancelArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let cancelled = operator
        .manager
        .cancel_league(operator.request(CancelLeagueRequest { league_id }))
        .await
        .map_err(failed("cancelling the league"))?
        .into_inner();
    let mut rows = Rows::new(&["league", "status", "matches cancelled", "of them running"]);
    rows.push(vec![
        cancelled.league_id.clone(),
        "cancelled".to_owned(),
        cell(cancelled.cancelled_matches),
        cell(cancelled.running_matches),
    ]);
    output::print(args.common.output, &rows, || {
        output::json("league.v2.CancelLeagueResponse", &cancelled)
    })
}
