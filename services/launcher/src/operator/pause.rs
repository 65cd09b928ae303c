//! `league pause` and `league resume`: stop handing out a running league's matches (the running ones
//! finish), and hand them out again.

use clap::Args;
use league_proto::v2::{PauseLeagueRequest, ResumeLeagueRequest};

use super::{Common, Operator, failed};
use crate::output::{self, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct PauseArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn pause(args: PauseArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let paused = operator
        .manager
        .pause_league(operator.request(PauseLeagueRequest { league_id }))
        .await
        .map_err(failed("pausing the league"))?
        .into_inner();
    let mut rows = Rows::new(&["league", "status", "still running"]);
    rows.push(vec![
        paused.league_id.clone(),
        "paused".to_owned(),
        cell(paused.running_matches),
    ]);
    output::print(args.common.output, &rows, || {
        output::json("league.v2.PauseLeagueResponse", &paused)
    })
}

pub async fn resume(args: PauseArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let resumed = operator
        .manager
        .resume_league(operator.request(ResumeLeagueRequest { league_id }))
        .await
        .map_err(failed("resuming the league"))?
        .into_inner();
    let mut rows = Rows::new(&["league", "status"]);
    rows.push(vec![resumed.league_id.clone(), "running".to_owned()]);
    output::print(args.common.output, &rows, || {
        output::json("league.v2.ResumeLeagueResponse", &resumed)
    })
}
