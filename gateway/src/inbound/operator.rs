//! Operator actions through the gateway: `create_league`, `enroll_player`, `start_league`,
//! `pause_league`, `resume_league`, `cancel_league`, `withdraw_player`, and listing agents' compliance
//! warnings. Each requires the operator token (in params `auth_token` or
//! `Authorization: Bearer`).

use std::time::Duration;

use league_domain::{AgentId, LeagueId, MessageType, PlayerId};
use league_manager_link::league_status::to_league_error;
use league_manager_link::named;
use league_proto::ErrorCode;
use league_proto::v2::{
    CancelLeagueRequest, CreateLeagueRequest, EnrollPlayerRequest, ListComplianceWarningsRequest,
    MatchTiming, PauseLeagueRequest, ResumeLeagueRequest, StartLeagueRequest, WithdrawPlayerRequest,
};
use league_v2::dialect::Lifecycle;
use league_v2::envelope::text;
use league_v2::ids;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::sender;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{HttpContext, Inbound};

/// The operator token, or E011 (none), E020 (an agent's valid token: not allowed), E012 (neither).
async fn require_operator(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<()> {
    let token = text(message, "auth_token")
        .filter(|t| !t.is_empty())
        .or(http.bearer.as_deref());
    match token {
        None => Err(LeagueError::new(
            ErrorCode::AuthTokenMissing,
            "the operator token is required",
        )),
        Some(token) if inbound.is_operator(token) => Ok(()),
        Some(token) => match inbound.verify(None, token, http).await {
            Ok((agent_id, _)) => Err(LeagueError::new(
                ErrorCode::PermissionDenied,
                format!("{agent_id} may not do this: operator credential required"),
            )),
            Err(error) if error.code == ErrorCode::AuthTokenInvalid => Err(LeagueError::new(
                ErrorCode::AuthTokenInvalid,
                "not the operator token",
            )),
            // Refused before it was looked up (too many failed authentications), or the manager away.
            Err(error) => Err(error),
        },
    }
}

/// The league an operator's call names; `None` when it names none, which the manager reads as its
/// newest league (for an enrollment, the newest one registering players). E002 when it is no league id.
fn league_named(message: &Map<String, Value>) -> LeagueResult<Option<LeagueId>> {
    ids::optional(message, "league_id")
}

/// The manager's answer to an operator's call: `fields`, marked a success, in the conversation the call
/// named (an operator's call need not name one).
fn answer(message_type: MessageType, message: &Map<String, Value>, mut fields: Value) -> Value {
    fields["success"] = Value::Bool(true);
    league_v2::envelope::message(
        message_type.as_str(),
        sender::MANAGER,
        text(message, "conversation_id").unwrap_or(""),
        fields,
    )
}

pub(crate) async fn start_league(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    let league_id = named(league_named(message)?.as_ref());
    let started = inbound
        .manager_link
        .manager
        .clone()
        .start_league(inbound.manager_link.as_operator(StartLeagueRequest { league_id }))
        .await
        .map_err(to_league_error)?
        .into_inner();
    Ok(answer(
        MessageType::LeagueStartResponse,
        message,
        json!({
            "status": "STARTED",
            "league_id": started.league_id,
            "total_rounds": started.total_rounds,
            "total_matches": started.total_matches,
        }),
    ))
}

/// `create_league`'s params, beside the envelope's fields. Unset numbers take the manager's defaults
/// (timings: the deployment's; cycles: 1; max_players: the deployment's limit; auto_start_players: 0,
/// start by command).
#[derive(Debug, Deserialize)]
struct NewLeague {
    #[serde(default = "default_game")]
    game_type: String,
    #[serde(default)]
    auto_start_players: u32,
    #[serde(default)]
    cycles: u32,
    #[serde(default)]
    max_players: u32,
    #[serde(default)]
    timing: TimingMillis,
}

fn default_game() -> String {
    league_domain::GameType::default().as_str().to_owned()
}

/// A league's timings in milliseconds, as the gateway's START_MATCH carries them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimingMillis {
    join_timeout_ms: Option<u64>,
    move_timeout_ms: Option<u64>,
    game_over_timeout_ms: Option<u64>,
    max_attempts: Option<u32>,
    retry_delay_ms: Option<u64>,
    lease_duration_ms: Option<u64>,
}

impl TimingMillis {
    fn to_proto(&self) -> MatchTiming {
        let duration = |millis: Option<u64>| {
            millis.and_then(|millis| prost_types::Duration::try_from(Duration::from_millis(millis)).ok())
        };
        MatchTiming {
            join_timeout: duration(self.join_timeout_ms),
            move_timeout: duration(self.move_timeout_ms),
            game_over_timeout: duration(self.game_over_timeout_ms),
            max_attempts: self.max_attempts.unwrap_or(0),
            retry_delay: duration(self.retry_delay_ms),
            lease_duration: duration(self.lease_duration_ms),
        }
    }
}

