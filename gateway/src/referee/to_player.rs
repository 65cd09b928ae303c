//! An external referee's calls to the players of its match: GAME_INVITATION, CHOOSE_PARITY_CALL /
//! GAME_MOVE_CALL, GAME_OVER and GAME_ERROR, sent to the player's path (`/mcp/players/<id>`, given in
//! START_MATCH) or naming the player in `player_id`. Each becomes the `PlayerService` call our referees
//! make, to wherever the player is served (a bot's host, or a gateway for an external player), and the
//! player's answer comes back in the JSON-RPC result as the specification's reply.
//!
//! Only the referee holding the match's lease may call its players, and only those two. The match id
//! and that lease identify the match, so a call with `"league_id": null` (common among real referees) is
//! taken, with a compliance warning (refused in strict mode). Each call waits as long as the league's
//! timings give the player, not the specification's defaults.

use std::time::{Duration, SystemTime};

use league_proto::ErrorCode;
use league_proto::v2::{
    AgentKind, InviteToMatchRequest, MatchContext, NotifyGameErrorRequest, NotifyGameOverRequest,
    PlayerRecord, RequestMoveRequest, Role,
};
use serde_json::{Map, Value, json};

use super::RefereedMatch;
use crate::compliance::{Checker, kinds};
use crate::inbound::{Handled, HttpContext, Inbound};
use crate::league_error::{LeagueError, LeagueResult};
use crate::wire::envelope::{required_id, text};
use crate::wire::{self, convert, result, timestamp};
use league_domain::MessageType;

/// How long a GAME_ERROR may take (a notification the league's timings do not bound).
const OTHER_WITHIN: Duration = Duration::from_secs(10);

pub async fn call(
    inbound: &Inbound,
    kind: MessageType,
    message: &Map<String, Value>,
    checker: &mut Checker,
    http: &HttpContext,
) -> LeagueResult<Handled> {
    let (referee, envelope) = inbound.authenticated(message, checker, http).await?;
    if referee.kind != AgentKind::Referee {
        return Err(LeagueError::new(
            ErrorCode::PermissionDenied,
            format!("only a referee sends {}", kind.as_str()),
        ));
    }
    let match_id = required_id(message, "match_id")?;
    let league_id = match message.get("league_id") {
        Some(Value::Null) | None => {
            checker.deviation(
                kinds::MISSING_ENVELOPE_FIELD,
                format!(
                    "league_id missing on {} (the match id and the referee's lease identify the match)",
                    kind.as_str()
                ),
                ErrorCode::MissingRequiredField,
            )?;
            inbound.referees.league_of(match_id, &referee.agent_id)
        }
        Some(_) => required_id(message, "league_id")?.to_owned(),
    };
    let found = inbound.referees.refereed_match(&league_id, match_id).await?;
    if !found.running || found.referee_id != referee.agent_id {
        return Err(LeagueError::new(
            ErrorCode::LeaseNotHeld,
            format!("{} does not hold match {match_id}", referee.agent_id),
        ));
    }
    let player_id = target(message, http)?;
    let opponent_id = found.opponent(&player_id).map(str::to_owned).ok_or_else(|| {
        LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("{player_id} does not play in {match_id}"),
        )
    })?;
    let context = MatchContext {
        league_id: found.league_id.clone(),
        round_id: found.round_id,
        match_id: found.match_id.clone(),
        game_type: found.game_type.clone(),
        conversation_id: envelope.conversation_id.clone().unwrap_or_default(),
        referee_id: referee.agent_id.clone(),
    };
    let mut client = inbound.referees.player(&player_id).await?;
    let conversation_id = context.conversation_id.clone();
    let reply = |message_type: &str, fields: Value| Handled {
        result: wire::message(
            message_type,
            &format!("player:{player_id}"),
            &conversation_id,
            fields,
        ),
        agent_id: Some(referee.agent_id.clone()),
    };
    match kind {
        MessageType::GameInvitation => {
            let role = if player_id == found.player_a {
                Role::PlayerA
            } else {
                Role::PlayerB
            };
            let request = InviteToMatchRequest {
                player_id: player_id.clone(),
                context: Some(context),
                role_in_match: role as i32,
                opponent_id,
                deadline: Some(deadline(found.timing.join_timeout)),
            };
            let answer = client
                .invite_to_match(within(request, found.timing.join_timeout))
                .await?
                .into_inner();
            Ok(reply(
                MessageType::GameJoinAck.as_str(),
                json!({
                    "league_id": found.league_id,
                    "round_id": found.round_id,
                    "match_id": found.match_id,
                    "player_id": player_id,
                    "arrival_timestamp": answer
                        .arrival_timestamp
                        .and_then(|at| SystemTime::try_from(at).ok())
                        .map_or_else(timestamp::now, timestamp::format),
                    "accept": answer.accept,
                    "reason": (!answer.reason.is_empty()).then_some(answer.reason),
                }),
            ))
        }
        MessageType::ChooseParityCall | MessageType::GameMoveCall => {
            let request = RequestMoveRequest {
                player_id: player_id.clone(),
                context: Some(context),
                opponent_id,
                step: number(message, "step").unwrap_or(1),
                attempt: number(message, "attempt").unwrap_or(1),
                deadline: Some(deadline(found.timing.move_timeout)),
                your_standings: Some(standings(message)),
                step_context: message
                    .get("step_context")
                    .and_then(Value::as_object)
                    .map(convert::to_struct),
            };
            let answer = client
                .request_move(within(request, found.timing.move_timeout))
                .await?
                .into_inner();
            let payload = answer
                .move_payload
                .as_ref()
                .map_or_else(|| json!({}), convert::from_struct);
            let fields = |extra: (&str, Value)| {
                let mut fields = json!({
                    "league_id": found.league_id,
                    "round_id": found.round_id,
                    "match_id": found.match_id,
                    "player_id": player_id,
                });
                fields[extra.0] = extra.1;
                fields
            };
            Ok(if kind == MessageType::ChooseParityCall {
                reply(
                    MessageType::ChooseParityResponse.as_str(),
                    fields(("parity_choice", payload["parity_choice"].clone())),
                )
            } else {
                reply(
                    MessageType::GameMoveResponse.as_str(),
                    fields(("move_payload", payload)),
                )
            })
        }
        MessageType::GameOver => {
            let game_result = message
                .get("game_result")
                .and_then(Value::as_object)
                .ok_or_else(|| {
                    LeagueError::new(ErrorCode::MissingRequiredField, "game_result is required")
                })?;
            let players = result::Players {
                a: &found.player_a,
                b: &found.player_b,
            };
            let read = result::read(match_id, players, game_result, checker)?;
            let request = NotifyGameOverRequest {
                player_id: player_id.clone(),
                context: Some(context),
                result: Some(read),
            };
            client
                .notify_game_over(within(request, found.timing.game_over_timeout))
                .await?;
            Ok(acknowledged(&found, &player_id, kind, referee.agent_id.clone()))
        }
        _ => {
            // The code says what went wrong; the rest is explanation, sent as the referee gave it.
            let explained = |field: &str| text(message, field).unwrap_or("").to_owned();
            let request = NotifyGameErrorRequest {
                player_id: player_id.clone(),
                context: Some(context),
                error_code: required_id(message, "error_code")?.to_owned(),
                error_description: explained("error_description"),
                affected_player: text(message, "affected_player").unwrap_or(&player_id).to_owned(),
                action_required: explained("action_required"),
                retry_count: number(message, "retry_count").unwrap_or(0),
                max_retries: number(message, "max_retries").unwrap_or(0),
                consequence: explained("consequence"),
            };
            client.notify_game_error(within(request, OTHER_WITHIN)).await?;
            Ok(acknowledged(&found, &player_id, kind, referee.agent_id.clone()))
        }
    }
}

