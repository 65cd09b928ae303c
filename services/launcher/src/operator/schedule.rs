//! `league schedule`: every match of a league, round by round, with its outcome once played — the
//! columns of the results folder's `matches.csv`.

use clap::Args;
use league_proto::v2::GetScheduleResponse;

use super::Reading;
use crate::output::{self, Rows};
use league_report::columns;

#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    #[command(flatten)]
    pub reading: Reading,
}

pub async fn schedule(args: ScheduleArgs) -> anyhow::Result<()> {
    let mut operator = args.reading.connect().await?;
    let league_id = operator.league(args.reading.common.league).await?;
    let all = GetScheduleResponse {
        rounds: league_report::data::schedule(&mut operator.manager, &operator.token, &league_id).await?,
        league_id,
        ..GetScheduleResponse::default()
    };
    let mut rows = Rows::new(&columns::MATCHES);
    for round in &all.rounds {
        for scheduled in &round.matches {
            rows.push(columns::a_match(scheduled));
        }
    }
    output::print(args.reading.common.output, &rows, || {
        output::json("league.v2.GetScheduleResponse", &all)
    })
}
