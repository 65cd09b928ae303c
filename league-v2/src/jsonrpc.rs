//! JSON-RPC 2.0 framing, to the letter: a body is one call or a batch; a call without `id` is a
//! notification and gets no response; every response echoes the id and carries exactly one of
//! `result`/`error`; malformed input gets the standard codes. A numeric id is echoed digit for digit:
//! one that a float would round (`123456789012345678901234567890`) is kept as the text it came as
//! (crate::shared_json writes it back verbatim).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::shared_json::SharedJson;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The two the error table shares with league.v2 errors have their home there.
pub const INVALID_PARAMS: i64 = league_proto::error_code::JSON_RPC_INVALID_PARAMS;
pub const INTERNAL_ERROR: i64 = league_proto::error_code::JSON_RPC_INTERNAL_ERROR;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }
}

/// One well-formed call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: String,
    /// An object, an array (by-position, which no league method takes) or null when absent.
    pub params: Value,
    /// `None`: a notification.
    pub id: Option<Value>,
}

/// A call that could not be accepted, with the id to answer it under (null when unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub id: Value,
    pub error: RpcError,
}

/// What a request body holds.
#[derive(Debug)]
pub enum Body {
    Single(Result<Call, Refused>),
    Batch(Vec<Result<Call, Refused>>),
}

/// Parses a request body. `Err` is the one response for a body that is not JSON (-32700) or an empty
/// batch (-32600).
pub fn parse(body: &[u8]) -> Result<Body, RpcError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|error| RpcError::new(PARSE_ERROR, format!("Parse error: {error}")))?;
    match value {
        Value::Array(items) if items.is_empty() => {
            Err(RpcError::new(INVALID_REQUEST, "Invalid Request: empty batch"))
        }
        Value::Array(mut items) => {
            if items.iter().any(has_rounded_id) {
                // The body parsed as this array just now; were it not to, ids stay as parsed.
                let raw: Vec<&RawValue> = serde_json::from_slice(body).unwrap_or_default();
                for (item, raw) in items.iter_mut().zip(raw) {
                    keep_id_verbatim(item, raw.get().as_bytes());
                }
            }
            Ok(Body::Batch(items.into_iter().map(call).collect()))
        }
        mut other => {
            keep_id_verbatim(&mut other, body);
            Ok(Body::Single(call(other)))
        }
    }
}

/// Whether the object's id is a number whose text a float does not reproduce.
fn has_rounded_id(item: &Value) -> bool {
    matches!(item.get("id"), Some(Value::Number(n)) if n.is_f64())
}

/// Replaces a rounded numeric id by its text exactly as received.
fn keep_id_verbatim(item: &mut Value, text: &[u8]) {
    #[derive(Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    if !has_rounded_id(item) {
        return;
    }
    let Ok(IdOnly { id: Some(raw) }) = serde_json::from_slice::<IdOnly>(text) else {
        return;
    };
    if let Some(id) = item.get_mut("id")
        && serde_json::to_string(id).ok().as_deref() != Some(raw.get())
    {
        *id = SharedJson::verbatim(id.clone(), raw.get()).value();
    }
}

fn call(value: Value) -> Result<Call, Refused> {
    let Value::Object(mut object) = value else {
        return Err(refused(Value::Null, "a request must be a JSON object"));
    };
    // The id first, so every later refusal can echo it.
    let id = match object.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id),
        Some(_) => return Err(refused(Value::Null, "`id` must be a string, a number or null")),
    };
    let answer_to = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(refused(answer_to, "`jsonrpc` must be \"2.0\""));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) if !method.is_empty() => method,
        _ => return Err(refused(answer_to, "`method` must be a non-empty string")),
    };
    let params = match object.remove("params") {
        None => Value::Null,
        Some(params @ (Value::Object(_) | Value::Array(_))) => params,
        Some(_) => return Err(refused(answer_to, "`params` must be an object or an array")),
    };
    Ok(Call { method, params, id })
}

fn refused(id: Value, why: &str) -> Refused {
    Refused {
        id,
        error: RpcError::new(INVALID_REQUEST, format!("Invalid Request: {why}")),
    }
}

/// An object of `entries`, each value moved in. (`json!` passes a `Value` operand through
/// `serde_json::to_value`: a deep copy, which for a large result costs more than the rest of a call.)
pub fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// A success response.
pub fn success(id: Value, result: Value) -> Value {
    object([("jsonrpc", "2.0".into()), ("result", result), ("id", id)])
}

