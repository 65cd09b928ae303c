//! A scheduled match and a transcript's entries as a results folder's transcript files hold them: the
//! proto3 JSON of [`super::to_json`] with every object's keys in alphabetical order, the order
//! `serde_json::Value` (a sorted map: serde_json's `preserve_order` is off) wrote them in when the files
//! were written through reflection and `Value`. Written here straight to text in that order, with the
//! stored records' own field writers ([`super::records`]); the derived serializers write the contracts'
//! order instead, which would change every file. The tests hold the text to reflection's, byte for byte.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use super::records::{PlainStruct, Rfc3339};
use crate::v2::transcript_entry::Entry;
use crate::v2::{
    Direction, MatchResult, MatchState, MatchStatus, MessageRecord, ResultStatus, ScheduledMatch,
    StateTransition, TranscriptEntry,
};

/// A record whose JSON has its keys in alphabetical order (a [`ScheduledMatch`] or a
/// [`TranscriptEntry`], and what they hold).
#[derive(Debug, Clone, Copy)]
pub struct Alphabetical<'a, T>(pub &'a T);

impl Serialize for Alphabetical<'_, ScheduledMatch> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let scheduled = self.0;
        let status = MatchStatus::try_from(scheduled.status).map(|status| status.as_str_name());
        let mut object = serializer.serialize_struct("ScheduledMatch", 12)?;
        if let Some(at) = &scheduled.finished_at {
            object.serialize_field("finished_at", &Rfc3339(at))?;
        }
        object.serialize_field("game_type", &scheduled.game_type)?;
        object.serialize_field("league_id", &scheduled.league_id)?;
        object.serialize_field("match_id", &scheduled.match_id)?;
        object.serialize_field("player_a_id", &scheduled.player_a_id)?;
        object.serialize_field("player_b_id", &scheduled.player_b_id)?;
        object.serialize_field("referee_id", &scheduled.referee_id)?;
        if let Some(result) = &scheduled.result {
            object.serialize_field("result", &Alphabetical(result))?;
        }
        object.serialize_field("round_id", &scheduled.round_id)?;
        if let Some(at) = &scheduled.started_at {
            object.serialize_field("started_at", &Rfc3339(at))?;
        }
        object.serialize_field("status", &Named(scheduled.status, status.ok()))?;
        object.serialize_field("technical_loss_cause", &scheduled.technical_loss_cause)?;
        object.end()
    }
}

impl Serialize for Alphabetical<'_, MatchResult> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let result = self.0;
        let status = ResultStatus::try_from(result.status).map(|status| status.as_str_name());
        let mut object = serializer.serialize_struct("MatchResult", 7)?;
        object.serialize_field("at_fault_player_ids", &result.at_fault_player_ids)?;
        if let Some(metadata) = &result.game_metadata {
            object.serialize_field("game_metadata", &PlainStruct(metadata))?;
        }
        object.serialize_field("match_id", &result.match_id)?;
        object.serialize_field("reason", &result.reason)?;
        // A score's fields, `player_id` and `points`, are in that order already.
        object.serialize_field("scores", &result.scores)?;
        object.serialize_field("status", &Named(result.status, status.ok()))?;
        object.serialize_field("winner_player_id", &result.winner_player_id)?;
        object.end()
    }
}

impl Serialize for Alphabetical<'_, TranscriptEntry> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entry = self.0;
        let mut object = serializer.serialize_struct("TranscriptEntry", 2)?;
        if let Some(at) = &entry.at {
            object.serialize_field("at", &Rfc3339(at))?;
        }
        match &entry.entry {
            Some(Entry::Message(message)) => object.serialize_field("message", &Alphabetical(message))?,
            Some(Entry::StateTransition(transition)) => {
                object.serialize_field("state_transition", &Alphabetical(transition))?
            }
            None => {}
        }
        object.end()
    }
}

