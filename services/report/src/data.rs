//! Everything a report shows about one league, read through the manager's queries a page at a time,
//! and what follows from it: each player's strategy group and each match's outcome for each player.

use std::collections::BTreeMap;

use anyhow::Context;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{
    GetLeagueStatusRequest, GetLeagueStatusResponse, GetScheduleRequest, GetStandingsByRoundRequest,
    GetStandingsRequest, ResultStatus, RoundStandings, ScheduledMatch, ScheduledRound, StandingRow,
};
use league_runtime::credentials::operator_request;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;

/// One league as the report shows it.
#[derive(Debug, Clone)]
pub struct LeagueData {
    pub status: GetLeagueStatusResponse,
    /// The final (or current) table, best first.
    pub standings: Vec<StandingRow>,
    /// The table after each completed round, in round order.
    pub by_round: Vec<RoundStandings>,
    /// Every round and its matches, each with its result (and a technical loss's cause) once finished.
    pub rounds: Vec<ScheduledRound>,
    /// Each `llm` bot's moves by who decided them, when the player host was asked before it stopped
    /// (`league run`); empty otherwise (`crate::llm_moves`).
    pub llm_moves: BTreeMap<String, league_player::LlmMoves>,
    /// Read from a database no manager runs (`league report --database`): a league not over there was
    /// stopped (its run interrupted), not in progress.
    pub stopped: bool,
}

impl LeagueData {
    /// Reads `league_id` (empty: the newest league).
    pub async fn load(
        client: &mut ManagerServiceClient<GrpcChannel>,
        token: &SecretString,
        league_id: &str,
    ) -> anyhow::Result<Self> {
        let status = client
            .get_league_status(operator_request(
                token,
                GetLeagueStatusRequest {
                    league_id: league_id.to_owned(),
                },
            ))
            .await
            .map_err(|status| anyhow::anyhow!("league {league_id:?}: {}", status.message()))?
            .into_inner();
        let league_id = status.league_id.clone();
        let standings = client
            .get_standings(operator_request(
                token,
                GetStandingsRequest {
                    league_id: league_id.clone(),
                },
            ))
            .await
            .context("reading the standings")?
            .into_inner()
            .standings;
        let mut by_round = vec![];
        let mut first_round_id = 1;
        loop {
            let page = client
                .get_standings_by_round(operator_request(
                    token,
                    GetStandingsByRoundRequest {
                        league_id: league_id.clone(),
                        first_round_id,
                        max_rounds: 0,
                    },
                ))
                .await
                .context("reading the standings by round")?
                .into_inner();
            by_round.extend(page.rounds);
            if page.next_round_id <= first_round_id {
                break;
            }
            first_round_id = page.next_round_id;
        }
        let rounds = schedule(client, token, &league_id).await?;
        Ok(Self {
            status,
            standings,
            by_round,
            rounds,
            llm_moves: BTreeMap::new(),
            stopped: false,
        })
    }

    pub fn matches(&self) -> impl Iterator<Item = &ScheduledMatch> {
        self.rounds.iter().flat_map(|round| &round.matches)
    }

    pub fn league_id(&self) -> &str {
        &self.status.league_id
    }
}

/// Every round of `league_id` and its matches with their outcomes, read a page at a time.
pub async fn schedule(
    client: &mut ManagerServiceClient<GrpcChannel>,
    token: &SecretString,
    league_id: &str,
) -> anyhow::Result<Vec<ScheduledRound>> {
    let mut rounds = vec![];
    let mut first_round_id = 1;
    loop {
        let page = client
            .get_schedule(operator_request(
                token,
                GetScheduleRequest {
                    league_id: league_id.to_owned(),
                    first_round_id,
                    max_matches: 0,
                },
            ))
            .await
            .context("reading the schedule")?
            .into_inner();
        rounds.extend(page.rounds);
        // Pages move forward or end: a page that would not is the end too.
        if page.next_round_id <= first_round_id {
            return Ok(rounds);
        }
        first_round_id = page.next_round_id;
    }
}

/// A player's strategy group, by its name (the player host names its bots).
pub use league_player::bot_name::strategy_of;

/// What a finished match was for one of its players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    Win,
    Draw,
    Loss,
    TechnicalLoss,
}

/// `player_id`'s mark in `scheduled`, if it played it and it is finished.
pub fn mark_for(scheduled: &ScheduledMatch, player_id: &str) -> Option<Mark> {
    let result = scheduled.result.as_ref()?;
    let status = ResultStatus::try_from(result.status).unwrap_or(ResultStatus::Unspecified);
    Some(match status {
        ResultStatus::Draw => Mark::Draw,
        _ if result.at_fault_player_ids.iter().any(|p| p == player_id) => Mark::TechnicalLoss,
        _ if result.winner_player_id == player_id => Mark::Win,
        _ => Mark::Loss,
    })
}

/// How long the referee took over the match, in milliseconds (its transcript's first to last entry).
pub fn duration_ms(scheduled: &ScheduledMatch) -> Option<i64> {
    let millis = |at: &prost_types::Timestamp| at.seconds * 1000 + i64::from(at.nanos / 1_000_000);
    Some(millis(scheduled.finished_at.as_ref()?) - millis(scheduled.started_at.as_ref()?))
}
