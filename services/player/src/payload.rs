//! Building and reading the opaque `google.protobuf.Struct` payloads of step contexts, moves and results.
//!
//! A few helpers copied in spirit from the referee's `payload` module (the player must not depend on the
//! referee). Reading is lenient: a bot only needs to know whether a field is there and usable, so every
//! reader answers `None` for anything else and the caller decides what that means.

use prost_types::value::Kind;
use prost_types::{Struct, Value};

/// A string value.
pub fn string(text: impl Into<String>) -> Value {
    Value {
        kind: Some(Kind::StringValue(text.into())),
    }
}

/// A number value (protobuf numbers are doubles, as in JSON).
pub fn number(number: impl Into<f64>) -> Value {
    Value {
        kind: Some(Kind::NumberValue(number.into())),
    }
}

/// A list value.
#[cfg(test)]
pub fn list(items: impl IntoIterator<Item = Value>) -> Value {
    Value {
        kind: Some(Kind::ListValue(prost_types::ListValue {
            values: items.into_iter().collect(),
        })),
    }
}

/// A struct value nested inside another payload.
#[cfg(test)]
pub fn nested(object: Struct) -> Value {
    Value {
        kind: Some(Kind::StructValue(object)),
    }
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

/// The string field `name`, if it is one.
pub fn read_string<'a>(payload: &'a Struct, name: &str) -> Option<&'a str> {
    payload.fields.get(name).and_then(as_str)
}

/// The struct field `name`, if it is one.
pub fn read_struct<'a>(payload: &'a Struct, name: &str) -> Option<&'a Struct> {
    match payload.fields.get(name)?.kind.as_ref()? {
        Kind::StructValue(inner) => Some(inner),
        _ => None,
    }
}

/// The list field `name`, if it is one.
pub fn read_list<'a>(payload: &'a Struct, name: &str) -> Option<&'a [Value]> {
    match payload.fields.get(name)?.kind.as_ref()? {
        Kind::ListValue(list) => Some(&list.values),
        _ => None,
    }
}

/// A string value's text.
pub fn as_str(value: &Value) -> Option<&str> {
    match value.kind.as_ref()? {
        Kind::StringValue(text) => Some(text),
        _ => None,
    }
}

/// A number value that is a whole number from 0 to `usize::MAX` (board cells, counts).
pub fn as_index(value: &Value) -> Option<usize> {
    match value.kind.as_ref()? {
        // `as` saturates, so the range check is what keeps a huge number from becoming a valid index.
        &Kind::NumberValue(number) if number.fract() == 0.0 && (0.0..=1e15).contains(&number) => {
            Some(number as usize)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_answer_none_for_missing_or_mistyped_fields() {
        let payload = object([
            ("text", string("odd")),
            ("cell", number(4)),
            ("half", number(4.5)),
        ]);
        assert_eq!(read_string(&payload, "text"), Some("odd"));
        assert_eq!(read_string(&payload, "cell"), None);
        assert_eq!(read_string(&payload, "absent"), None);
        assert_eq!(payload.fields.get("cell").and_then(as_index), Some(4));
        assert_eq!(payload.fields.get("half").and_then(as_index), None);
        assert_eq!(as_index(&number(-1)), None);
        assert_eq!(read_struct(&payload, "text"), None);
        assert_eq!(read_list(&payload, "text"), None);
    }
}
