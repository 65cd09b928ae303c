//! `league schedule`: every match of a league, round by round, with its outcome once played.

use clap::Args;
use league_proto::v2::{GetScheduleRequest, GetScheduleResponse, MatchStatus, ScheduledMatch};

use super::{Common, Operator, failed, time};
use crate::output::{self, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn schedule(args: ScheduleArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let league_id = operator.league(args.common.league).await?;
    let all = fetch(&mut operator, &league_id).await?;
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

/// The whole schedule of `league_id`, page by page.
pub async fn fetch(operator: &mut Operator, league_id: &str) -> anyhow::Result<GetScheduleResponse> {
    let mut all = GetScheduleResponse {
        league_id: league_id.to_owned(),
        ..GetScheduleResponse::default()
    };
    let mut first_round_id = 0;
    // Bounded: each page holds at least one round, and a league has fewer than 100 000.
    for _ in 0..100_000 {
        let request = operator.request(GetScheduleRequest {
            league_id: league_id.to_owned(),
            first_round_id,
            max_matches: 0,
        });
        let page = operator
            .manager
            .get_schedule(request)
            .await
            .map_err(failed("reading the schedule"))?
            .into_inner();
        all.rounds.extend(page.rounds);
        if page.next_round_id == 0 {
            break;
        }
        first_round_id = page.next_round_id;
    }
    Ok(all)
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