fn acknowledged(found: &RefereedMatch, player_id: &str, kind: MessageType, referee_id: String) -> Handled {
    Handled {
        result: json!({
            "status": "acknowledged",
            "message_type": kind.as_str(),
            "match_id": found.match_id,
            "player_id": player_id,
        }),
        agent_id: Some(referee_id),
    }
}

/// The player the call is for: its path, or `player_id` in the message; both must agree.
fn target(message: &Map<String, Value>, http: &HttpContext) -> LeagueResult<String> {
    match (http.player_path.as_deref(), text(message, "player_id")) {
        (Some(path), Some(named)) if path != named => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("sent to {path}'s path but names player {named}"),
        )),
        (Some(player), _) | (None, Some(player)) if !player.is_empty() => Ok(player.to_owned()),
        _ => Err(LeagueError::new(
            ErrorCode::MissingRequiredField,
            "player_id is required (or send to the player's path, /mcp/players/<id>)",
        )),
    }
}

fn number(message: &Map<String, Value>, field: &str) -> Option<u32> {
    message
        .get(field)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// CHOOSE_PARITY_CALL's `context.your_standings`.
fn standings(message: &Map<String, Value>) -> PlayerRecord {
    let of = |field: &str| {
        message
            .get("context")
            .and_then(|context| context.get("your_standings"))
            .and_then(|standings| standings.get(field))
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0)
    };
    PlayerRecord {
        wins: of("wins"),
        draws: of("draws"),
        losses: of("losses"),
    }
}

fn deadline(within: Duration) -> prost_types::Timestamp {
    prost_types::Timestamp::from(SystemTime::now() + within)
}

/// A gRPC request that gives up after `limit` (a slow player never holds the referee's call open).
fn within<T>(message: T, limit: Duration) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(limit);
    request
}
