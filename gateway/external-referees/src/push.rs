//! Handing a claimed match to a referee that takes pushes: START_MATCH, through the bridge
//! ([`super::agents`]), which sends it by every name real referees answer to, retried as the protocol
//! retries. A referee that knows none of them takes its matches by pulling ([`super::pull`]).
//!
//! The match's fields are the same whether pushed or pulled ([`match_fields`]).

use std::time::{Duration, SystemTime};

use league_domain::{Assignment, MessageType, PlayerId, RefereeId};
use league_proto::v2::AssignedPlayer;
use league_v2::{envelope, sender, timestamp};
use serde_json::{Map, Value, json};

use super::agents::Unanswered;
use super::{RefereedMatch, Referees};

/// What a referee did with a pushed match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    Taken,
    /// Refused, failed, or could not be reached.
    NotTaken,
    /// It answers no name of START_MATCH: it pulls.
    NoSuchMethod,
}

impl Referees {
    /// START_MATCH, retried as the protocol retries (E001/E009, `max_attempts`, `retry_delay` apart).
    pub(super) async fn push(&self, referee_id: &RefereeId, assignment: &Assignment) -> Pushed {
        let match_id = assignment.match_id();
        let message = envelope::message(
            MessageType::StartMatch.as_str(),
            sender::MANAGER,
            &format!("conv-{}-{match_id}", assignment.league_id()),
            Value::Object(self.match_fields(
                referee_id,
                &RefereedMatch::assigned(assignment, referee_id),
                &assignment.players,
            )),
        );
        let timing = assignment.timing;
        let attempts = timing.max_attempts;
        for attempt in 1..=attempts {
            match self.agents.start_match(referee_id, &message).await {
                Ok(answer) if refused(&answer) => {
                    tracing::warn!(%referee_id, %match_id, %answer, "the referee declined the match");
                    return Pushed::NotTaken;
                }
                Ok(_) => {
                    tracing::debug!(%referee_id, %match_id, "external referee started the match");
                    return Pushed::Taken;
                }
                Err(Unanswered::NoSuchMethod) => return Pushed::NoSuchMethod,
                Err(Unanswered::Failed { retryable: true, why }) if attempt < attempts => {
                    tracing::debug!(%referee_id, error = %why, attempt, "START_MATCH failed; retrying");
                    tokio::time::sleep(timing.retry_delay).await;
                }
                Err(Unanswered::Failed { why, .. }) => {
                    tracing::warn!(%referee_id, %match_id, error = %why, "the referee did not take the match");
                    return Pushed::NotTaken;
                }
            }
        }
        Pushed::NotTaken
    }

    /// What a referee needs to run the match (START_MATCH's fields; one entry of `get_assigned_matches`):
    /// the ids (the players' both as `player_a_id` and as `player_A_id`: referees read either), each
    /// player's endpoint on this gateway (`player_a_endpoint` and `player_A_endpoint`) with its record so far, where to report, the
    /// league's timings, and the deadline of the whole match. `players`: what the manager told of each
    /// player, seat A first (name, record), if anything.
    pub(super) fn match_fields(
        &self,
        referee_id: &RefereeId,
        found: &RefereedMatch,
        players: &[AssignedPlayer; 2],
    ) -> Map<String, Value> {
        let timing = found.timing;
        let budget = timing.match_budget();
        let (player_a, player_b) = (&found.player_a, &found.player_b);
        let player = |seat: &str, player_id: &PlayerId, player: &AssignedPlayer| {
            // A player with no record yet has played nothing.
            let record = player.record.unwrap_or_default();
            json!({
                "player_id": player_id,
                "display_name": player.display_name,
                "role_in_match": seat,
                "contact_endpoint": self.player_url(player_id),
                "standings": {"wins": record.wins, "draws": record.draws, "losses": record.losses},
            })
        };
        let fields = json!({
            "league_id": found.league_id,
            "round_id": found.round_id,
            "match_id": found.match_id,
            "game_type": found.game_type,
            "referee_id": referee_id,
            "player_a_id": player_a,
            "player_b_id": player_b,
            // The names referees of the field index, pushed or pulled (`params["player_A_id"]`).
            "player_A_id": player_a,
            "player_B_id": player_b,
            "player_a_endpoint": self.player_url(player_a),
            "player_b_endpoint": self.player_url(player_b),
            // And as the field's referees index them (`params["player_A_endpoint"]`).
            "player_A_endpoint": self.player_url(player_a),
            "player_B_endpoint": self.player_url(player_b),
            "players": [
                player("PLAYER_A", player_a, &players[0]),
                player("PLAYER_B", player_b, &players[1]),
            ],
            "report_endpoint": self.public_url,
            "timing": {
                "join_timeout_ms": millis(timing.join_timeout),
                "move_timeout_ms": millis(timing.move_timeout),
                "game_over_timeout_ms": millis(timing.game_over_timeout),
                "max_attempts": timing.max_attempts,
                "retry_delay_ms": millis(timing.retry_delay),
            },
            "deadline": timestamp::format(SystemTime::now() + budget),
        });
        match fields {
            Value::Object(fields) => fields,
            _ => Map::new(),
        }
    }
}

/// Milliseconds for the wire (`timing.move_timeout_ms`…).
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A START_MATCH answer that says no (`status` REJECTED/DECLINED, or `accept: false`).
fn refused(answer: &Value) -> bool {
    let status = answer
        .get("status")
        .and_then(Value::as_str)
        .map(str::to_ascii_uppercase);
    matches!(
        status.as_deref(),
        Some("REJECTED" | "DECLINED" | "REFUSED" | "BUSY")
    ) || answer.get("accept").and_then(Value::as_bool) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_told_apart_from_acknowledgements() {
        assert!(!refused(
            &json!({"message_type": "START_MATCH_ACK", "status": "MATCH_STARTED"})
        ));
        assert!(!refused(&json!({"status": "ok"})));
        assert!(!refused(&json!({})));
        assert!(refused(&json!({"status": "rejected", "reason": "busy"})));
        assert!(refused(&json!({"accept": false})));
    }
}
