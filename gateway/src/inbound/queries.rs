//! LEAGUE_QUERY (GET_STANDINGS, GET_SCHEDULE, GET_NEXT_MATCH, GET_PLAYER_STATS, and our GET_MATCH,
//! GET_LEAGUE_STATUS, GET_STANDINGS_BY_ROUND and GET_LEAGUES), and the debug shorthands
//! (`get_standings`…) that ask the same with fewer words.
//! Every query is authenticated, by an agent's token or the operator's. Standings, the hot query, come
//! from a cache at most 100 ms old (crate::inbound::standings); the others go to the manager each time.

use league_domain::{AgentId, LeagueId, MatchId, MessageType, PlayerId};
use league_manager_link::league_status::to_league_error;
use league_manager_link::named;
use league_proto::ErrorCode;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::*;
use league_runtime::Credentials;
use league_runtime::grpc::GrpcChannel;
use league_v2::compliance::Checker;
use league_v2::convert;
use league_v2::envelope::text;
use league_v2::ids;
use league_v2::jsonrpc;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::query::{self, Query};
use league_v2::sender;
use serde_json::{Map, Value, json};

use super::referees::Pull;
use super::{Handled, HttpContext, Inbound};

/// Who asks: an agent (and which), or the operator.
enum Asker {
    Agent { agent_id: AgentId, token: String },
    Operator,
}

/// LEAGUE_QUERY with its full envelope.
pub(crate) async fn league_query(
    inbound: &Inbound,
    message: &Map<String, Value>,
    checker: &mut Checker,
    http: &HttpContext,
) -> LeagueResult<Handled> {
    let query_type = match message.get("query_type") {
        Some(Value::String(query_type)) => query_type.to_ascii_uppercase(),
        None | Some(Value::Null) => {
            return Err(LeagueError::new(
                ErrorCode::MissingRequiredField,
                "query_type is required",
            ));
        }
        Some(_) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                "query_type must be a string",
            ));
        }
    };
    // A pulling referee's question (league_external_referees).
    if query_type == query::REGISTRATIONS {
        return inbound.pull(Pull::Registrations, message, checker, http).await;
    }
    let query = Query::parse(&query_type).ok_or_else(|| {
        LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("unknown query_type {query_type:?}; one of {}", Query::names()),
        )
    })?;
    run(inbound, query, message, checker, http, true).await
}

/// `get_standings` and friends: the same queries, envelope optional.
pub(crate) async fn shorthand(
    inbound: &Inbound,
    query: Query,
    message: &Map<String, Value>,
    checker: &mut Checker,
    http: &HttpContext,
) -> LeagueResult<Handled> {
    run(inbound, query, message, checker, http, false).await
}

async fn run(
    inbound: &Inbound,
    query: Query,
    message: &Map<String, Value>,
    checker: &mut Checker,
    http: &HttpContext,
    full_envelope: bool,
) -> LeagueResult<Handled> {
    // The operator may ask anything; an agent proves who it is like for any other message.
    let token = text(message, "auth_token")
        .filter(|t| !t.is_empty())
        .or(http.bearer.as_deref());
    let (asker, agent_id, conversation_id) = match token {
        Some(token) if inbound.is_operator(token) => (Asker::Operator, None, conversation(message)),
        None if !full_envelope => {
            return Err(LeagueError::new(
                ErrorCode::AuthTokenMissing,
                "auth_token is required",
            ));
        }
        _ => {
            // The debug shorthands (`get_standings {}`…) are not league.v2 messages: an envelope is not
            // expected of them, so a missing one is no compliance warning (a malformed one still fails).
            let mut shorthand = Checker::new(league_v2::compliance::Mode::Lenient);
            let checker = if full_envelope {
                &mut *checker
            } else {
                &mut shorthand
            };
            let (agent, envelope) = inbound.authenticated(message, checker, http).await?;
            let asker = Asker::Agent {
                agent_id: agent.agent_id.clone(),
                token: agent.token,
            };
            (asker, Some(agent.agent_id), envelope.conversation_id)
        }
    };
    let params = match message.get("query_params") {
        Some(Value::Object(params)) => params.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                "query_params must be an object",
            ));
        }
    };
    // A player asking about itself need not name itself.
    let asker_player = match &agent_id {
        Some(AgentId::Player(player_id)) => Some(player_id.clone()),
        _ => None,
    };
    let asked = Asked {
        league_id: ids::optional(message, "league_id")?,
        player_id: id_param(&params, message, "player_id")?.or(asker_player),
        match_id: id_param(&params, message, "match_id")?,
        first_round_id: number(&params, message, "first_round_id")?,
        limit: number(&params, message, "limit")?,
        // No token: the first page.
        page_token: text(&params, "page_token")
            .or_else(|| text(message, "page_token"))
            .map_or_else(String::new, str::to_owned),
    };
    let outcome = answer(inbound, &asker, query, asked).await;
    Ok(Handled {
        result: response(query, conversation_id.as_deref().unwrap_or_default(), outcome)?,
        agent_id,
    })
}

