//! Reading the opaque `google.protobuf.Struct` payloads games exchange with players; building them is
//! `league_domain::payload`'s, re-exported here.
//!
//! Reading is strict on purpose: a field asked for as a string must be a string, and one asked for as an
//! integer must be a number with nothing after the point. Each failure says what was found, so an engine
//! can pass it on to the player as the reason its move was refused.

use prost_types::Struct;
use prost_types::value::Kind;

pub use league_domain::payload::{boolean, list, nested, null, number, object, string};

/// Why a payload field could not be read as the kind a game asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FieldError {
    #[error("`{field}` is missing")]
    Missing { field: String },
    #[error("`{field}` must be {expected}, got {found}")]
    WrongKind {
        field: String,
        expected: &'static str,
        found: String,
    },
}

/// The field `name` of `payload`, which must be a string.
pub fn read_string<'a>(payload: &'a Struct, name: &str) -> Result<&'a str, FieldError> {
    match present(payload, name)? {
        Some(Kind::StringValue(text)) => Ok(text),
        other => Err(wrong_kind(name, "a string", other)),
    }
}

/// The field `name` of `payload`, which must be a number with no fractional part.
pub fn read_integer(payload: &Struct, name: &str) -> Result<i64, FieldError> {
    // Every double in this range converts to i64 exactly; outside it the cast would saturate silently.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    match present(payload, name)? {
        Some(&Kind::NumberValue(number)) if number.fract() == 0.0 && (-LIMIT..LIMIT).contains(&number) => {
            Ok(number as i64)
        }
        other => Err(wrong_kind(name, "an integer", other)),
    }
}

fn present<'a>(payload: &'a Struct, name: &str) -> Result<Option<&'a Kind>, FieldError> {
    payload
        .fields
        .get(name)
        .map(|value| value.kind.as_ref())
        .ok_or_else(|| FieldError::Missing {
            field: name.to_owned(),
        })
}

fn wrong_kind(field: &str, expected: &'static str, found: Option<&Kind>) -> FieldError {
    FieldError::WrongKind {
        field: field.to_owned(),
        expected,
        found: describe(found),
    }
}

/// How a value reads in an error message, e.g. `the number 4.5` or `the string "Even"`.
fn describe(kind: Option<&Kind>) -> String {
    match kind {
        None | Some(Kind::NullValue(_)) => "null".to_owned(),
        Some(Kind::NumberValue(number)) => format!("the number {number}"),
        Some(Kind::StringValue(text)) => format!("the string {text:?}"),
        Some(Kind::BoolValue(flag)) => format!("the boolean {flag}"),
        Some(Kind::StructValue(_)) => "a struct".to_owned(),
        Some(Kind::ListValue(_)) => "a list".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use prost_types::Value;

    use super::*;

    fn with(value: Value) -> Struct {
        object([("field", value)])
    }

    #[test]
    fn strings_are_read_only_from_strings() {
        assert_eq!(read_string(&with(string("odd")), "field"), Ok("odd"));
        assert_eq!(read_string(&with(string("")), "field"), Ok(""));
        let error = read_string(&with(number(0)), "field").expect_err("refused");
        assert_eq!(error.to_string(), "`field` must be a string, got the number 0");
        let error = read_string(&with(null()), "field").expect_err("refused");
        assert_eq!(error.to_string(), "`field` must be a string, got null");
        let error = read_string(&with(Value { kind: None }), "field").expect_err("refused");
        assert_eq!(error.to_string(), "`field` must be a string, got null");
    }

    #[test]
    fn a_missing_field_is_named() {
        let error = read_string(&object::<&str>([]), "parity_choice").expect_err("refused");
        assert_eq!(
            error,
            FieldError::Missing {
                field: "parity_choice".into()
            }
        );
        assert_eq!(error.to_string(), "`parity_choice` is missing");
    }

    #[test]
    fn integers_are_numbers_with_nothing_after_the_point() {
        assert_eq!(read_integer(&with(number(4)), "field"), Ok(4));
        assert_eq!(read_integer(&with(number(-1)), "field"), Ok(-1));
        assert_eq!(read_integer(&with(number(-0.0)), "field"), Ok(0));
        for (value, found) in [
            (number(4.5), "the number 4.5"),
            (number(f64::NAN), "the number NaN"),
            (number(f64::INFINITY), "the number inf"),
            (number(1e19), "the number 10000000000000000000"),
            (string("4"), "the string \"4\""),
            (boolean(true), "the boolean true"),
            (list([number(4)]), "a list"),
            (nested(object([("position", number(4))])), "a struct"),
        ] {
            let error = read_integer(&with(value), "field").expect_err("refused");
            assert_eq!(
                error.to_string(),
                format!("`field` must be an integer, got {found}")
            );
        }
    }

    #[test]
    fn builders_make_the_expected_kinds() {
        let payload = object([
            ("list", list([string("a"), number(1)])),
            ("inner", nested(object([("flag", null())]))),
        ]);
        let Some(Kind::ListValue(items)) = &payload.fields["list"].kind else {
            panic!("not a list: {payload:?}");
        };
        assert_eq!(items.values, [string("a"), number(1)]);
        let Some(Kind::StructValue(inner)) = &payload.fields["inner"].kind else {
            panic!("not a struct: {payload:?}");
        };
        assert_eq!(inner.fields["flag"].kind, Some(Kind::NullValue(0)));
    }
}
