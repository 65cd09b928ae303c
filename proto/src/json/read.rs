//! The stored records read back from their proto3 JSON text ([`super::record_from_json_text`]): what
//! the derived serializers ([`super::record_to_json_text`]) and reflection ([`super::to_json`]) write,
//! read by deserializers derived from the contracts (proto/build.rs) and the fields' own below, with no
//! `serde_json::Value`, descriptors, encoding or decoding in between. Reading a stored transcript
//! through reflection was most of a `GetMatch`'s work, and a results folder asks for every match's.
//!
//! They take what reflection takes, or less, and read it as reflection does: fields by their proto names
//! in any order, a field left out as its default, enums by name or number, times in strict RFC 3339
//! within years 1–9999, `Struct`s as plain objects (`null` inside one is a `NullValue`), messages nested
//! no deeper than prost decodes them (reflection's read ended in prost's decoding). Refused where
//! reflection is lenient: a field given twice (reflection keeps the last), `null` for a string, number,
//! enum or list (its default there), a number written as a string, the lowerCamelCase names.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Timestamp, Value};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};

use super::rfc3339;
use super::transcript_text::RECURSION_LIMIT;
use crate::v2::transcript_entry::Entry;
use crate::v2::{
    Direction, MatchResult, MatchState, MatchStatus, MessageRecord, PlayerScore, ResultStatus,
    StateTransition, TranscriptEntry,
};

/// Prost's levels left inside a transcript's message record (the transcript and the entry take one
/// each) and inside a scheduled match's result: where their `Struct`s are entered from, counted as
/// prost decodes a whole transcript and a scheduled match. An entry read alone (a line of a results
/// folder) is held to the transcript's count, one level short of reflection's for it: the manager
/// never serves a transcript that deep, nor a client decode one.
const IN_MESSAGE_RECORD: u32 = RECURSION_LIMIT - 2;
const IN_MATCH_RESULT: u32 = RECURSION_LIMIT - 1;

/// `text`, a whole record's JSON.
pub(crate) fn record<R: DeserializeOwned>(text: &str) -> serde_json::Result<R> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let record = FromObject(PhantomData).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(record)
}

macro_rules! enum_by_name_or_number {
    ($name:ident, $enum:ty) => {
        pub(crate) fn $name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i32, D::Error> {
            deserializer.deserialize_any(EnumNumber(|name| {
                <$enum>::from_str_name(name).map(|value| value as i32)
            }))
        }
    };
}

enum_by_name_or_number!(result_status, ResultStatus);
enum_by_name_or_number!(match_state, MatchState);
enum_by_name_or_number!(direction, Direction);
enum_by_name_or_number!(match_status, MatchStatus);

/// An enum's number, from its name (one the contracts give) or the number itself (any `int32`).
struct EnumNumber(fn(&str) -> Option<i32>);

impl Visitor<'_> for EnumNumber {
    type Value = i32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an enum value's name or number")
    }

    fn visit_str<E: Error>(self, name: &str) -> Result<i32, E> {
        (self.0)(name).ok_or_else(|| E::custom(format!("unrecognized enum value '{name}'")))
    }

    fn visit_i64<E: Error>(self, number: i64) -> Result<i32, E> {
        i32::try_from(number).map_err(E::custom)
    }

    fn visit_u64<E: Error>(self, number: u64) -> Result<i32, E> {
        i32::try_from(number).map_err(E::custom)
    }
}

/// A `Timestamp` field: RFC 3339 text, or `null` (unset).
pub(crate) fn time<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Timestamp>, D::Error> {
    deserializer.deserialize_option(Time)
}

struct Time;

impl<'de> Visitor<'de> for Time {
    type Value = Option<Timestamp>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RFC 3339 time")
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<Self::Value, E> {
        match rfc3339::parse(text) {
            Some(at) => Ok(Some(at)),
            None => Err(E::custom(format!(
                "{text:?} is not an RFC 3339 time within years 1-9999"
            ))),
        }
    }
}

/// A transcript message's `payload`.
pub(crate) fn payload<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Struct>, D::Error> {
    deserializer.deserialize_option(OptionalObject(IN_MESSAGE_RECORD))
}

/// A result's `game_metadata`.
pub(crate) fn game_metadata<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Struct>, D::Error> {
    deserializer.deserialize_option(OptionalObject(IN_MATCH_RESULT))
}

/// One level deeper in prost's decoding, from `levels` left: a message inside the one being read.
fn enter<E: Error>(levels: u32) -> Result<u32, E> {
    levels.checked_sub(1).ok_or_else(|| {
        E::custom(format!(
            "nested deeper than protobuf decodes ({RECURSION_LIMIT} messages)"
        ))
    })
}

/// A `Struct` field, `null` being unset; `.0` is prost's levels left in the message that holds it.
struct OptionalObject(u32);

impl<'de> Visitor<'de> for OptionalObject {
    type Value = Option<Struct>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(Object(enter(self.0)?)).map(Some)
    }
}

/// A `Struct` as a plain object; `.0` is prost's levels left inside it.
struct Object(u32);

