//! League records as canonical proto3 JSON (field names as in the .proto files, enums by name,
//! timestamps as RFC 3339, `Struct` payloads as plain objects): how results and transcripts are stored
//! beside their protobuf bytes for plain SQL, and how the tools print them. One conversion, driven by
//! the descriptor set, so the JSON follows the contracts without hand-written field lists.

use std::sync::LazyLock;

use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
use serde_json::Value;

static POOL: LazyLock<Result<DescriptorPool, String>> =
    LazyLock::new(|| DescriptorPool::decode(crate::FILE_DESCRIPTOR_SET).map_err(|error| error.to_string()));

/// `message` as proto3 JSON; `full_name` is its protobuf name, e.g. `league.v2.MatchTranscript`.
pub fn to_json<M: prost::Message>(full_name: &str, message: &M) -> Result<Value, JsonError> {
    decode(full_name, &message.encode_to_vec())?
        .serialize_with_options(serde_json::value::Serializer, &options())
        .map_err(|error| JsonError(format!("{full_name} as JSON: {error}")))
}

/// `encoded` (a `full_name` message's protobuf bytes) as proto3 JSON text, written straight into the
/// string: how the manager stores a report's records beside their bytes, on the report's path, without
/// encoding them again or building a `Value` first. Fields come in the contract's order.
pub fn encoded_to_json_text(full_name: &str, encoded: &[u8]) -> Result<String, JsonError> {
    let dynamic = decode(full_name, encoded)?;
    let mut text = Vec::with_capacity(encoded.len() * 2);
    dynamic
        .serialize_with_options(&mut serde_json::Serializer::new(&mut text), &options())
        .map_err(|error| JsonError(format!("{full_name} as JSON: {error}")))?;
    String::from_utf8(text).map_err(|error| JsonError(format!("{full_name} as JSON: {error}")))
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

    #[test]
    fn text_from_the_bytes_is_the_same_json() {
        let result = MatchResult {
            match_id: "R1M1".into(),
            status: ResultStatus::Draw as i32,
            scores: vec![PlayerScore {
                player_id: "P02".into(),
                points: 1,
            }],
            at_fault_player_ids: vec!["P03".into()],
            ..MatchResult::default()
        };
        let text = encoded_to_json_text("league.v2.MatchResult", &prost::Message::encode_to_vec(&result))
            .expect("converts");
        let parsed: Value = serde_json::from_str(&text).expect("JSON text");
        assert_eq!(
            parsed,
            to_json("league.v2.MatchResult", &result).expect("converts")
        );
        assert!(encoded_to_json_text("league.v2.MatchResult", &[0xff, 0xff]).is_err());
    }

    #[test]
    fn an_unknown_name_is_an_error() {
        assert!(to_json("league.v2.NoSuchThing", &MatchResult::default()).is_err());
    }
}
