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
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{
    Direction, InviteToMatchRequest, MatchContext, NotifyGameErrorRequest, NotifyGameOverRequest,
    PlayerRecord, RequestMoveRequest, Role,
};
use league_runtime::grpc::GrpcChannel;
use serde_json::{Map, Value, json};

use league_domain::MessageType;
use league_domain::{LeagueId, MatchId, PlayerId};
use league_manager_link::league_status::to_league_error;
use league_v2::compliance::{Checker, kinds};
use league_v2::envelope::{required_text, text};
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::{convert, envelope, ids, result, sender, timestamp};

use super::relayed::{self, Relay};
use super::{Referee, RefereedMatch, Referees};

/// How long a GAME_ERROR may take (a notification the league's timings do not bound).
const OTHER_WITHIN: Duration = Duration::from_secs(10);

impl Referees {
    /// A referee's call `kind` to a player of its match: the player's answer as the specification's
    /// reply. `player_path`: the player whose path (`/mcp/players/<id>`) the call came to.
    pub async fn call_player(
        &self,
        referee: &Referee,
        kind: MessageType,
        message: &Map<String, Value>,
        checker: &mut Checker,
        player_path: Option<&str>,
    ) -> LeagueResult<Value> {
        let call = PlayerCall::locate(self, referee, kind, message, checker, player_path).await?;
        let (found, player_id) = (call.found.clone(), call.player_id.clone());
        let attempt = number(message, "attempt").unwrap_or(1);
        let to_player = |kind: MessageType| Relay {
            direction: Direction::ToPlayer,
            player_id: &player_id,
            message_type: kind.as_str(),
            attempt,
            payload: None,
            error_code: None,
        };
        // The answer each call waits for, as the match's transcript records it.
        let answer_type = match kind {
            MessageType::GameInvitation => MessageType::GameJoinAck,
            MessageType::ChooseParityCall => MessageType::ChooseParityResponse,
            MessageType::GameMoveCall => MessageType::GameMoveResponse,
            MessageType::GameOver | MessageType::GameError => {
                self.relayed(&found, to_player(kind));
                return match kind {
                    MessageType::GameOver => call.game_over(message, checker).await,
                    _ => call.game_error(message).await,
                };
            }
            other => {
                return Err(LeagueError::new(
                    ErrorCode::InvalidMessageFormat,
                    format!("{} is not a referee's call to a player", other.as_str()),
                ));
            }
        };
        self.relayed(&found, to_player(kind));
        let answer = match kind {
            MessageType::GameInvitation => call.invite().await,
            _ => call.request_move(kind, message).await,
        };
        // Kept for the report: checked against the players' answers, and reported as its transcript.
        let (payload, error_code) = match &answer {
            Ok(reply) => (Some(said(answer_type, reply)), None),
            Err(error) => (Some(relayed::failure(&error.description)), Some(error.code)),
        };
        self.relayed(
            &found,
            Relay {
                direction: Direction::FromPlayer,
                payload,
                error_code,
                message_type: answer_type.as_str(),
                ..to_player(kind)
            },
        );
        answer
    }
}

/// The match `match_id` the call is about: in the league it names, unless the referee holds the lease
/// of `match_id` in another league (this replica handed it the match, or it is the current league's):
/// then the lease's league, with a warning. A referee of the field puts its own configured `league_id`
/// in every call; the lease it holds says which league the match is in.
async fn lease_s_match(
    referees: &Referees,
    referee: &Referee,
    kind: MessageType,
    named: Option<LeagueId>,
    match_id: MatchId,
    checker: &mut Checker,
) -> LeagueResult<RefereedMatch> {
    let Some(named) = named else {
        return referees.refereed_match(None, match_id).await;
    };
    let held = match referees.league_of(match_id, &referee.referee_id) {
        Some(held) if held == named => return referees.refereed_match(Some(&named), match_id).await,
        Some(held) => referees.refereed_match(Some(&held), match_id).await,
        None => match referees.refereed_match(Some(&named), match_id).await {
            Ok(found) if found.run_by(&referee.referee_id) => return Ok(found),
            named_s => match referees.refereed_match(None, match_id).await {
                Ok(current) if current.league_id != named => Ok(current),
                _ => return named_s,
            },
        },
    }?;
    if held.run_by(&referee.referee_id) {
        checker.deviation(
            kinds::LEAGUE_ID_NOT_THE_LEASE_S,
            format!(
                "{} names league {named}; {} holds match {}'s lease in league {}: taken for that one",
                kind.as_str(),
                referee.referee_id,
                held.match_id,
                held.league_id
            ),
            ErrorCode::LeagueNotFound,
        )?;
    }
    Ok(held)
}