pub(crate) async fn create_league(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    // Without one, the manager names the league.
    let league_id = league_named(message)?;
    let asked = NewLeague::deserialize(Value::Object(message.clone())).map_err(|error| {
        LeagueError::new(ErrorCode::InvalidMessageFormat, format!("create_league: {error}"))
    })?;
    let created = inbound
        .manager_link
        .manager
        .clone()
        .create_league(inbound.manager_link.as_operator(CreateLeagueRequest {
            league_id: named(league_id.as_ref()),
            game_type: asked.game_type.clone(),
            timing: Some(asked.timing.to_proto()),
            auto_start_players: asked.auto_start_players,
            cycles: asked.cycles,
            max_players: asked.max_players,
        }))
        .await
        .map_err(to_league_error)?
        .into_inner();
    Ok(answer(
        MessageType::LeagueCreateResponse,
        message,
        json!({
            "status": "CREATED",
            "league_id": created.league_id,
            "game_type": asked.game_type,
        }),
    ))
}

pub(crate) async fn enroll_player(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    let league_id = named(league_named(message)?.as_ref());
    let player_id = ids::required::<PlayerId>(message, "player_id")?.into();
    let enrolled = inbound
        .manager_link
        .manager
        .clone()
        .enroll_player(
            inbound
                .manager_link
                .as_operator(EnrollPlayerRequest { league_id, player_id }),
        )
        .await
        .map_err(to_league_error)?
        .into_inner();
    Ok(answer(
        MessageType::LeagueEnrollResponse,
        message,
        json!({
            "status": if enrolled.enrolled { "ENROLLED" } else { "ALREADY_ENROLLED" },
            "league_id": enrolled.league_id,
            "player_id": enrolled.player_id,
            "league_started": enrolled.started,
        }),
    ))
}

/// Pauses, resumes or cancels the league the call names, or withdraws a player from it; the manager
/// judges it (E008 for a league whose status does not allow it, E003 without a league).
pub(crate) async fn change_league(
    inbound: &Inbound,
    change: Lifecycle,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    let league_id = named(league_named(message)?.as_ref());
    let link = &inbound.manager_link;
    let mut manager = link.manager.clone();
    let answered = match change {
        Lifecycle::Pause => {
            let paused = manager
                .pause_league(link.as_operator(PauseLeagueRequest { league_id }))
                .await
                .map_err(to_league_error)?
                .into_inner();
            json!({"status": "PAUSED", "league_id": paused.league_id, "running_matches": paused.running_matches})
        }
        Lifecycle::Resume => {
            let resumed = manager
                .resume_league(link.as_operator(ResumeLeagueRequest { league_id }))
                .await
                .map_err(to_league_error)?
                .into_inner();
            json!({"status": "RUNNING", "league_id": resumed.league_id})
        }
        Lifecycle::Cancel => {
            let cancelled = manager
                .cancel_league(link.as_operator(CancelLeagueRequest { league_id }))
                .await
                .map_err(to_league_error)?
                .into_inner();
            json!({
                "status": "CANCELLED",
                "league_id": cancelled.league_id,
                "cancelled_matches": cancelled.cancelled_matches,
                "running_matches": cancelled.running_matches,
            })
        }
        Lifecycle::Withdraw => {
            let player_id = ids::required::<PlayerId>(message, "player_id")?.into();
            let withdrawn = manager
                .withdraw_player(link.as_operator(WithdrawPlayerRequest { league_id, player_id }))
                .await
                .map_err(to_league_error)?
                .into_inner();
            let forfeits: Vec<Value> = withdrawn
                .forfeits
                .iter()
                .map(|forfeit| json!({"match_id": forfeit.match_id, "winner_player_id": forfeit.winner_player_id}))
                .collect();
            json!({
                "status": "WITHDRAWN",
                "league_id": withdrawn.league_id,
                "player_id": withdrawn.player_id,
                "forfeits": forfeits,
            })
        }
    };
    Ok(answer(MessageType::LeagueOperatorResponse, message, answered))
}

pub(crate) async fn compliance_warnings(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    // Without `agent_id`, every agent's warnings (proto3's empty string).
    let agent_id = ids::optional::<AgentId>(message, "agent_id")?
        .map_or_else(String::new, |agent_id| agent_id.to_string());
    let warnings = inbound
        .manager_link
        .agents
        .clone()
        .list_compliance_warnings(
            inbound
                .manager_link
                .as_operator(ListComplianceWarningsRequest { agent_id }),
        )
        .await
        .map_err(to_league_error)?
        .into_inner()
        .warnings;
    let warnings: Vec<Value> = warnings
        .iter()
        .map(|w| {
            json!({
                "agent_id": w.agent_id,
                "kind": w.kind,
                "count": w.count,
                "example": w.detail,
                "first_seen": w.first_seen.map(|t| league_v2::timestamp::format(std::time::SystemTime::try_from(t).unwrap_or(std::time::UNIX_EPOCH))),
                "last_seen": w.last_seen.map(|t| league_v2::timestamp::format(std::time::SystemTime::try_from(t).unwrap_or(std::time::UNIX_EPOCH))),
            })
        })
        .collect();
    Ok(json!({ "warnings": warnings }))
}
