//! The transcript of an external referee's match as this gateway replica relayed it: every call the
//! referee made to a player through `/mcp/players/…` (`TO_PLAYER`, its type and attempt, without its
//! content) and every answer the player gave (`FROM_PLAYER`: GAME_JOIN_ACK, CHOOSE_PARITY_RESPONSE /
//! GAME_MOVE_RESPONSE with what the player said, or the failure's `error_code` with `{"error": "…"}`),
//! each timestamped with this replica's clock: the same entries our referees write
//! (services/referee/src/runner/transcript.rs). It holds no state transitions: the referee's own states
//! never pass through the gateway.
//!
//! It goes to the manager with the referee's report, which stores it as our referees' transcripts are
//! stored, and the report is checked against the answers in it ([`super::answers`]). Only the replica
//! that relayed the calls holds it (docs/protocol.md, "Reporting a result").
//!
//! Bounded: at most [`MAX_MATCHES`] matches are kept, each up to [`MAX_BYTES`] of payloads and
//! [`MAX_ENTRIES`] entries (an Even/Odd match takes about ten); past that, further entries are dropped
//! with a warning. A match's transcript is forgotten once it is reported or given back.

use std::collections::HashMap;
use std::time::SystemTime;

use league_domain::even_odd::Parity;
use league_domain::{LeagueId, MatchId, PlayerId, RefereeId};
use league_proto::v2::transcript_entry::Entry;
use league_proto::v2::{Direction, MatchTranscript, MessageRecord, TranscriptEntry};
use league_v2::convert;
use serde_json::{Value, json};

use super::{RefereedMatch, Referees, lock};

/// Matches whose transcript one replica keeps at once (a full map is cleared, as the other caches are).
pub(super) const MAX_MATCHES: usize = 4_096;
/// Entries kept per match.
pub(super) const MAX_ENTRIES: usize = 256;
/// Bytes of payload (as JSON) kept per match.
pub(super) const MAX_BYTES: usize = 16 * 1024;

/// (league, match, referee): one referee's match.
pub(super) type RefereesMatch = (LeagueId, MatchId, RefereeId);

/// What was relayed for one match so far.
#[derive(Debug, Default, Clone)]
pub(super) struct Relayed {
    entries: Vec<TranscriptEntry>,
    bytes: usize,
    /// Set once an entry was dropped for the bounds, so the warning is logged once.
    full: bool,
}

impl Relayed {
    /// Each player's last valid parity choice (the answer the game takes), by player.
    pub(super) fn answers(&self) -> HashMap<PlayerId, Parity> {
        let mut answers = HashMap::new();
        for entry in &self.entries {
            let Some(Entry::Message(record)) = &entry.entry else {
                continue;
            };
            if record.direction() != Direction::FromPlayer
                || record.message_type != league_domain::MessageType::ChooseParityResponse.as_str()
                || !record.error_code.is_empty()
            {
                continue;
            }
            let choice = record
                .payload
                .as_ref()
                .map(convert::from_struct)
                .and_then(|payload| {
                    payload
                        .get("parity_choice")
                        .and_then(Value::as_str)
                        .and_then(Parity::parse)
                });
            // Written here from a player's id ([`Referees::relayed`]), so it parses.
            if let (Some(choice), Ok(player_id)) = (choice, PlayerId::parse(&record.player_id)) {
                answers.insert(player_id, choice);
            }
        }
        answers
    }

    fn push(&mut self, record: MessageRecord, payload_bytes: usize) -> bool {
        if self.entries.len() >= MAX_ENTRIES || self.bytes + payload_bytes > MAX_BYTES {
            let first = !self.full;
            self.full = true;
            return first;
        }
        self.bytes += payload_bytes;
        self.entries.push(TranscriptEntry {
            at: Some(SystemTime::now().into()),
            entry: Some(Entry::Message(record)),
        });
        false
    }
}

/// One relayed message: who, which type, which attempt, what it carried, and the failure's code.
pub(super) struct Relay<'a> {
    pub direction: Direction,
    pub player_id: &'a PlayerId,
    pub message_type: &'a str,
    pub attempt: u32,
    pub payload: Option<Value>,
    pub error_code: Option<league_proto::ErrorCode>,
}

/// `{"error": description}`, the payload of an answer that did not come.
pub(super) fn failure(description: &str) -> Value {
    let cut: String = description.chars().take(200).collect();
    json!({ "error": cut })
}