impl<'de> Visitor<'de> for Object {
    type Value = Struct;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Struct, A::Error> {
        let mut fields = BTreeMap::new();
        while let Some(key) = map.next_key::<String>()? {
            // Each key and value is a map entry, a message of its own to prost. A key given twice keeps
            // its last value, as reflection keeps it.
            let value = map.next_value_seed(ValueIn(enter(self.0)?))?;
            fields.insert(key, value);
        }
        Ok(Struct { fields })
    }
}

/// A `Value` inside a message with `.0` of prost's levels left.
struct ValueIn(u32);

impl<'de> DeserializeSeed<'de> for ValueIn {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueJson(enter(self.0)?))
    }
}

/// A `Value`'s JSON; `.0` is prost's levels left inside the `Value`.
struct ValueJson(u32);

impl<'de> Visitor<'de> for ValueJson {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: Error>(self) -> Result<Value, E> {
        Ok(kind(Kind::NullValue(0)))
    }

    fn visit_bool<E: Error>(self, value: bool) -> Result<Value, E> {
        Ok(kind(Kind::BoolValue(value)))
    }

    fn visit_i64<E: Error>(self, value: i64) -> Result<Value, E> {
        Ok(kind(Kind::NumberValue(value as f64)))
    }

    fn visit_u64<E: Error>(self, value: u64) -> Result<Value, E> {
        Ok(kind(Kind::NumberValue(value as f64)))
    }

    fn visit_f64<E: Error>(self, value: f64) -> Result<Value, E> {
        Ok(kind(Kind::NumberValue(value)))
    }

    fn visit_str<E: Error>(self, value: &str) -> Result<Value, E> {
        Ok(kind(Kind::StringValue(value.to_owned())))
    }

    fn visit_string<E: Error>(self, value: String) -> Result<Value, E> {
        Ok(kind(Kind::StringValue(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inside = enter(self.0)?;
        let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(value) = seq.next_element_seed(ValueIn(inside))? {
            values.push(value);
        }
        Ok(kind(Kind::ListValue(ListValue { values })))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Object(enter(self.0)?)
            .visit_map(map)
            .map(|fields| kind(Kind::StructValue(fields)))
    }
}

fn kind(kind: Kind) -> Value {
    Value { kind: Some(kind) }
}

/// A scheduled match's `result`.
pub(crate) fn result<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<MatchResult>, D::Error> {
    Optional(PhantomData).deserialize(deserializer)
}

/// A result's `scores`.
pub(crate) fn scores<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PlayerScore>, D::Error> {
    deserializer.deserialize_seq(Objects(PhantomData))
}

/// A message read from a JSON object alone: given the deserializer itself, a derived deserializer would
/// also take an array of the fields in order (and an empty one as the default message), which
/// reflection refuses and nothing writes. Given the object's entries, it reads them as a map.
struct FromObject<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for FromObject<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for FromObject<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// A message field: [`FromObject`], or `null` (unset).
struct Optional<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Optional<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Optional<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object or null")
    }

    fn visit_none<E: Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        FromObject(PhantomData).deserialize(deserializer).map(Some)
    }
}

/// A repeated message field: a list of [`FromObject`].
struct Objects<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Objects<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut values = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(value) = seq.next_element_seed(FromObject(PhantomData))? {
            values.push(value);
        }
        Ok(values)
    }
}

/// A transcript entry: its time and its one entry under the oneof member's name, each at most once.
impl<'de> Deserialize<'de> for TranscriptEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EntryFields)
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum EntryField {
    At,
    StateTransition,
    Message,
}

impl EntryField {
    fn name(self) -> &'static str {
        match self {
            EntryField::At => "at",
            EntryField::StateTransition => "state_transition",
            EntryField::Message => "message",
        }
    }
}

struct EntryFields;

impl<'de> Visitor<'de> for EntryFields {
    type Value = TranscriptEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a league.v2.TranscriptEntry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TranscriptEntry, A::Error> {
        let mut read = TranscriptEntry::default();
        let mut seen = [false; 3];
        while let Some(field) = map.next_key::<EntryField>()? {
            if std::mem::replace(&mut seen[field as usize], true) {
                return Err(A::Error::duplicate_field(field.name()));
            }
            let entry = match field {
                EntryField::At => {
                    read.at = map.next_value_seed(TimeSeed)?;
                    continue;
                }
                EntryField::StateTransition => map
                    .next_value_seed(Optional::<StateTransition>(PhantomData))?
                    .map(Entry::StateTransition),
                EntryField::Message => map
                    .next_value_seed(Optional::<MessageRecord>(PhantomData))?
                    .map(Entry::Message),
            };
            // A member given as `null` is not set, as reflection has it.
            if entry.is_some() {
                if read.entry.is_some() {
                    return Err(A::Error::custom("multiple fields provided for oneof 'entry'"));
                }
                read.entry = entry;
            }
        }
        Ok(read)
    }
}

/// [`time`] as a seed, for a map's value.
struct TimeSeed;

impl<'de> DeserializeSeed<'de> for TimeSeed {
    type Value = Option<Timestamp>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        time(deserializer)
    }
}

#[cfg(test)]
mod tests;
