//! GAME_JOIN_ACK, CHOOSE_PARITY_RESPONSE and GAME_MOVE_RESPONSE sent as separate calls: authenticated,
//! then handed to the bridge call waiting for them — on this replica, or through the manager's relay on
//! whichever replica made the call. A reply nobody can be waiting for (unknown match, not the sender's
//! match, match not running) is refused and changes nothing.

use league_domain::{AgentId, MatchId, MessageType};
use league_manager_link::league_status::to_league_error;
use league_proto::ErrorCode;
use league_proto::v2::{MatchStatus, RelayReplyRequest, RelayedReply};
use league_v2::compliance::Checker;
use league_v2::ids;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::sender;
use serde_json::{Map, Value, json};

use super::{Handled, HttpContext, Inbound};
use crate::bridge::replies::reply_key;

pub(crate) async fn deliver(
    inbound: &Inbound,
    kind: MessageType,
    message: &Map<String, Value>,
    checker: &mut Checker,
    http: &HttpContext,
) -> LeagueResult<Handled> {
    // The token travels in the message; a bearer header is not read for replies.
    let http = HttpContext {
        bearer: None,
        player_path: None,
        ..http.clone()
    };
    let (agent, envelope) = inbound.authenticated(message, checker, &http).await?;
    let match_id: MatchId = ids::required(message, "match_id")?;
    let key = reply_key(kind, match_id, &agent.agent_id);
    let mut reply = message.clone();
    // What the bridge needs to know about the sender travels with the reply; the token does not.
    reply.remove("auth_token");
    reply.insert(
        "conversation_id".into(),
        envelope
            .conversation_id
            .clone()
            .map_or(Value::Null, Value::String),
    );
    if !inbound.replies.deliver(&key, reply.clone()) {
        check_match(inbound, match_id, &agent.agent_id).await?;
        let relayed = RelayedReply {
            key,
            message_json: Value::Object(reply).to_string(),
        };
        inbound
            .manager_link
            .agents
            .clone()
            .relay_reply(
                inbound
                    .manager_link
                    .as_operator(RelayReplyRequest { reply: Some(relayed) }),
            )
            .await
            .map_err(to_league_error)?;
    }
    // Only the three replies reach here (crate::inbound's dispatch); any other kind is answered as
    // itself rather than with a made-up name.
    let acknowledgement = kind.received().unwrap_or(kind);
    Ok(Handled {
        result: league_v2::envelope::message(
            acknowledgement.as_str(),
            sender::MANAGER,
            envelope.conversation_id.as_deref().unwrap_or_default(),
            json!({"status": "received", "match_id": match_id.to_string()}),
        ),
        agent_id: Some(agent.agent_id),
    })
}

/// The match must exist, be running, and be the sender's.
async fn check_match(inbound: &Inbound, match_id: MatchId, agent_id: &AgentId) -> LeagueResult<()> {
    let scheduled = inbound
        .manager_link
        .scheduled_match(None, match_id)
        .await
        .map_err(to_league_error)?;
    if scheduled.player_a_id != agent_id.as_str() && scheduled.player_b_id != agent_id.as_str() {
        return Err(LeagueError::new(
            ErrorCode::PermissionDenied,
            format!("{agent_id} does not play in match {match_id}"),
        ));
    }
    if scheduled.status != MatchStatus::Running as i32 {
        return Err(LeagueError::new(
            ErrorCode::InvalidLeagueState,
            format!("match {match_id} is not waiting for replies"),
        ));
    }
    Ok(())
}
