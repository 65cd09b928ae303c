//! How the fields of the stored records (MatchResult, MatchTranscript and what they hold, and
//! ScheduledMatch) that serde cannot write by itself become proto3 JSON, exactly as the
//! descriptor-driven conversion writes them (`super::to_json`, which the tests compare against): enums
//! by name (an unknown number as the number), `Struct` payloads as plain objects (a non-finite number is
//! an error, as proto3 JSON has no way to write it), timestamps in RFC 3339 within years 1–9999. The
//! derives themselves are attached by proto/build.rs; [`super::read`] reads the same JSON back.

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Timestamp, Value};
use serde::ser::{Error, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::rfc3339::Rfc3339Text;
use crate::v2::transcript_entry::Entry;
use crate::v2::{Direction, MatchState, MatchStatus, ResultStatus, TranscriptEntry};

macro_rules! enum_by_name {
    ($name:ident, $enum:ty) => {
        pub(crate) fn $name<S: Serializer>(number: &i32, serializer: S) -> Result<S::Ok, S::Error> {
            match <$enum>::try_from(*number) {
                Ok(value) => serializer.serialize_str(value.as_str_name()),
                Err(_) => serializer.serialize_i32(*number),
            }
        }
    };
}

enum_by_name!(result_status, ResultStatus);
enum_by_name!(match_state, MatchState);
enum_by_name!(direction, Direction);
enum_by_name!(match_status, MatchStatus);

/// A `Struct` field (skipped when absent, so never `None` here).
pub(crate) fn object<S: Serializer>(value: &Option<Struct>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(fields) => PlainStruct(fields).serialize(serializer),
        None => serializer.serialize_none(),
    }
}

/// A `Timestamp` field (skipped when absent, so never `None` here).
pub(crate) fn time<S: Serializer>(value: &Option<Timestamp>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(at) => Rfc3339(at).serialize(serializer),
        None => serializer.serialize_none(),
    }
}

/// A transcript entry: its time, then its one entry under the oneof member's name (proto3 JSON has no
/// field for the oneof itself). Absent fields are left out.
impl Serialize for TranscriptEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(at) = &self.at {
            map.serialize_entry("at", &Rfc3339(at))?;
        }
        match &self.entry {
            Some(Entry::StateTransition(transition)) => {
                map.serialize_entry("state_transition", transition)?
            }
            Some(Entry::Message(message)) => map.serialize_entry("message", message)?,
            None => {}
        }
        map.end()
    }
}

pub(crate) struct Rfc3339<'a>(pub(crate) &'a Timestamp);

impl Serialize for Rfc3339<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match Rfc3339Text::new(self.0) {
            Some(text) => serializer.serialize_str(text.as_str()),
            None => Err(S::Error::custom("timestamp out of range")),
        }
    }
}

pub(crate) struct PlainStruct<'a>(pub(crate) &'a Struct);
struct PlainValue<'a>(&'a Value);
struct PlainList<'a>(&'a ListValue);

impl Serialize for PlainStruct<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.fields.len()))?;
        for (key, value) in &self.0.fields {
            map.serialize_entry(key, &PlainValue(value))?;
        }
        map.end()
    }
}

impl Serialize for PlainValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0.kind {
            None | Some(Kind::NullValue(_)) => serializer.serialize_none(),
            Some(Kind::BoolValue(value)) => serializer.serialize_bool(*value),
            Some(Kind::NumberValue(number)) if number.is_finite() => serializer.serialize_f64(*number),
            Some(Kind::NumberValue(_)) => Err(S::Error::custom(
                "cannot serialize non-finite double in google.protobuf.Value",
            )),
            Some(Kind::StringValue(value)) => serializer.serialize_str(value),
            Some(Kind::ListValue(list)) => PlainList(list).serialize(serializer),
            Some(Kind::StructValue(fields)) => PlainStruct(fields).serialize(serializer),
        }
    }
}

impl Serialize for PlainList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.values.len()))?;
        for value in &self.0.values {
            seq.serialize_element(&PlainValue(value))?;
        }
        seq.end()
    }
}
