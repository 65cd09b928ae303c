//! The `PlayerService` of every external player: each gRPC call from a referee (or the manager's
//! event delivery) becomes a league.v2 JSON-RPC call to the agent, in its dialect, within the call's
//! deadline. The referee never learns whether a player is a bot or a program across the network.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::join_all;
use league_domain::{AgentId, MessageType, PlayerId, move_messages};
use league_manager_link::league_status::to_status;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::player_service_server::PlayerService;
use league_proto::v2::*;
use league_proto::{ErrorCode, error_code};
use league_runtime::grpc::{MatchCallAnswers, answer_match_calls};
use league_v2::compliance::{Checker, Mode, kinds};
use league_v2::league_error::LeagueError;
use league_v2::match_message::MatchMessage;
use league_v2::sender;
use league_v2::{convert, envelope, timestamp};
use league_v2::{ids, jsonrpc};
use serde_json::{Map, Value, json};
use tonic::{Request, Response, Status};

use super::answer::{as_object, check_reply, read_accept, read_choice};
use super::called::{Called, Context, required};
use super::client::AgentClient;
use super::event_slots::EventSlots;
use super::external_agents::{ExternalAgent, ExternalAgents};
use super::match_calls::{self, InMatch};
use super::replies::{Replies, reply_key};
use crate::warning_buffer::WarningBuffer;

/// Timeouts for the calls that carry no deadline of their own (a GAME_OVER: the league's game-over
/// timeout, capped by `agent_call_timeout`; anything else: `LEAGUE_AGENT_CALL_TIMEOUT`, 10 s by default).
#[derive(Debug, Clone, Copy)]
pub struct FallbackTimeouts {
    pub game_over: Duration,
    pub other: Duration,
}

#[derive(Debug, Clone)]
pub struct PlayerBridge {
    /// The agents it calls, and what it learned of each.
    pub agents: ExternalAgents,
    pub client: AgentClient,
    pub replies: Arc<Replies>,
    pub warnings: Arc<WarningBuffer>,
    pub mode: Mode,
    /// Where agents send replies meant for the referee (the gateway's `/mcp`).
    pub public_url: String,
    pub timeouts: FallbackTimeouts,
    /// League events give way to game calls (see [`EventSlots`]).
    pub event_slots: Arc<EventSlots>,
}

impl PlayerBridge {
    /// The agent `player_id`. A player the manager does not know is refused with its code (E005); any
    /// other failure is the league's own (the manager is away or failing): an outage, which a referee
    /// does not charge to the player.
    async fn agent(&self, player_id: &PlayerId) -> Result<Arc<ExternalAgent>, Status> {
        self.agents
            .external_agent(&AgentId::Player(player_id.clone()))
            .await
            .map_err(|error| match error.code {
                ErrorCode::PlayerNotRegistered => to_status(error),
                _ => error_code::service_outage(format!(
                    "the gateway could not look up {player_id}: {}",
                    error.description
                )),
            })
    }

    /// The referee's message `kind` to a player in the match `context`, with its own `fields`.
    fn to_player<F>(kind: MessageType, context: &Context, fields: F) -> MatchMessage<'_, F> {
        MatchMessage {
            message_type: kind,
            sender: Self::referee_sender(context),
            conversation_id: &context.conversation_id,
            fields,
        }
    }

    fn referee_sender(context: &Context) -> String {
        match &context.referee_id {
            None => sender::REFEREE.to_owned(),
            Some(referee_id) => sender::referee(referee_id.as_str()),
        }
    }
}

/// How long an answer that says it joined without a GAME_JOIN_ACK (`{"status": "ok"}`) waits for a
/// separate one before it counts as joining: at most half of what is left of the join deadline, so the
/// referee hears "joined" well inside its own (agents that reply separately do so within milliseconds).
const SEPARATE_JOIN_ACK_GRACE: Duration = Duration::from_secs(1);

fn remaining(deadline: Option<&prost_types::Timestamp>, fallback: Duration) -> Duration {
    deadline
        .and_then(|deadline| SystemTime::try_from(*deadline).ok())
        .and_then(|deadline| deadline.duration_since(SystemTime::now()).ok())
        .unwrap_or(fallback)
}

fn deadline_text(deadline: Option<&prost_types::Timestamp>) -> Option<String> {
    deadline
        .and_then(|deadline| SystemTime::try_from(*deadline).ok())
        .map(timestamp::format)
}