/// A referee's call to one player of a match it holds, located.
struct PlayerCall {
    found: RefereedMatch,
    player_id: PlayerId,
    opponent_id: PlayerId,
    context: MatchContext,
    client: PlayerServiceClient<GrpcChannel>,
}

impl PlayerCall {
    /// The referee (holding the match's lease), the match and the player the call is for.
    async fn locate(
        referees: &Referees,
        referee: &Referee,
        kind: MessageType,
        message: &Map<String, Value>,
        checker: &mut Checker,
        player_path: Option<&str>,
    ) -> LeagueResult<Self> {
        let match_id: MatchId = ids::required(message, "match_id")?;
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
                referees.league_of(match_id, &referee.referee_id)
            }
            Some(_) => Some(ids::required(message, "league_id")?),
        };
        let found = lease_s_match(referees, referee, kind, league_id, match_id, checker).await?;
        if !found.run_by(&referee.referee_id) {
            return Err(LeagueError::new(
                ErrorCode::LeaseNotHeld,
                format!("{} does not hold match {match_id}", referee.referee_id),
            ));
        }
        let player_id = target(message, player_path)?;
        let opponent_id = found.opponent(&player_id).cloned().ok_or_else(|| {
            LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!("{player_id} does not play in {match_id}"),
            )
        })?;
        let context = MatchContext {
            league_id: found.league_id.to_string(),
            round_id: found.round_id,
            match_id: found.match_id.to_string(),
            game_type: found.game_type.clone(),
            // A call without one (a deviation the envelope check already counted) has none to echo.
            conversation_id: referee.conversation_id.clone(),
            referee_id: referee.referee_id.to_string(),
        };
        referees.player_called(&found, &referee.referee_id).await?;
        let client = referees.player(&player_id).await?;
        Ok(Self {
            found,
            player_id,
            opponent_id,
            context,
            client,
        })
    }

    /// The player's reply as the specification's message, from the player.
    fn reply(&self, message_type: MessageType, fields: Value) -> Value {
        envelope::message(
            message_type.as_str(),
            &sender::player(self.player_id.as_str()),
            &self.context.conversation_id,
            fields,
        )
    }

    /// The fields every reply about this match carries, with `extra`.
    fn match_fields(&self, extra: (&str, Value)) -> Value {
        let mut fields = json!({
            "league_id": self.found.league_id,
            "round_id": self.found.round_id,
            "match_id": self.found.match_id,
            "player_id": self.player_id,
        });
        fields[extra.0] = extra.1;
        fields
    }

    /// GAME_INVITATION → GAME_JOIN_ACK.
    async fn invite(mut self) -> LeagueResult<Value> {
        let role = if self.player_id == self.found.player_a {
            Role::PlayerA
        } else {
            Role::PlayerB
        };
        let join_timeout = self.found.timing.join_timeout;
        let request = InviteToMatchRequest {
            player_id: self.player_id.to_string(),
            context: Some(self.context.clone()),
            role_in_match: role as i32,
            opponent_id: self.opponent_id.to_string(),
            deadline: Some(deadline(join_timeout)),
        };
        let answer = self
            .client
            .invite_to_match(within(request, join_timeout))
            .await
            .map_err(to_league_error)?
            .into_inner();
        let arrival = answer
            .arrival_timestamp
            .and_then(|at| SystemTime::try_from(at).ok())
            .map_or_else(timestamp::now, timestamp::format);
        let mut fields = self.match_fields(("arrival_timestamp", arrival.into()));
        fields["accept"] = answer.accept.into();
        fields["reason"] = (!answer.reason.is_empty()).then_some(answer.reason).into();
        Ok(self.reply(MessageType::GameJoinAck, fields))
    }

    /// CHOOSE_PARITY_CALL → CHOOSE_PARITY_RESPONSE, GAME_MOVE_CALL → GAME_MOVE_RESPONSE.
    async fn request_move(mut self, kind: MessageType, message: &Map<String, Value>) -> LeagueResult<Value> {
        let move_timeout = self.found.timing.move_timeout;
        let request = RequestMoveRequest {
            player_id: self.player_id.to_string(),
            context: Some(self.context.clone()),
            opponent_id: self.opponent_id.to_string(),
            step: number(message, "step").unwrap_or(1),
            attempt: number(message, "attempt").unwrap_or(1),
            deadline: Some(deadline(move_timeout)),
            your_standings: Some(standings(message)),
            step_context: message
                .get("step_context")
                .and_then(Value::as_object)
                .map(convert::to_struct),
        };
        let answer = self
            .client
            .request_move(within(request, move_timeout))
            .await
            .map_err(to_league_error)?
            .into_inner();
        let payload = answer
            .move_payload
            .as_ref()
            .map_or_else(|| json!({}), convert::from_struct);
        Ok(if kind == MessageType::ChooseParityCall {
            let fields = self.match_fields(("parity_choice", payload["parity_choice"].clone()));
            self.reply(MessageType::ChooseParityResponse, fields)
        } else {
            let fields = self.match_fields(("move_payload", payload));
            self.reply(MessageType::GameMoveResponse, fields)
        })
    }

    /// GAME_OVER, acknowledged once the player has it.
    async fn game_over(mut self, message: &Map<String, Value>, checker: &mut Checker) -> LeagueResult<Value> {
        let game_result = message
            .get("game_result")
            .and_then(Value::as_object)
            .ok_or_else(|| LeagueError::new(ErrorCode::MissingRequiredField, "game_result is required"))?;
        let players = result::Players {
            a: self.found.player_a.as_str(),
            b: self.found.player_b.as_str(),
        };
        let read = result::read(&self.context.match_id, players, game_result, checker)?;
        let request = NotifyGameOverRequest {
            player_id: self.player_id.to_string(),
            context: Some(self.context.clone()),
            result: Some(read),
        };
        let within_time = self.found.timing.game_over_timeout;
        self.client
            .notify_game_over(within(request, within_time))
            .await
            .map_err(to_league_error)?;
        Ok(self.acknowledged(MessageType::GameOver))
    }

    /// GAME_ERROR, acknowledged once the player has it. The code says what went wrong and is required;
    /// the rest is explanation, sent as the referee gave it.
    async fn game_error(mut self, message: &Map<String, Value>) -> LeagueResult<Value> {
        let explained = |field: &str| text(message, field).unwrap_or("").to_owned();
        let request = NotifyGameErrorRequest {
            player_id: self.player_id.to_string(),
            context: Some(self.context.clone()),
            error_code: required_text(message, "error_code")?.to_owned(),
            error_description: explained("error_description"),
            affected_player: text(message, "affected_player")
                .unwrap_or(self.player_id.as_str())
                .to_owned(),
            action_required: explained("action_required"),
            retry_count: number(message, "retry_count").unwrap_or(0),
            max_retries: number(message, "max_retries").unwrap_or(0),
            consequence: explained("consequence"),
        };
        self.client
            .notify_game_error(within(request, OTHER_WITHIN))
            .await
            .map_err(to_league_error)?;
        Ok(self.acknowledged(MessageType::GameError))
    }

    fn acknowledged(self, kind: MessageType) -> Value {
        json!({
            "status": "acknowledged",
            "message_type": kind.as_str(),
            "match_id": self.found.match_id,
            "player_id": self.player_id,
        })
    }
}

