//! `league query`: the manager's read-only queries from the command line, printed as JSON (the
//! contracts' own field names) — the list of leagues, the standings (now or after each round), the
//! schedule with outcomes, one match with its transcript, a player's match history. Reads a running
//! manager or a past league's database, like `league report`.

use clap::{Args, Subcommand};
use league_proto::v2::*;
use league_runtime::credentials::operator_request;

use crate::report::source::SourceArgs;

#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    #[command(subcommand)]
    pub what: Query,
    /// The league (default: the newest).
    #[arg(long, global = true, default_value = "")]
    pub league: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum Query {
    /// Every league, newest first.
    Leagues {
        /// At most this many (up to 100).
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// The `next_page_token` of the previous page.
        #[arg(long, default_value = "")]
        page_token: String,
    },
    /// The league table, each row with the rule that ranks it above the next.
    Standings {
        /// The table after each completed round instead, a page of rounds at a time.
        #[arg(long)]
        by_round: bool,
        /// With --by-round: the first round of the page.
        #[arg(long, default_value_t = 1)]
        from_round: u32,
    },
    /// The rounds and their matches with outcomes, a page of whole rounds at a time.
    Schedule {
        /// The first round of the page.
        #[arg(long, default_value_t = 1)]
        from_round: u32,
    },
    /// One match: its result and its transcript.
    Match { match_id: String },
    /// A player's row and match history.
    Player { player_id: String },
}

pub async fn query(args: QueryArgs) -> anyhow::Result<()> {
    let mut connected = args.source.connect().await?;
    let (client, token) = (&mut connected.client, &connected.token);
    let league_id = args.league;
    let failed = |status: tonic::Status| anyhow::anyhow!("{}", status.message());
    let json = match args.what {
        Query::Leagues { limit, page_token } => {
            let request = ListLeaguesRequest {
                page_size: limit,
                page_token,
            };
            let answer = client
                .list_leagues(operator_request(token, request))
                .await
                .map_err(failed)?;
            league_proto::json::to_json("league.v2.ListLeaguesResponse", answer.get_ref())
        }
        Query::Standings { by_round: false, .. } => {
            let request = GetStandingsRequest { league_id };
            let answer = client
                .get_standings(operator_request(token, request))
                .await
                .map_err(failed)?;
            league_proto::json::to_json("league.v2.GetStandingsResponse", answer.get_ref())
        }
        Query::Standings {
            by_round: true,
            from_round,
        } => {
            let request = GetStandingsByRoundRequest {
                league_id,
                first_round_id: from_round,
                max_rounds: 0,
            };
            let answer = client
                .get_standings_by_round(operator_request(token, request))
                .await
                .map_err(failed)?;
            league_proto::json::to_json("league.v2.GetStandingsByRoundResponse", answer.get_ref())
        }
        Query::Schedule { from_round } => {
            let request = GetScheduleRequest {
                league_id,
                first_round_id: from_round,
                max_matches: 0,
            };
            let answer = client
                .get_schedule(operator_request(token, request))
                .await
                .map_err(failed)?;
            league_proto::json::to_json("league.v2.GetScheduleResponse", answer.get_ref())
        }
        Query::Match { match_id } => {
            let request = GetMatchRequest { league_id, match_id };
            let answer = client
                .get_match(operator_request(token, request))
                .await
                .map_err(failed)?;
            league_proto::json::to_json("league.v2.GetMatchResponse", answer.get_ref())
        }
        Query::Player { player_id } => {
            let request = GetPlayerStatsRequest { league_id, player_id };
            let answer = client
                .get_player_stats(operator_request(token, request))
                .await
                .map_err(failed)?;
            league_proto::json::to_json("league.v2.GetPlayerStatsResponse", answer.get_ref())
        }
    }?;
    println!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
}
