//! League records as canonical proto3 JSON (field names as in the .proto files, enums by name,
//! timestamps as RFC 3339, `Struct` payloads as plain objects): how results and transcripts are stored
//! beside their protobuf bytes for plain SQL, and how the tools print them. Driven by the descriptor set,
//! so the JSON follows the contracts without hand-written field lists; the two stored records, written
//! on every report, have serializers derived from the same contracts ([`record_to_json_text`]), which
//! the tests hold to the same JSON, and deserializers that read it back ([`record_from_json_text`]).

use std::sync::LazyLock;

use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
use serde_json::Value;

mod alphabetical;
pub(crate) mod read;
pub(crate) mod records;
mod rfc3339;
#[cfg(test)]
mod samples;
mod transcript_text;

pub use alphabetical::Alphabetical;
pub use transcript_text::{RecordedMessage, TranscriptText, transcript_to_json_text};

static POOL: LazyLock<Result<DescriptorPool, String>> =
    LazyLock::new(|| DescriptorPool::decode(crate::FILE_DESCRIPTOR_SET).map_err(|error| error.to_string()));

/// `message` as proto3 JSON; `full_name` is its protobuf name, e.g. `league.v2.MatchTranscript`.
pub fn to_json<M: prost::Message>(full_name: &str, message: &M) -> Result<Value, JsonError> {
    decode(full_name, &message.encode_to_vec())?
        .serialize_with_options(serde_json::value::Serializer, &options())
        .map_err(|error| JsonError(format!("{full_name} as JSON: {error}")))
}

/// The message proto3 JSON (as [`to_json`] writes it) describes; `full_name` is its protobuf name. For
/// reading back what was written as JSON (`league verify` reads a results folder's transcripts).
pub fn from_json<M: prost::Message + Default>(full_name: &str, json: &Value) -> Result<M, JsonError> {
    let pool = POOL
        .as_ref()
        .map_err(|error| JsonError(format!("descriptor set: {error}")))?;
    let descriptor = pool
        .get_message_by_name(full_name)
        .ok_or_else(|| JsonError(format!("no message {full_name} in the league.v2 contracts")))?;
    let message = DynamicMessage::deserialize(descriptor, json)
        .map_err(|error| JsonError(format!("not a {full_name}: {error}")))?;
    message
        .transcode_to()
        .map_err(|error| JsonError(format!("{full_name} does not decode: {error}")))
}

/// A stored record as proto3 JSON text: the same JSON as [`to_json`], written by serializers derived
/// from the contracts (proto/build.rs, [`records`]) instead of through reflection. This is how the
/// manager stores each report's result and transcript beside their bytes, on the report's path: no
/// encode, no decode, no descriptor lookups.
pub fn record_to_json_text<R: StoredRecord>(record: &R) -> Result<String, JsonError> {
    serde_json::to_string(record).map_err(|error| JsonError(format!("{} as JSON: {error}", R::NAME)))
}

/// A stored record from the proto3 JSON text [`record_to_json_text`] or [`to_json`] wrote of it, read
/// by deserializers derived from the contracts ([`read`]): no `serde_json::Value`, no reflection.
pub fn record_from_json_text<R: StoredRecord + serde::de::DeserializeOwned>(
    text: &str,
) -> Result<R, JsonError> {
    read::record(text).map_err(|error| JsonError(format!("not a {}: {error}", R::NAME)))
}

/// A record stored as JSON beside its bytes ([`record_to_json_text`]), or in a results folder.
pub trait StoredRecord: serde::Serialize {
    /// Its protobuf name, for errors.
    const NAME: &'static str;
}

impl StoredRecord for crate::v2::MatchResult {
    const NAME: &'static str = "league.v2.MatchResult";
}

impl StoredRecord for crate::v2::MatchTranscript {
    const NAME: &'static str = "league.v2.MatchTranscript";
}

impl StoredRecord for crate::v2::TranscriptEntry {
    const NAME: &'static str = "league.v2.TranscriptEntry";
}

impl StoredRecord for crate::v2::ScheduledMatch {
    const NAME: &'static str = "league.v2.ScheduledMatch";
}