impl Referees {
    /// Adds `relay` to the transcript of `found` as its referee plays it through this replica.
    pub(super) fn relayed(&self, found: &RefereedMatch, relay: Relay<'_>) {
        let payload_bytes = relay.payload.as_ref().map_or(0, |p| p.to_string().len());
        let record = MessageRecord {
            direction: relay.direction.into(),
            player_id: relay.player_id.to_string(),
            message_type: relay.message_type.to_owned(),
            attempt: relay.attempt,
            payload: relay
                .payload
                .as_ref()
                .and_then(Value::as_object)
                .map(convert::to_struct),
            error_code: relay
                .error_code
                .map(|code| code.code().to_owned())
                .unwrap_or_default(),
        };
        // Relayed only for the referee holding the match (crate::to_player): there is one.
        let Some(referee_id) = &found.referee_id else {
            return;
        };
        let key = (found.league_id.clone(), found.match_id, referee_id.clone());
        let mut transcripts = lock(&self.relayed);
        if transcripts.len() >= MAX_MATCHES && !transcripts.contains_key(&key) {
            transcripts.clear();
        }
        if transcripts.entry(key).or_default().push(record, payload_bytes) {
            tracing::warn!(match_id = %found.match_id, %referee_id,
                "an external referee's match passed the transcript's bounds here: later entries are not kept");
        }
    }

    /// What was relayed for `found` through this replica (empty when nothing was).
    pub(super) fn relayed_so_far(&self, found: &RefereedMatch) -> Relayed {
        key(found)
            .and_then(|key| lock(&self.relayed).get(&key).cloned())
            .unwrap_or_default()
    }

    /// The transcript to report with `found`'s result: `None` when nothing of it passed here.
    pub(super) fn relayed_transcript(&self, found: &RefereedMatch) -> Option<MatchTranscript> {
        let relayed = self.relayed_so_far(found);
        (!relayed.entries.is_empty()).then(|| MatchTranscript {
            match_id: found.match_id.to_string(),
            entries: relayed.entries,
        })
    }

    /// Forgets what was relayed for a match (reported, or given back).
    pub(super) fn forget_relayed(&self, league_id: &LeagueId, match_id: MatchId) {
        lock(&self.relayed).retain(|(league, id, _), _| league != league_id || *id != match_id);
    }
}

/// `found` and the referee holding it, if one does.
fn key(found: &RefereedMatch) -> Option<RefereesMatch> {
    let referee_id = found.referee_id.clone()?;
    Some((found.league_id.clone(), found.match_id, referee_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(player: &str, choice: &str, error: Option<league_proto::ErrorCode>) -> MessageRecord {
        MessageRecord {
            direction: Direction::FromPlayer.into(),
            player_id: player.into(),
            message_type: "CHOOSE_PARITY_RESPONSE".into(),
            attempt: 1,
            payload: json!({"parity_choice": choice})
                .as_object()
                .map(convert::to_struct),
            error_code: error.map(|c| c.code().to_owned()).unwrap_or_default(),
        }
    }

    #[test]
    fn the_answers_are_each_player_s_last_valid_choice() {
        let mut relayed = Relayed::default();
        relayed.push(answer("P01", "even", None), 10);
        relayed.push(answer("P01", "EVEN?", None), 10);
        relayed.push(answer("P02", "odd", Some(league_proto::ErrorCode::Timeout)), 10);
        relayed.push(answer("P02", "even", None), 10);
        let answers = relayed.answers();
        assert_eq!(answers.get("P01"), Some(&Parity::Even));
        assert_eq!(answers.len(), 2);
        assert_eq!(answers.get("P02"), Some(&Parity::Even));
        assert_eq!(relayed.entries.len(), 4);
        assert!(relayed.entries.iter().all(|entry| entry.at.is_some()));
    }

    #[test]
    fn a_match_keeps_no_more_than_its_bounds() {
        let mut relayed = Relayed::default();
        let mut warned = 0;
        for _ in 0..MAX_ENTRIES + 10 {
            warned += usize::from(relayed.push(answer("P01", "odd", None), 1));
        }
        assert_eq!(relayed.entries.len(), MAX_ENTRIES);
        assert_eq!(warned, 1, "the bound is logged once");
        let mut big = Relayed::default();
        assert!(!big.push(answer("P01", "odd", None), MAX_BYTES));
        assert!(big.push(answer("P02", "odd", None), 1));
        assert_eq!(big.entries.len(), 1);
    }
}