/// LEAGUE_QUERY_RESPONSE: the data, or the league's refusal as `error` (`success` false). A failure that
/// is not about the question — the league unreachable, or the asker not let in — is the call's error.
fn response(query: Query, conversation_id: &str, outcome: LeagueResult<Value>) -> LeagueResult<Value> {
    let (success, data, error) = match outcome {
        Ok(data) => (true, data, Value::Null),
        Err(error)
            if matches!(
                error.code,
                ErrorCode::ConnectionError
                    | ErrorCode::Timeout
                    | ErrorCode::InternalError
                    | ErrorCode::AuthTokenInvalid
                    | ErrorCode::AuthTokenMissing
                    | ErrorCode::PermissionDenied
            ) =>
        {
            return Err(error);
        }
        Err(error) => (
            false,
            Value::Null,
            json!({"error_code": error.code.code(), "error_description": error.description}),
        ),
    };
    Ok(league_v2::envelope::message(
        MessageType::LeagueQueryResponse.as_str(),
        sender::MANAGER,
        conversation_id,
        jsonrpc::object([
            ("query_type", query.as_str().into()),
            ("success", success.into()),
            ("data", data),
            ("error", error),
        ]),
    ))
}

fn conversation(message: &Map<String, Value>) -> Option<String> {
    text(message, "conversation_id").map(str::to_owned)
}

/// What a query asks about; each query type reads the fields it needs.
struct Asked {
    league_id: Option<LeagueId>,
    player_id: Option<PlayerId>,
    match_id: Option<MatchId>,
    /// GET_SCHEDULE, GET_STANDINGS_BY_ROUND: where a page starts (0: the first round).
    first_round_id: u32,
    /// The page size: matches (GET_SCHEDULE), rounds (GET_STANDINGS_BY_ROUND), leagues (GET_LEAGUES).
    limit: u32,
    /// GET_LEAGUES: the previous page's `next_page_token`.
    page_token: String,
}

/// An optional id among the query parameters, or beside them in a debug shorthand: E002 naming the
/// field where it is no such id.
fn id_param<Id: std::str::FromStr<Err = league_domain::InvalidId>>(
    params: &Map<String, Value>,
    message: &Map<String, Value>,
    name: &str,
) -> LeagueResult<Option<Id>> {
    match ids::optional(params, name)? {
        Some(id) => Ok(Some(id)),
        None => ids::optional(message, name),
    }
}

/// An optional non-negative whole number among the query parameters, or beside them in a debug
/// shorthand (0 when absent).
fn number(params: &Map<String, Value>, message: &Map<String, Value>, name: &str) -> LeagueResult<u32> {
    match params.get(name).or_else(|| message.get(name)) {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
            LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!("query_params.{name} must be a non-negative integer"),
            )
        }),
    }
}

/// The answer to one query: its `data`, or the league's refusal.
async fn answer(inbound: &Inbound, asker: &Asker, query: Query, asked: Asked) -> LeagueResult<Value> {
    let ask = Ask { inbound, asker };
    match query {
        // The asker is authenticated (above) and standings are the same for everyone the league lets
        // ask: from the gateway's short-lived cache (crate::inbound::standings), not one manager call
        // and standings computation per query.
        Query::Standings => Ok(inbound.standings(asked.league_id.as_ref()).await?.data.value()),
        Query::Schedule => ask.schedule(asked).await,
        Query::NextMatch => ask.next_match(asked).await,
        Query::PlayerStats => ask.player_stats(asked).await,
        Query::Match => ask.one_match(asked).await,
        Query::LeagueStatus => ask.league_status(asked).await,
        Query::StandingsByRound => ask.standings_by_round(asked).await,
        Query::Leagues => ask.leagues(asked).await,
    }
}

