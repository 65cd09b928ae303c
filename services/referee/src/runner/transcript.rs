//! A match's live progress: its current state and its transcript so far, shared between the runner that
//! writes them and whoever watches the match (the worker's registry, `RefereeService`).
//!
//! What the transcript records (every entry is timestamped with the wall clock):
//! - every state transition, starting with UNSPECIFIED → WAITING_FOR_PLAYERS when the referee takes the
//!   match;
//! - every request the referee sends (`TO_PLAYER`: GAME_INVITATION, CHOOSE_PARITY_CALL / GAME_MOVE_CALL,
//!   GAME_ERROR, GAME_OVER), with its attempt and what it carried; a GAME_ERROR record carries the code
//!   it notifies in `error_code`;
//! - every answer (`FROM_PLAYER`: GAME_JOIN_ACK, CHOOSE_PARITY_RESPONSE / GAME_MOVE_RESPONSE) with its
//!   payload — a move the game then refuses is recorded as received, and the GAME_ERROR that follows
//!   says why;
//! - every answer that did not come: a `FROM_PLAYER` record of the expected reply type (for GAME_ERROR
//!   and GAME_OVER, which have no league.v2 reply, the notification's own type) with the failure's
//!   `error_code` (E001 timeout, E009 connection…) and `{"error": "…"}` as payload.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use prost::Message;

use league_proto::v2::{
    self, Direction, MatchTranscript, MessageRecord, StateTransition, TranscriptEntry, transcript_entry,
};

use crate::match_state::MatchState;

/// A match's state and transcript so far. Cheap to clone; clones share the same match.
#[derive(Debug, Clone, Default)]
pub struct MatchProgress {
    inner: Arc<Mutex<Progress>>,
}

#[derive(Debug, Default)]
struct Progress {
    state: MatchState,
    entries: Vec<TranscriptEntry>,
}

impl MatchProgress {
    /// A match waiting for its players, with an empty transcript.
    pub fn new() -> MatchProgress {
        MatchProgress::default()
    }

    pub fn state(&self) -> MatchState {
        self.lock().state
    }

    /// The transcript so far.
    pub fn transcript(&self, match_id: &str) -> MatchTranscript {
        MatchTranscript {
            match_id: match_id.to_owned(),
            entries: self.lock().entries.clone(),
        }
    }

    /// Appends the transcript so far to `buf`, length-delimited (as a message field's value is), without
    /// copying it: its entries are lent to the encoding and put back.
    pub(crate) fn encode_transcript(&self, match_id: &str, buf: &mut Vec<u8>) {
        let mut progress = self.lock();
        let transcript = MatchTranscript {
            match_id: match_id.to_owned(),
            entries: std::mem::take(&mut progress.entries),
        };
        // Encoding into a Vec cannot run out of room.
        let _ = transcript.encode_length_delimited(buf);
        progress.entries = transcript.entries;
    }

    /// The opening entry: UNSPECIFIED → WAITING_FOR_PLAYERS.
    pub(crate) fn start(&self, reason: String) {
        let mut progress = self.lock();
        progress.state = MatchState::WaitingForPlayers;
        progress.entries.push(state_entry(
            v2::MatchState::Unspecified,
            MatchState::WaitingForPlayers.into(),
            reason,
        ));
    }

    /// Moves the match to `to`. An illegal move is a bug in the runner: it is logged and made anyway, so
    /// the transcript shows what happened.
    pub(crate) fn transition(&self, to: MatchState, reason: String) {
        let mut progress = self.lock();
        let from = progress.state;
        if let Err(illegal) = from.advance(to) {
            tracing::error!(%illegal, "match runner made an illegal state transition");
        }
        progress.state = to;
        progress.entries.push(state_entry(from.into(), to.into(), reason));
    }

    pub(crate) fn message(&self, record: MessageRecord) {
        self.lock().entries.push(TranscriptEntry {
            at: Some(now()),
            entry: Some(transcript_entry::Entry::Message(record)),
        });
    }

    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn state_entry(from: v2::MatchState, to: v2::MatchState, reason: String) -> TranscriptEntry {
    TranscriptEntry {
        at: Some(now()),
        entry: Some(transcript_entry::Entry::StateTransition(StateTransition {
            from: from.into(),
            to: to.into(),
            reason,
        })),
    }
}

/// The wall clock as a protobuf timestamp.
pub(crate) fn now() -> prost_types::Timestamp {
    SystemTime::now().into()
}

/// A message record; `error_code` empty when the exchange succeeded.
pub(crate) fn message(
    direction: Direction,
    player_id: &str,
    message_type: &str,
    attempt: u32,
    payload: Option<prost_types::Struct>,
    error_code: Option<league_proto::ErrorCode>,
) -> MessageRecord {
    MessageRecord {
        direction: direction.into(),
        player_id: player_id.to_owned(),
        message_type: message_type.to_owned(),
        attempt,
        payload,
        error_code: error_code.map(|code| code.code().to_owned()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use league_domain::MessageType;

    use super::*;

    #[test]
    fn progress_records_transitions_in_order() {
        let progress = MatchProgress::new();
        progress.start("taken".into());
        progress.transition(MatchState::CollectingChoices, "joined".into());
        progress.message(message(
            Direction::ToPlayer,
            "P01",
            MessageType::ChooseParityCall.as_str(),
            1,
            None,
            None,
        ));
        progress.transition(MatchState::Aborted, "P01 did not answer".into());
        assert_eq!(progress.state(), MatchState::Aborted);
        let transcript = progress.transcript("R1M1");
        assert_eq!(transcript.match_id, "R1M1");
        let transitions: Vec<_> = transcript
            .entries
            .iter()
            .filter_map(|entry| match &entry.entry {
                Some(transcript_entry::Entry::StateTransition(t)) => Some((t.from(), t.to())),
                _ => None,
            })
            .collect();
        assert_eq!(
            transitions,
            [
                (v2::MatchState::Unspecified, v2::MatchState::WaitingForPlayers),
                (
                    v2::MatchState::WaitingForPlayers,
                    v2::MatchState::CollectingChoices
                ),
                (v2::MatchState::CollectingChoices, v2::MatchState::Aborted),
            ]
        );
        assert_eq!(transcript.entries.len(), 4);
        assert!(transcript.entries.iter().all(|entry| entry.at.is_some()));
    }
}
