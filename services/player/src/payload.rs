//! Reading the opaque `google.protobuf.Struct` payloads of step contexts, moves and results; building
//! them is `league_domain::payload`'s, as for the referee, re-exported here. Reading is lenient: a bot only needs to know whether a field is there and usable, so every
//! reader answers `None` for anything else and the caller decides what that means.

use prost_types::value::Kind;
use prost_types::{Struct, Value};

#[cfg(test)]
pub use league_domain::payload::{list, nested};
pub use league_domain::payload::{number, object, string};

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
