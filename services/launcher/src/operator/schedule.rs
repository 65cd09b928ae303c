//! `league schedule`: every match of a league, round by round, with its outcome once played.

use clap::Args;
use league_proto::v2::{GetScheduleResponse, MatchStatus, ScheduledMatch};

use super::{Common, Operator, time};
use crate::output::{self, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn schedule(args: ScheduleArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let all = GetScheduleResponse {
        rounds: crate::report::data::schedule(&mut operator.manager, &operator.token, &league_id).await?,
        league_id,
        ..GetScheduleResponse::default()
    };
    let mut rows = Rows::new(&[
        "round", "match", "player_a", "player_b", "status", "winner", "reason", "finished",
    ]);
    for round in &all.rounds {
        for scheduled in &round.matches {
            rows.push(match_row(scheduled));
        }
    }
    output::print(args.common.output, &rows, || {
        output::json("league.v2.GetScheduleResponse", &all)
    })
}

/// One match as a row: who, where it is, and how it ended.
pub fn match_row(scheduled: &ScheduledMatch) -> Vec<String> {
    let status = MatchStatus::try_from(scheduled.status)
        .map(|status| {
            status
                .as_str_name()
                .trim_start_matches("MATCH_STATUS_")
                .to_lowercase()
        })
        .unwrap_or_default();
    let result = scheduled.result.as_ref();
    vec![
        cell(scheduled.round_id),
        scheduled.match_id.clone(),
        scheduled.player_a_id.clone(),
        scheduled.player_b_id.clone(),
        status,
        result
            .map(|result| result.winner_player_id.clone())
            .unwrap_or_default(),
        result.map(|result| result.reason.clone()).unwrap_or_default(),
        time(scheduled.finished_at.as_ref()),
    ]
}
