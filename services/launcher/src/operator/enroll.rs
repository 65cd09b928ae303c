//! `league enroll`: a registered player joins another league that is registering, keeping its id and
//! token. Each player is enrolled on its own: one refused does not hide the others enrolled (they are
//! printed, the refusals said one by one, and the command fails naming them).

use clap::Args;
use league_domain::PlayerId;
use league_proto::v2::EnrollPlayerRequest;

use super::{Common, Operator};
use crate::output::{self, Rows};

#[derive(Debug, Clone, Args)]
pub struct EnrollArgs {
    /// The players to enroll (P01 P02 …).
    #[arg(required = true)]
    pub players: Vec<PlayerId>,
    #[command(flatten)]
    pub common: Common,
}

pub async fn enroll(args: EnrollArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let mut rows = Rows::new(&["league", "player", "enrolled", "started"]);
    let mut answers = Vec::new();
    let mut refused = Vec::new();
    let asked = args.players.len();
    for player_id in args.players {
        let answer = operator
            .manager
            .enroll_player(operator.request(EnrollPlayerRequest {
                league_id: league_id.clone(),
                player_id: player_id.to_string(),
            }))
            .await;
        let enrolled = match answer {
            Ok(enrolled) => enrolled.into_inner(),
            Err(status) => {
                eprintln!("enrolling {player_id}: {}", status.message());
                refused.push(player_id.to_string());
                continue;
            }
        };
        rows.push(vec![
            enrolled.league_id.clone(),
            enrolled.player_id.clone(),
            (if enrolled.enrolled { "yes" } else { "already" }).to_owned(),
            (if enrolled.started { "yes" } else { "no" }).to_owned(),
        ]);
        answers.push(enrolled);
    }
    if !answers.is_empty() {
        output::print(args.common.output, &rows, || {
            let each = answers
                .iter()
                .map(|answer| output::json("league.v2.EnrollPlayerResponse", answer))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok(serde_json::Value::Array(each))
        })?;
    }
    anyhow::ensure!(
        refused.is_empty(),
        "{} of {asked} players not enrolled in {league_id} ({}); the others are",
        refused.len(),
        refused.join(", ")
    );
    Ok(())
}