fn decode(full_name: &str, encoded: &[u8]) -> Result<DynamicMessage, JsonError> {
    let pool = POOL
        .as_ref()
        .map_err(|error| JsonError(format!("descriptor set: {error}")))?;
    let descriptor = pool
        .get_message_by_name(full_name)
        .ok_or_else(|| JsonError(format!("no message {full_name} in the league.v2 contracts")))?;
    DynamicMessage::decode(descriptor, encoded)
        .map_err(|error| JsonError(format!("{full_name} does not decode: {error}")))
}

fn options() -> SerializeOptions {
    SerializeOptions::new()
        .use_proto_field_name(true)
        .stringify_64_bit_integers(false)
        .skip_default_fields(false)
}

/// A record that cannot be shown as JSON (a name missing from the contracts: a programming error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonError(String);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v2::{MatchResult, MatchTranscript, PlayerScore, ResultStatus, TranscriptEntry};

    #[test]
    fn json_reads_back_into_the_message_it_was_written_from() {
        let result = MatchResult {
            match_id: "R1M1".into(),
            status: ResultStatus::Draw as i32,
            game_metadata: Some(prost_types::Struct {
                fields: [(
                    "drawn_number".to_owned(),
                    prost_types::Value {
                        kind: Some(prost_types::value::Kind::NumberValue(7.0)),
                    },
                )]
                .into(),
            }),
            ..MatchResult::default()
        };
        let json = to_json("league.v2.MatchResult", &result).expect("converts");
        let read: MatchResult = from_json("league.v2.MatchResult", &json).expect("reads back");
        assert_eq!(read, result);
        let refused = from_json::<MatchResult>(
            "league.v2.MatchResult",
            &serde_json::json!({"status": "RESULT_STATUS_ABORTED"}),
        );
        assert!(refused.is_err(), "a status the contracts do not name");
    }

    #[test]
    fn records_use_proto_field_names_enum_names_and_rfc3339_times() {
        let result = MatchResult {
            match_id: "R1M1".into(),
            status: ResultStatus::Win as i32,
            winner_player_id: "P01".into(),
            scores: vec![PlayerScore {
                player_id: "P01".into(),
                points: 3,
            }],
            ..MatchResult::default()
        };
        let json = to_json("league.v2.MatchResult", &result).expect("converts");
        assert_eq!(json["status"], "RESULT_STATUS_WIN");
        assert_eq!(json["winner_player_id"], "P01");
        assert_eq!(json["scores"][0]["points"], 3);
        assert_eq!(json["at_fault_player_ids"], serde_json::json!([]));

        let transcript = MatchTranscript {
            match_id: "R1M1".into(),
            entries: vec![TranscriptEntry {
                at: Some(prost_types::Timestamp {
                    seconds: 1_800_000_000,
                    nanos: 5_000_000,
                }),
                entry: None,
            }],
        };
        let json = to_json("league.v2.MatchTranscript", &transcript).expect("converts");
        assert_eq!(json["entries"][0]["at"], "2027-01-15T08:00:00.005Z");
    }

    /// A value of every kind `Struct` holds, nested.
    fn every_kind() -> prost_types::Struct {
        use prost_types::value::Kind;
        use prost_types::{ListValue, Struct, Value};
        let value = |kind| Value { kind: Some(kind) };
        let list = ListValue {
            values: vec![
                value(Kind::NumberValue(8.0)),
                value(Kind::NumberValue(-0.25)),
                value(Kind::StringValue("even \"quoted\" \u{e9}".into())),
                value(Kind::BoolValue(true)),
                value(Kind::NullValue(0)),
                Value { kind: None },
            ],
        };
        let inner = Struct {
            fields: [("n".to_owned(), value(Kind::NumberValue(1e21)))].into(),
        };
        Struct {
            fields: [
                ("list".to_owned(), value(Kind::ListValue(list))),
                ("object".to_owned(), value(Kind::StructValue(inner))),
                ("drawn_number".to_owned(), value(Kind::NumberValue(7.0))),
            ]
            .into(),
        }
    }

    fn at(seconds: i64, nanos: i32) -> Option<prost_types::Timestamp> {
        Some(prost_types::Timestamp { seconds, nanos })
    }

    fn same_json<R: StoredRecord + prost::Message>(record: &R) {
        let text = record_to_json_text(record).expect("derived serializer");
        let parsed: Value = serde_json::from_str(&text).expect("JSON text");
        assert_eq!(parsed, to_json(R::NAME, record).expect("reflection"), "{text}");
    }

    #[test]
    fn derived_records_are_the_same_json_as_reflection() {
        use crate::v2::transcript_entry::Entry;
        use crate::v2::{Direction, MatchState, MessageRecord, StateTransition};
        same_json(&MatchResult::default());
        same_json(&MatchResult {
            match_id: "R1M1".into(),
            status: ResultStatus::TechnicalLoss as i32,
            winner_player_id: "P01".into(),
            scores: vec![
                PlayerScore {
                    player_id: "P01".into(),
                    points: 3,
                },
                PlayerScore::default(),
            ],
            reason: "P02 did not answer".into(),
            at_fault_player_ids: vec!["P02".into()],
            game_metadata: Some(every_kind()),
        });
        // A number outside the enum is written as the number.
        same_json(&MatchResult {
            status: 42,
            game_metadata: Some(prost_types::Struct::default()),
            ..MatchResult::default()
        });
        same_json(&MatchTranscript::default());
        let entries = vec![
            TranscriptEntry {
                at: at(1_800_000_000, 0),
                entry: Some(Entry::StateTransition(StateTransition {
                    from: MatchState::WaitingForPlayers as i32,
                    to: MatchState::CollectingChoices as i32,
                    reason: "both players joined".into(),
                })),
            },
            TranscriptEntry {
                at: at(1_800_000_000, 5_000_000),
                entry: Some(Entry::Message(MessageRecord {
                    direction: Direction::FromPlayer as i32,
                    player_id: "P01".into(),
                    message_type: "CHOOSE_PARITY_RESPONSE".into(),
                    attempt: 2,
                    payload: Some(every_kind()),
                    error_code: "E001".into(),
                })),
            },
            TranscriptEntry {
                at: at(-62_135_596_800, 123_456),
                entry: Some(Entry::Message(MessageRecord {
                    direction: 9,
                    ..MessageRecord::default()
                })),
            },
            TranscriptEntry {
                at: at(253_402_300_799, 999_999_999),
                entry: Some(Entry::StateTransition(StateTransition {
                    from: -1,
                    ..StateTransition::default()
                })),
            },
            TranscriptEntry::default(),
        ];
        same_json(&MatchTranscript {
            match_id: "R1M1".into(),
            entries,
        });
    }

    #[test]
    fn derived_scheduled_matches_and_generated_records_are_the_same_json_as_reflection() {
        same_json(&crate::v2::ScheduledMatch::default());
        let mut samples = super::samples::Samples::new(3);
        for _ in 0..100 {
            same_json(&samples.scheduled());
            same_json(&samples.transcript());
        }
    }

    #[test]
    fn what_proto3_json_cannot_write_is_an_error_both_ways() {
        use prost_types::value::Kind;
        let nan = MatchResult {
            game_metadata: Some(prost_types::Struct {
                fields: [(
                    "x".to_owned(),
                    prost_types::Value {
                        kind: Some(Kind::NumberValue(f64::NAN)),
                    },
                )]
                .into(),
            }),
            ..MatchResult::default()
        };
        assert!(record_to_json_text(&nan).is_err());
        assert!(to_json("league.v2.MatchResult", &nan).is_err());
        let year_10000 = MatchTranscript {
            entries: vec![TranscriptEntry {
                at: at(253_402_300_800, 0),
                entry: None,
            }],
            ..MatchTranscript::default()
        };
        assert!(record_to_json_text(&year_10000).is_err());
        assert!(to_json("league.v2.MatchTranscript", &year_10000).is_err());
    }

    #[test]
    fn an_unknown_name_is_an_error() {
        assert!(to_json("league.v2.NoSuchThing", &MatchResult::default()).is_err());
    }
}
