//! Operator actions through the gateway: `start_league`, and listing agents' compliance warnings. Both
//! require the operator token (in params `auth_token` or `Authorization: Bearer`).

use league_proto::ErrorCode;
use league_proto::v2::{ListComplianceWarningsRequest, StartLeagueRequest};
use serde_json::{Map, Value, json};

use super::{HttpContext, Inbound};
use crate::league_error::{LeagueError, LeagueResult};
use crate::wire::envelope::text;

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
        Some(token) => match inbound.league.authenticate(None, token).await {
            Ok((agent_id, _)) => Err(LeagueError::new(
                ErrorCode::PermissionDenied,
                format!("{agent_id} may not do this: operator credential required"),
            )),
            Err(_) => Err(LeagueError::new(
                ErrorCode::AuthTokenInvalid,
                "not the operator token",
            )),
        },
    }
}

pub async fn start_league(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    let league_id = text(message, "league_id").unwrap_or_default().to_owned();
    let started = inbound
        .league
        .manager
        .clone()
        .start_league(inbound.league.as_operator(StartLeagueRequest { league_id }))
        .await?
        .into_inner();
    Ok(crate::wire::message(
        "LEAGUE_START_RESPONSE",
        "league_manager",
        text(message, "conversation_id").unwrap_or_default(),
        json!({
            "status": "STARTED",
            "success": true,
            "league_id": started.league_id,
            "total_rounds": started.total_rounds,
            "total_matches": started.total_matches,
        }),
    ))
}

pub async fn compliance_warnings(
    inbound: &Inbound,
    message: &Map<String, Value>,
    http: &HttpContext,
) -> LeagueResult<Value> {
    require_operator(inbound, message, http).await?;
    let agent_id = text(message, "agent_id").unwrap_or_default().to_owned();
    let warnings = inbound
        .league
        .agents
        .clone()
        .list_compliance_warnings(
            inbound
                .league
                .as_operator(ListComplianceWarningsRequest { agent_id }),
        )
        .await?
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
                "first_seen": w.first_seen.map(|t| crate::wire::timestamp::format(std::time::SystemTime::try_from(t).unwrap_or(std::time::UNIX_EPOCH))),
                "last_seen": w.last_seen.map(|t| crate::wire::timestamp::format(std::time::SystemTime::try_from(t).unwrap_or(std::time::UNIX_EPOCH))),
            })
        })
        .collect();
    Ok(json!({ "warnings": warnings }))
}
