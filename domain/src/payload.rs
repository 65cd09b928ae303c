//! Building the opaque `google.protobuf.Struct` payloads games exchange with players (step contexts,
//! moves, game state). The referee and the bots build the same shapes; each reads them its own way (the
//! referee strictly, to refuse a bad move with its reason; a bot leniently).

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};

/// A string value.
pub fn string(text: impl Into<String>) -> Value {
    value(Kind::StringValue(text.into()))
}

/// A number value (protobuf numbers are doubles, as in JSON).
pub fn number(number: impl Into<f64>) -> Value {
    value(Kind::NumberValue(number.into()))
}

/// A boolean value.
pub fn boolean(flag: bool) -> Value {
    value(Kind::BoolValue(flag))
}

/// A list value.
pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
    value(Kind::ListValue(ListValue {
        values: items.into_iter().collect(),
    }))
}

/// The null value.
pub fn null() -> Value {
    value(Kind::NullValue(prost_types::NullValue::NullValue.into()))
}

/// A struct value nested inside another payload.
pub fn nested(object: Struct) -> Value {
    value(Kind::StructValue(object))
}

/// A payload from its fields.
pub fn object<K: Into<String>>(fields: impl IntoIterator<Item = (K, Value)>) -> Struct {
    Struct {
        fields: fields
            .into_iter()
            .map(|(name, value)| (name.into(), value))
            .collect(),
    }
}

fn value(kind: Kind) -> Value {
    Value { kind: Some(kind) }
}