/// The manager, asked as the asker.
struct Ask<'a> {
    inbound: &'a Inbound,
    asker: &'a Asker,
}

impl Ask<'_> {
    fn manager(&self) -> ManagerServiceClient<GrpcChannel> {
        self.inbound.manager_link.manager.clone()
    }

    /// `message` with the asker's credentials.
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        match self.asker {
            Asker::Operator => self.inbound.manager_link.as_operator(message),
            Asker::Agent { agent_id, token } => {
                Credentials::new(agent_id.as_str(), token.clone()).request(message)
            }
        }
    }

    fn played_match(&self, m: &ScheduledMatch) -> Value {
        played_match(m, &self.inbound.public_url)
    }

    fn scheduled_match(&self, m: &ScheduledMatch) -> Value {
        convert::scheduled_match(m, &self.inbound.public_url)
    }

    async fn schedule(&self, asked: Asked) -> LeagueResult<Value> {
        let request = GetScheduleRequest {
            league_id: named(asked.league_id.as_ref()),
            first_round_id: asked.first_round_id,
            max_matches: asked.limit,
        };
        let r = answered(self.manager().get_schedule(self.request(request))).await?;
        let rounds = r.rounds.iter().map(|round| {
            json!({
                "round_id": round.round_id,
                "matches": round.matches.iter().map(|m| self.played_match(m)).collect::<Vec<_>>(),
                "bye_player_ids": round.bye_player_ids,
            })
        });
        Ok(rounds_page(&r.league_id, rounds, r.next_round_id))
    }

    async fn next_match(&self, asked: Asked) -> LeagueResult<Value> {
        let request = GetNextMatchRequest {
            league_id: named(asked.league_id.as_ref()),
            player_id: asked.player_id.ok_or_else(|| missing("player_id"))?.into(),
        };
        let r = answered(self.manager().get_next_match(self.request(request))).await?;
        Ok(json!({"match": r.r#match.as_ref().map(|m| self.scheduled_match(m))}))
    }

    async fn player_stats(&self, asked: Asked) -> LeagueResult<Value> {
        let request = GetPlayerStatsRequest {
            league_id: named(asked.league_id.as_ref()),
            player_id: asked.player_id.ok_or_else(|| missing("player_id"))?.into(),
        };
        let r = answered(self.manager().get_player_stats(self.request(request))).await?;
        Ok(json!({
            "standing": r.standing.as_ref().map(convert::standing),
            "results": r.results.iter().map(convert::match_result).collect::<Vec<_>>(),
            "matches": r.matches.iter().map(|m| self.played_match(m)).collect::<Vec<_>>(),
        }))
    }

    /// GET_MATCH.
    async fn one_match(&self, asked: Asked) -> LeagueResult<Value> {
        let request = GetMatchRequest {
            league_id: named(asked.league_id.as_ref()),
            match_id: asked.match_id.ok_or_else(|| missing("match_id"))?.to_string(),
        };
        let r = answered(self.manager().get_match(self.request(request))).await?;
        let transcript = r
            .transcript
            .as_ref()
            .map(|transcript| league_proto::json::to_json("league.v2.MatchTranscript", transcript))
            .transpose()
            .map_err(|error| LeagueError::new(ErrorCode::InternalError, error.to_string()))?;
        Ok(json!({
            "match": r.r#match.as_ref().map(|m| self.scheduled_match(m)),
            "result": r.result.as_ref().map(convert::match_result),
            "transcript": transcript,
        }))
    }

    async fn league_status(&self, asked: Asked) -> LeagueResult<Value> {
        let request = GetLeagueStatusRequest {
            league_id: named(asked.league_id.as_ref()),
        };
        let r = answered(self.manager().get_league_status(self.request(request))).await?;
        Ok(json!({
            "league_id": r.league_id,
            "game_type": r.game_type,
            "status": convert::league_status(r.status),
            "current_round_id": r.current_round_id,
            "total_rounds": r.total_rounds,
            "total_matches": r.total_matches,
            "finished_matches": r.finished_matches,
            "registered_players": r.registered_players,
            "champion": r.champion.as_ref().map(convert::standing),
        }))
    }

    async fn standings_by_round(&self, asked: Asked) -> LeagueResult<Value> {
        let request = GetStandingsByRoundRequest {
            league_id: named(asked.league_id.as_ref()),
            first_round_id: asked.first_round_id,
            max_rounds: asked.limit,
        };
        let r = answered(self.manager().get_standings_by_round(self.request(request))).await?;
        let rounds = r.rounds.iter().map(
            |round| json!({"round_id": round.round_id, "standings": convert::standings(&round.standings)}),
        );
        Ok(rounds_page(&r.league_id, rounds, r.next_round_id))
    }

    async fn leagues(&self, asked: Asked) -> LeagueResult<Value> {
        let request = ListLeaguesRequest {
            page_size: asked.limit,
            page_token: asked.page_token,
        };
        let r = answered(self.manager().list_leagues(self.request(request))).await?;
        let leagues: Vec<Value> = r.leagues.iter().map(league_summary).collect();
        Ok(json!({
            "leagues": leagues,
            "next_page_token": (!r.next_page_token.is_empty()).then_some(r.next_page_token),
        }))
    }
}

/// What the manager answered, or its refusal as the league's error.
async fn answered<T>(
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> LeagueResult<T> {
    Ok(call.await.map_err(to_league_error)?.into_inner())
}

/// A page of rounds (GET_SCHEDULE, GET_STANDINGS_BY_ROUND): the next page starts at `next_round_id`,
/// none after the last round.
fn rounds_page(league_id: &str, rounds: impl Iterator<Item = Value>, next_round_id: u32) -> Value {
    json!({
        "league_id": league_id,
        "rounds": rounds.collect::<Vec<_>>(),
        "next_round_id": (next_round_id > 0).then_some(next_round_id),
    })
}

/// One league in GET_LEAGUES.
fn league_summary(league: &LeagueSummary) -> Value {
    json!({
        "league_id": league.league_id,
        "game_type": league.game_type,
        "status": convert::league_status(league.status),
        "current_round_id": league.current_round_id,
        "total_rounds": league.total_rounds,
        "registered_players": league.registered_players,
        "created_at": league.created_at.map(rfc3339),
        "started_at": league.started_at.map(rfc3339),
        "completed_at": league.completed_at.map(rfc3339),
        "champion": league.champion.as_ref().map(convert::standing),
    })
}

/// A scheduled match with what it came to: its result (winner, score, reason, players at fault for a
/// technical loss and why they lost, the game's own account) and when it started and ended, once
/// finished.
fn played_match(m: &ScheduledMatch, referee_endpoint: &str) -> Value {
    let mut value = convert::scheduled_match(m, referee_endpoint);
    if let Value::Object(object) = &mut value {
        object.insert(
            "result".into(),
            m.result.as_ref().map(convert::match_result).into(),
        );
        object.insert("started_at".into(), m.started_at.map(rfc3339).into());
        object.insert("finished_at".into(), m.finished_at.map(rfc3339).into());
        let cause = (!m.technical_loss_cause.is_empty()).then(|| m.technical_loss_cause.clone());
        object.insert("technical_loss_cause".into(), cause.into());
        let millis = |at: prost_types::Timestamp| at.seconds * 1000 + i64::from(at.nanos / 1_000_000);
        let duration_ms = m
            .started_at
            .zip(m.finished_at)
            .map(|(from, to)| millis(to) - millis(from));
        object.insert("duration_ms".into(), duration_ms.into());
    }
    value
}

fn rfc3339(at: prost_types::Timestamp) -> String {
    std::time::SystemTime::try_from(at).map_or_else(|_| String::new(), league_v2::timestamp::format)
}

fn missing(field: &str) -> LeagueError {
    LeagueError::new(ErrorCode::MissingRequiredField, format!("{field} is required"))
}
