//! `league match <id>`: one match, its outcome, and (as JSON) its whole transcript.

use clap::Args;
use league_proto::v2::GetMatchRequest;

use super::{Common, Operator, failed};
use crate::output::{self, Rows};

#[derive(Debug, Clone, Args)]
pub struct MatchArgs {
    /// The match, e.g. R1M1.
    pub match_id: String,
    #[command(flatten)]
    pub common: Common,
}

pub async fn show(args: MatchArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let found = operator
        .manager
        .get_match(operator.request(GetMatchRequest {
            league_id,
            match_id: args.match_id,
        }))
        .await
        .map_err(failed("reading the match"))?
        .into_inner();
    let mut rows = Rows::new(&[
        "round", "match", "player_a", "player_b", "status", "winner", "reason", "finished",
    ]);
    if let Some(scheduled) = &found.r#match {
        let mut scheduled = scheduled.clone();
        if scheduled.result.is_none() {
            scheduled.result = found.result.clone();
        }
        rows.push(super::schedule::match_row(&scheduled));
    }
    output::print(args.common.output, &rows, || {
        output::json("league.v2.GetMatchResponse", &found)
    })
}
