//! Handing a claimed match to a referee that takes pushes: START_MATCH, through the bridge
//! ([`super::agents`]), which sends it by every name real referees answer to, retried as the protocol
//! retries. A referee that knows none of them takes its matches by pulling ([`super::pull`]).
//!
//! The match's fields are the same whether pushed or pulled ([`match_fields`]).

use std::time::{Duration, SystemTime};

use league_domain::{Assignment, MessageType, Timing};
use league_proto::v2::{AssignedPlayer, ScheduledMatch};
use league_v2::{envelope, sender, timestamp};
use serde_json::{Map, Value, json};

use super::Referees;
use super::agents::Unanswered;

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
    pub(super) async fn push(&self, referee_id: &str, assignment: &Assignment) -> Pushed {
        let match_id = assignment.match_id();
        let message = envelope::message(
            MessageType::StartMatch.as_str(),
            sender::MANAGER,
            &format!("conv-{}-{match_id}", assignment.league_id()),
            Value::Object(self.match_fields(
                referee_id,
                &assignment.scheduled,
                &assignment.players,
                assignment.timing,
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
    /// league's timings, and the deadline of the whole match.
    pub(super) fn match_fields(
        &self,
        referee_id: &str,
        scheduled: &ScheduledMatch,
        players: &[AssignedPlayer; 2],
        timing: Timing,
    ) -> Map<String, Value> {
        let budget = timing.match_budget();
        let player = |seat: &str, player: &AssignedPlayer| {
            // A player with no record yet has played nothing.
            let record = player.record.unwrap_or_default();
            json!({
                "player_id": player.player_id,
                "display_name": player.display_name,
                "role_in_match": seat,
                "contact_endpoint": self.player_url(&player.player_id),
                "standings": {"wins": record.wins, "draws": record.draws, "losses": record.losses},
            })
        };
        let fields = json!({
            "league_id": scheduled.league_id,
            "round_id": scheduled.round_id,
            "match_id": scheduled.match_id,
            "game_type": scheduled.game_type,
            "referee_id": referee_id,
            "player_a_id": scheduled.player_a_id,
            "player_b_id": scheduled.player_b_id,
            // The names referees of the field index, pushed or pulled (`params["player_A_id"]`).
            "player_A_id": scheduled.player_a_id,
            "player_B_id": scheduled.player_b_id,
            "player_a_endpoint": self.player_url(&scheduled.player_a_id),
            "player_b_endpoint": self.player_url(&scheduled.player_b_id),
            // And as the field's referees index them (`params["player_A_endpoint"]`).
            "player_A_endpoint": self.player_url(&scheduled.player_a_id),
            "player_B_endpoint": self.player_url(&scheduled.player_b_id),
            "players": [
                player("PLAYER_A", &players[0]),
                player("PLAYER_B", &players[1]),
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