impl Serialize for Alphabetical<'_, MessageRecord> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.0;
        let direction = Direction::try_from(message.direction).map(|direction| direction.as_str_name());
        let mut object = serializer.serialize_struct("MessageRecord", 6)?;
        object.serialize_field("attempt", &message.attempt)?;
        object.serialize_field("direction", &Named(message.direction, direction.ok()))?;
        object.serialize_field("error_code", &message.error_code)?;
        object.serialize_field("message_type", &message.message_type)?;
        if let Some(payload) = &message.payload {
            object.serialize_field("payload", &PlainStruct(payload))?;
        }
        object.serialize_field("player_id", &message.player_id)?;
        object.end()
    }
}

impl Serialize for Alphabetical<'_, StateTransition> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let transition = self.0;
        let state = |number: i32| MatchState::try_from(number).map(|state| state.as_str_name()).ok();
        let mut object = serializer.serialize_struct("StateTransition", 3)?;
        object.serialize_field("from", &Named(transition.from, state(transition.from)))?;
        object.serialize_field("reason", &transition.reason)?;
        object.serialize_field("to", &Named(transition.to, state(transition.to)))?;
        object.end()
    }
}

/// An enum by its name, or its number when the contracts name none.
struct Named(i32, Option<&'static str>);

impl Serialize for Named {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.1 {
            Some(name) => serializer.serialize_str(name),
            None => serializer.serialize_i32(self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use prost_types::value::Kind;
    use prost_types::{Struct, Timestamp, Value};

    use super::*;
    use crate::json::samples::Samples;
    use crate::json::to_json;

    /// Reflection's JSON through `serde_json::Value` as text: how the files were written before.
    fn through_value<M: prost::Message>(name: &str, record: &M) -> Option<String> {
        to_json(name, record).ok().map(|json| json.to_string())
    }

    fn alphabetical<'a, T>(record: &'a T) -> Option<String>
    where
        Alphabetical<'a, T>: Serialize,
    {
        serde_json::to_string(&Alphabetical(record)).ok()
    }

    fn same(scheduled: &ScheduledMatch, entries: &[TranscriptEntry]) {
        let text = alphabetical(scheduled);
        assert!(text.is_some(), "{scheduled:?}");
        assert_eq!(text, through_value("league.v2.ScheduledMatch", scheduled));
        for entry in entries {
            let text = alphabetical(entry);
            assert!(text.is_some(), "{entry:?}");
            assert_eq!(text, through_value("league.v2.TranscriptEntry", entry));
        }
    }

    #[test]
    fn the_same_text_as_reflection_through_value() {
        same(&ScheduledMatch::default(), &[TranscriptEntry::default()]);
        same(
            &ScheduledMatch {
                result: Some(MatchResult::default()),
                ..ScheduledMatch::default()
            },
            &[],
        );
        let mut samples = Samples::new(11);
        for _ in 0..300 {
            same(&samples.scheduled(), &samples.transcript().entries);
        }
    }

    #[test]
    fn what_proto3_json_cannot_write_is_an_error_both_ways() {
        let infinite = Struct {
            fields: [(
                "x".to_owned(),
                Value {
                    kind: Some(Kind::NumberValue(f64::INFINITY)),
                },
            )]
            .into(),
        };
        let year_10000 = Some(Timestamp {
            seconds: 253_402_300_800,
            nanos: 0,
        });
        let scheduled = [
            ScheduledMatch {
                result: Some(MatchResult {
                    game_metadata: Some(infinite.clone()),
                    ..MatchResult::default()
                }),
                ..ScheduledMatch::default()
            },
            ScheduledMatch {
                finished_at: year_10000,
                ..ScheduledMatch::default()
            },
        ];
        for scheduled in &scheduled {
            assert_eq!(alphabetical(scheduled), None);
            assert_eq!(through_value("league.v2.ScheduledMatch", scheduled), None);
        }
        let entries = [
            TranscriptEntry {
                at: year_10000,
                entry: None,
            },
            TranscriptEntry {
                at: None,
                entry: Some(Entry::Message(MessageRecord {
                    payload: Some(infinite),
                    ..MessageRecord::default()
                })),
            },
        ];
        for entry in &entries {
            assert_eq!(alphabetical(entry), None);
            assert_eq!(through_value("league.v2.TranscriptEntry", entry), None);
        }
    }
}