/// What the player said in `reply` (of `answer_type`), as our referees record it in a transcript.
fn said(answer_type: MessageType, reply: &Value) -> Value {
    match answer_type {
        MessageType::GameJoinAck => json!({"accept": reply["accept"], "reason": reply["reason"]}),
        MessageType::ChooseParityResponse => json!({"parity_choice": reply["parity_choice"]}),
        _ => reply["move_payload"].clone(),
    }
}

/// The player the call is for: its path, or `player_id` in the message; both must agree.
fn target(message: &Map<String, Value>, player_path: Option<&str>) -> LeagueResult<PlayerId> {
    let named: Option<PlayerId> = ids::optional(message, "player_id")?;
    let path: Option<PlayerId> = player_path
        .map(|path| ids::parsed("the player's path (/mcp/players/<id>)", path))
        .transpose()?;
    match (path, named) {
        (Some(path), Some(named)) if path != named => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("sent to {path}'s path but names player {named}"),
        )),
        (Some(player), _) | (None, Some(player)) => Ok(player),
        (None, None) => Err(LeagueError::new(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn message(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    fn target_of(value: Value, path: Option<&str>) -> Result<String, ErrorCode> {
        target(&message(value), path)
            .map(String::from)
            .map_err(|error| error.code)
    }

    #[test]
    fn a_call_is_for_the_player_of_its_path_or_the_one_it_names_never_both_apart() {
        assert_eq!(target_of(json!({}), Some("P01")), Ok("P01".to_owned()));
        assert_eq!(target_of(json!({"player_id": "P02"}), None), Ok("P02".to_owned()));
        assert_eq!(
            target_of(json!({"player_id": "P01"}), Some("P01")),
            Ok("P01".to_owned())
        );
        assert_eq!(
            target_of(json!({"player_id": "P02"}), Some("P01")),
            Err(ErrorCode::InvalidMessageFormat)
        );
        assert_eq!(target_of(json!({}), None), Err(ErrorCode::MissingRequiredField));
        assert_eq!(
            target_of(json!({}), Some("../admin")),
            Err(ErrorCode::InvalidMessageFormat),
            "a path that names no player"
        );
    }

    #[test]
    fn what_a_player_said_is_recorded_as_our_referees_record_it() {
        let ack = json!({"accept": true, "reason": null, "match_id": "R1M1"});
        assert_eq!(
            said(MessageType::GameJoinAck, &ack),
            json!({"accept": true, "reason": null})
        );
        let parity = json!({"parity_choice": "even", "player_id": "P01"});
        assert_eq!(
            said(MessageType::ChooseParityResponse, &parity),
            json!({"parity_choice": "even"})
        );
        let moved = json!({"move_payload": {"row": 1, "col": 2}, "player_id": "P01"});
        assert_eq!(
            said(MessageType::GameMoveResponse, &moved),
            json!({"row": 1, "col": 2})
        );
    }

    #[test]
    fn the_standings_a_parity_call_carries_are_read_leniently() {
        let call = message(json!({"context": {"your_standings": {"wins": 2, "draws": 1, "losses": -1}}}));
        assert_eq!(
            standings(&call),
            PlayerRecord {
                wins: 2,
                draws: 1,
                losses: 0
            }
        );
        assert_eq!(standings(&message(json!({}))), PlayerRecord::default());
        assert_eq!(number(&message(json!({"step": 3})), "step"), Some(3));
        assert_eq!(number(&message(json!({"step": "3"})), "step"), None);
        assert_eq!(number(&message(json!({"step": 5_000_000_000_u64})), "step"), None);
    }
}
