//! `league withdraw`: take players out of a league; each unfinished match of theirs is a forfeit they
//! lose (docs/operations.md).

use clap::Args;
use league_domain::PlayerId;
use league_proto::v2::{ResultStatus, WithdrawPlayerRequest};

use super::{Common, Operator};
use crate::output::{self, Rows};

#[derive(Debug, Clone, Args)]
pub struct WithdrawArgs {
    /// The players to withdraw (P01 P02 …).
    #[arg(required = true)]
    pub players: Vec<PlayerId>,
    #[command(flatten)]
    pub common: Common,
}

pub async fn withdraw(args: WithdrawArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let mut rows = Rows::new(&["league", "player", "match", "result", "winner"]);
    let mut answers = Vec::new();
    for player_id in args.players {
        let withdrawn = operator
            .manager
            .withdraw_player(operator.request(WithdrawPlayerRequest {
                league_id: league_id.clone(),
                player_id: player_id.to_string(),
            }))
            .await
            .map_err(|status| anyhow::anyhow!("withdrawing {player_id}: {}", status.message()))?
            .into_inner();
        if withdrawn.forfeits.is_empty() {
            rows.push(vec![
                withdrawn.league_id.clone(),
                withdrawn.player_id.clone(),
                String::new(),
                "no match to forfeit".to_owned(),
                String::new(),
            ]);
        }
        for forfeit in &withdrawn.forfeits {
            let result = match forfeit.status() {
                ResultStatus::DoubleForfeit => "double forfeit",
                _ => "forfeit",
            };
            rows.push(vec![
                withdrawn.league_id.clone(),
                withdrawn.player_id.clone(),
                forfeit.match_id.clone(),
                result.to_owned(),
                forfeit.winner_player_id.clone(),
            ]);
        }
        answers.push(withdrawn);
    }
    output::print(args.common.output, &rows, || {
        let each = answers
            .iter()
            .map(|answer| output::json("league.v2.WithdrawPlayerResponse", answer))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(serde_json::Value::Array(each))
    })
}