/// An error response.
pub fn failure(id: Value, error: &RpcError) -> Value {
    object([("jsonrpc", "2.0".into()), ("error", error.to_value()), ("id", id)])
}

/// A request we send: written as it is, its params borrowed (see [`crate::dialect::Params`]). The
/// members come in the order `jsonrpc`, `id`, `method`, `params`: the envelope before the message, so
/// an agent reading the body as a stream knows what it is answering before the message (a league
/// event can carry every player's row) begins.
#[derive(Debug, serde::Serialize)]
pub struct Request<'a, P> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: P,
}

/// A request we send.
pub fn request<P: serde::Serialize>(method: &str, params: P, id: u64) -> Request<'_, P> {
    Request {
        jsonrpc: "2.0",
        id,
        method,
        params,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn single(body: &str) -> Result<Call, Refused> {
        match parse(body.as_bytes()) {
            Ok(Body::Single(call)) => call,
            other => panic!("expected one call, got {other:?}"),
        }
    }

    #[test]
    fn a_request_we_send_has_its_envelope_before_its_message() {
        let written =
            serde_json::to_string(&request("notify_round", json!({"round_id": 2}), 7)).expect("serializes");
        assert_eq!(
            written,
            r#"{"jsonrpc":"2.0","id":7,"method":"notify_round","params":{"round_id":2}}"#
        );
    }

    #[test]
    fn a_call_and_a_notification() {
        let call = single(r#"{"jsonrpc":"2.0","method":"ping","params":{},"id":7}"#).expect("call");
        assert_eq!(call.id, Some(json!(7)));
        let note = single(r#"{"jsonrpc":"2.0","method":"ping"}"#).expect("notification");
        assert_eq!(note.id, None);
        assert_eq!(note.params, Value::Null);
    }

    #[test]
    fn malformed_input_gets_the_standard_codes() {
        assert_eq!(parse(b"{").err().map(|e| e.code), Some(PARSE_ERROR));
        assert_eq!(parse(b"[]").err().map(|e| e.code), Some(INVALID_REQUEST));
        for body in [
            r#"1"#,
            r#"{"method":"ping","id":1}"#,
            r#"{"jsonrpc":"1.0","method":"ping","id":1}"#,
            r#"{"jsonrpc":"2.0","method":5,"id":1}"#,
            r#"{"jsonrpc":"2.0","method":"ping","params":"x","id":1}"#,
            r#"{"jsonrpc":"2.0","method":"ping","id":{}}"#,
        ] {
            let refused = single(body).expect_err(body);
            assert_eq!(refused.error.code, INVALID_REQUEST, "{body}");
        }
        // The id is echoed even when the rest is wrong.
        let refused = single(r#"{"jsonrpc":"2.0","method":"","id":"a"}"#).expect_err("empty method");
        assert_eq!(refused.id, json!("a"));
    }

    #[tokio::test]
    async fn rounded_ids_are_written_back_as_they_came() {
        let body = br#"{"jsonrpc":"2.0","method":"ping","id":123456789012345678901234567890}"#;
        let written = crate::shared_json::scope(async {
            let Ok(Body::Single(Ok(call))) = parse(body) else {
                panic!("one call expected");
            };
            crate::shared_json::to_vec(&success(call.id.unwrap_or_default(), json!({})))
        })
        .await;
        let text = String::from_utf8(written).expect("utf-8");
        assert!(text.contains(r#""id":123456789012345678901234567890"#), "{text}");
        // Outside a scope the id is the number it parses to.
        let Ok(Body::Single(Ok(call))) = parse(body) else {
            panic!("one call expected");
        };
        assert!(call.id.is_some_and(|id| id.is_f64()));
    }

    #[test]
    fn batches_keep_order_and_mix_good_and_bad() {
        let Ok(Body::Batch(calls)) = parse(br#"[{"jsonrpc":"2.0","method":"ping","id":1}, 3]"#) else {
            panic!("batch expected");
        };
        assert!(calls[0].is_ok());
        assert!(calls[1].is_err());
    }

    #[test]
    fn responses_have_exactly_one_of_result_and_error() {
        let ok = success(json!(1), json!({"x": 1}));
        assert!(ok.get("result").is_some() && ok.get("error").is_none());
        let err = failure(json!(1), &RpcError::new(METHOD_NOT_FOUND, "nope"));
        assert!(err.get("result").is_none() && err["error"]["code"] == json!(METHOD_NOT_FOUND));
    }
}