#[tonic::async_trait]
impl PlayerService for PlayerBridge {
    async fn invite_to_match(
        &self,
        request: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, Status> {
        let request = request.into_inner();
        let Called { player_id, context } = Called::parse(request.context, request.player_id)?;
        let opponent_id: PlayerId = ids::taken("opponent_id", request.opponent_id).map_err(to_status)?;
        let agent = self.agent(&player_id).await?;
        let limit = remaining(request.deadline.as_ref(), self.timeouts.other);
        let role = match Role::try_from(request.role_in_match).unwrap_or(Role::Unspecified) {
            Role::PlayerB => "PLAYER_B",
            _ => "PLAYER_A",
        };
        let message = Self::to_player(
            MessageType::GameInvitation,
            &context,
            match_calls::Invitation {
                in_match: InMatch::new(&context, &player_id),
                role_in_match: role,
                opponent_id: &opponent_id,
                referee_endpoint: &self.public_url,
                deadline: deadline_text(request.deadline.as_ref()),
            },
        );
        let started = tokio::time::Instant::now();
        let waiter = self.replies.wait(reply_key(
            MessageType::GameJoinAck,
            context.match_id,
            &agent.agent_id,
        ));
        let result = self
            .call(&agent, MessageType::GameInvitation, &message, limit)
            .await
            .map_err(|failure| failure.status(MessageType::GameInvitation.as_str()))?;
        let mut checker = Checker::new(self.mode);
        let mut reply = as_object(result);
        let mut accept = read_accept(&reply, &mut checker).map_err(to_status)?;
        if accept.is_none() {
            // A bare acknowledgement: the GAME_JOIN_ACK may come as a separate call. One that says it
            // joined ("ok") waits for it only briefly and then counts as joining, inside the referee's
            // own join deadline; anything else waits as long as the deadline allows.
            let joined = reply
                .get("status")
                .and_then(Value::as_str)
                .is_some_and(|s| matches!(s.to_ascii_lowercase().as_str(), "joined" | "accepted" | "ok"));
            let left = limit.saturating_sub(started.elapsed());
            let wait = if joined {
                (left / 2).min(SEPARATE_JOIN_ACK_GRACE)
            } else {
                left
            };
            match super::overhead::waiting(waiter.reply(wait)).await {
                Some(separate) => {
                    accept = read_accept(&separate, &mut checker).map_err(to_status)?;
                    reply = separate;
                }
                None => {
                    if !joined {
                        return Err(error_code::status(
                            ErrorCode::Timeout,
                            "no GAME_JOIN_ACK within the deadline",
                        ));
                    }
                    checker
                        .deviation(
                            kinds::FIELD_ALIAS,
                            "joined without a GAME_JOIN_ACK",
                            ErrorCode::MissingRequiredField,
                        )
                        .map_err(to_status)?;
                    accept = Some(true);
                }
            }
        }
        check_reply(&reply, &player_id, &mut checker).map_err(to_status)?;
        self.warnings
            .record(agent.agent_id.as_str(), checker.into_deviations());
        let accept = accept.unwrap_or(false);
        Ok(Response::new(InviteToMatchResponse {
            accept,
            arrival_timestamp: Some(prost_types::Timestamp::from(SystemTime::now())),
            reason: if accept {
                String::new()
            } else {
                "the agent declined".to_owned()
            },
        }))
    }

    async fn request_move(
        &self,
        request: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, Status> {
        let request = request.into_inner();
        let Called { player_id, context } = Called::parse(request.context, request.player_id)?;
        let opponent_id: PlayerId = ids::taken("opponent_id", request.opponent_id).map_err(to_status)?;
        let agent = self.agent(&player_id).await?;
        let limit = remaining(request.deadline.as_ref(), self.timeouts.other);
        // Unset (proto3): a player with no standing yet, nothing played.
        let standings = request.your_standings.unwrap_or_default();
        let (kind, reply_kind) = move_messages(&context.game_type);
        let even_odd = kind == MessageType::ChooseParityCall;
        let message = Self::to_player(
            kind,
            &context,
            match_calls::MoveCall {
                in_match: InMatch::new(&context, &player_id),
                context: match_calls::MoveContext {
                    opponent_id: &opponent_id,
                    round_id: context.round_id,
                    your_standings: standings.into(),
                },
                deadline: deadline_text(request.deadline.as_ref()),
                attempt: request.attempt,
                referee_endpoint: &self.public_url,
                step: (!even_odd).then_some(request.step),
                step_context: (!even_odd).then(|| {
                    request
                        .step_context
                        .as_ref()
                        .map_or(Value::Null, convert::from_struct)
                }),
            },
        );
        let started = tokio::time::Instant::now();
        let waiter = self
            .replies
            .wait(reply_key(reply_kind, context.match_id, &agent.agent_id));
        let result = self
            .call(&agent, kind, &message, limit)
            .await
            .map_err(|failure| failure.status(kind.as_str()))?;
        let mut checker = Checker::new(self.mode);
        let read =
            |reply: &Map<String, Value>, checker: &mut Checker| -> Result<Option<Value>, LeagueError> {
                if even_odd {
                    read_choice(reply, checker)
                } else {
                    Ok(reply.get("move_payload").filter(|v| v.is_object()).cloned())
                }
            };
        let mut reply = as_object(result);
        let mut answer = read(&reply, &mut checker).map_err(to_status)?;
        if answer.is_none() {
            let left = limit.saturating_sub(started.elapsed());
            let separate = super::overhead::waiting(waiter.reply(left))
                .await
                .ok_or_else(|| {
                    error_code::status(
                        ErrorCode::Timeout,
                        format!("no {} within the deadline", reply_kind.as_str()),
                    )
                })?;
            answer = read(&separate, &mut checker).map_err(to_status)?;
            reply = separate;
        }
        check_reply(&reply, &player_id, &mut checker).map_err(to_status)?;
        self.warnings
            .record(agent.agent_id.as_str(), checker.into_deviations());
        let move_payload = match answer {
            Some(choice) if even_odd => {
                let mut payload = Map::new();
                payload.insert("parity_choice".into(), choice);
                convert::to_struct(&payload)
            }
            Some(Value::Object(payload)) => convert::to_struct(&payload),
            // No choice at all: an empty move, which the game refuses with its own code (E004/E010).
            _ => prost_types::Struct::default(),
        };
        Ok(Response::new(RequestMoveResponse {
            move_payload: Some(move_payload),
        }))
    }

    async fn notify_game_over(
        &self,
        request: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, Status> {
        let request = request.into_inner();
        let Called { player_id, context } = Called::parse(request.context, request.player_id)?;
        let agent = self.agent(&player_id).await?;
        let result = required(request.result, "result")?;
        let message = Self::to_player(
            MessageType::GameOver,
            &context,
            match_calls::GameOver {
                in_match: InMatch::new(&context, &player_id),
                game_result: convert::game_result(&result),
            },
        );
        self.notify(&agent, MessageType::GameOver, &message, self.timeouts.game_over)
            .await?;
        Ok(Response::new(NotifyGameOverResponse {}))
    }

    async fn notify_game_error(
        &self,
        request: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, Status> {
        let request = request.into_inner();
        let Called { player_id, context } = Called::parse(request.context, request.player_id)?;
        let agent = self.agent(&player_id).await?;
        let message = envelope::message(
            MessageType::GameError.as_str(),
            &Self::referee_sender(&context),
            &context.conversation_id,
            json!({
                "league_id": context.league_id,
                "round_id": context.round_id,
                "match_id": context.match_id,
                "player_id": player_id,
                "error_code": request.error_code,
                "error_description": request.error_description,
                "affected_player": request.affected_player,
                "action_required": request.action_required,
                "retry_info": {"retry_count": request.retry_count, "max_retries": request.max_retries},
                "consequence": request.consequence,
                // The same counts flat, as agents written before `retry_info` read them.
                "retry_count": request.retry_count,
                "max_retries": request.max_retries,
            }),
        );
        self.notify(&agent, MessageType::GameError, &message, self.timeouts.other)
            .await?;
        Ok(Response::new(NotifyGameErrorResponse {}))
    }

    async fn notify_league_event(
        &self,
        request: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, Status> {
        let mut event = request.into_inner();
        let player_id: PlayerId =
            ids::taken("player_id", std::mem::take(&mut event.player_id)).map_err(to_status)?;
        let (kind, message) = event_message(&self.public_url, &event)?;
        self.send_event(&player_id, kind, &message).await?;
        Ok(Response::new(NotifyLeagueEventResponse {}))
    }

    async fn notify_league_events(
        &self,
        request: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
        // Each event is converted once, for all its recipients (a round's table, for a hundred players,
        // was converted a hundred times), and written for each with its sender and token
        // (league_v2::addressed), never copied. Different agents are called side by side, a few at a time
        // (crate::bridge::event_slots: game calls go first); one agent's events stay in order.
        let deliveries = request.into_inner().deliveries;
        let messages: Vec<Option<(MessageType, Value)>> = deliveries
            .iter()
            .map(|delivery| {
                let event = delivery.event.as_ref()?;
                event_message(&self.public_url, event).ok()
            })
            .collect();
        let mut by_player: Vec<(&str, Vec<(usize, Option<&(MessageType, Value)>)>)> = Vec::new();
        let recipients = deliveries.iter().zip(&messages).flat_map(|(delivery, message)| {
            delivery
                .player_ids
                .iter()
                .map(move |player_id| (player_id.as_str(), message.as_ref()))
        });
        // Each player's place in `by_player`: a round's events go to every player (500 at 500 players).
        let mut places: HashMap<&str, usize> = HashMap::new();
        for (index, (player_id, message)) in recipients.enumerate() {
            match places.get(player_id) {
                Some(&place) => by_player[place].1.push((index, message)),
                None => {
                    places.insert(player_id, by_player.len());
                    by_player.push((player_id, vec![(index, message)]));
                }
            }
        }
        let total = by_player.iter().map(|(_, messages)| messages.len()).sum();
        let outcomes = join_all(by_player.into_iter().map(|(named, messages)| async move {
            // Parsed once for all its events; one that is no player id (the manager never names one)
            // is delivered nothing.
            let player_id = PlayerId::parse(named)
                .inspect_err(|error| tracing::warn!(%error, "a league event for no player; not delivered"))
                .ok();
            let mut delivered = Vec::with_capacity(messages.len());
            let mut failed = false;
            for (index, message) in messages {
                // After a failure the rest of this agent's events wait for the next attempt, in order; a
                // delivery without a usable event is taken by nobody.
                let ok = !failed
                    && match (message, &player_id) {
                        (Some((kind, message)), Some(player_id)) => {
                            self.send_event(player_id, *kind, message).await.is_ok()
                        }
                        _ => false,
                    };
                failed |= !ok;
                delivered.push((index, ok));
            }
            delivered
        }))
        .await;
        let mut accepted = vec![false; total];
        for (index, ok) in outcomes.into_iter().flatten() {
            accepted[index] = ok;
        }
        Ok(Response::new(NotifyLeagueEventsResponse { accepted }))
    }

    type MatchCallsStream = MatchCallAnswers;

    /// Each call through its handler above, all at once, each answer as soon as it is ready: the agent
    /// still gets each message as its own league.v2 call.
    async fn match_calls(
        &self,
        request: Request<MatchCallsRequest>,
    ) -> Result<Response<MatchCallAnswers>, Status> {
        answer_match_calls(Arc::new(self.clone()), request.into_inner())
    }
}

impl PlayerBridge {
    /// Sends a league event's `message` to `player_id`.
    async fn send_event(
        &self,
        player_id: &PlayerId,
        kind: MessageType,
        message: &Value,
    ) -> Result<(), Status> {
        let agent = self.agent(player_id).await?;
        self.event_slots
            .deliver(self.notify(&agent, kind, message, self.timeouts.other))
            .await
    }
}

/// A league event's message, the same for every recipient: the league's sender, no token (the bridge
/// adds both for each agent). `referee_endpoint`: where the schedule tells agents to send replies.
fn event_message(
    referee_endpoint: &str,
    event: &NotifyLeagueEventRequest,
) -> Result<(MessageType, Value), Status> {
    let Some(body) = &event.event else {
        return Err(error_code::status(
            ErrorCode::MissingRequiredField,
            "event missing",
        ));
    };
    // Every player gets the same schedule and table: converted once, written into each message as they
    // are (league_v2::convert::shared_*, league_v2::shared_json), and moved in rather than copied by `json!`.
    let (kind, fields) = match body {
        Event::RoundAnnouncement(round) => (
            MessageType::RoundAnnouncement,
            jsonrpc::object([
                ("round_id", round.round_id.into()),
                ("matches", convert::shared_matches(&round.matches, referee_endpoint)),
            ]),
        ),
        Event::StandingsUpdate(update) => (
            MessageType::LeagueStandingsUpdate,
            jsonrpc::object([
                ("round_id", update.round_id.into()),
                ("standings", convert::shared_standings(&update.standings)),
            ]),
        ),
        Event::RoundCompleted(done) => (
            MessageType::RoundCompleted,
            json!({
                "round_id": done.round_id,
                "matches_completed": done.matches_completed,
                "next_round_id": if done.next_round_id == 0 { Value::Null } else { done.next_round_id.into() },
                "summary": done.summary.as_ref().map(|s| json!({
                    "total_matches": s.total_matches, "wins": s.wins, "draws": s.draws,
                    "technical_losses": s.technical_losses,
                })),
            }),
        ),
        Event::LeagueCompleted(done) => (
            MessageType::LeagueCompleted,
            jsonrpc::object([
                ("total_rounds", done.total_rounds.into()),
                ("total_matches", done.total_matches.into()),
                (
                    "champion",
                    done.champion.as_ref().map_or(Value::Null, |c| {
                        json!({"player_id": c.player_id, "display_name": c.display_name, "points": c.points})
                    }),
                ),
                ("final_standings", convert::shared_standings(&done.final_standings)),
            ]),
        ),
    };
    let mut message = envelope::message(kind.as_str(), sender::MANAGER, &event.event_id, fields);
    message["league_id"] = event.league_id.as_str().into();
    Ok((kind, message))
}
