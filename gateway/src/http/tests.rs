//! The HTTP surface without a socket: the router, built as the gateway builds it, driven with `oneshot`.
//! The manager link points at a manager that is never there (its channel connects only when called),
//! so every answer here is the edge's own: bad input is refused before the league is asked.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use league_manager_link::ManagerLink;
use league_runtime::admin::Readiness;
use league_runtime::grpc;
use secrecy::SecretString;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::app::{self, Urls};
use crate::bridge::client::AgentClient;
use crate::config::GatewayConfig;

const OPERATOR_TOKEN: &str = "the-operator";
const MAX_BODY_BYTES: usize = 1024;

fn router() -> Router {
    let config = GatewayConfig {
        max_body_bytes: MAX_BODY_BYTES,
        ..GatewayConfig::default()
    };
    // `.invalid` never resolves (RFC 6761): were the edge to ask the manager, the answer would be E009.
    let channel = grpc::channel("http://manager.invalid:50051").expect("a lazy channel");
    let manager_link = ManagerLink::new(channel, SecretString::from(OPERATOR_TOKEN));
    let client = AgentClient::new(&config.tls).expect("the system's roots");
    let urls = Urls {
        public: "http://gateway.invalid/mcp".to_owned(),
        bridge: "http://gateway.invalid:50054".to_owned(),
    };
    let state = app::wire(Arc::new(config), manager_link, client, urls, Readiness::new());
    super::router(state)
}

/// A POST to `/mcp` from a caller at 127.0.0.1 (what the connection layer would have told the router).
fn post(content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut request = Request::post("/mcp");
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    let mut request = request.body(body.into()).expect("a request");
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))));
    request
}

/// The status and the JSON body (null when empty).
async fn send(request: Request<Body>) -> (StatusCode, Value) {
    let response = router().oneshot(request).await.expect("infallible");
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("the whole body")
        .to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"))
    };
    (status, body)
}

async fn post_json(body: &str) -> (StatusCode, Value) {
    send(post(Some("application/json"), body.to_owned())).await
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_under_a_null_id() {
    let (status, body) = post_json(r#"{"jsonrpc": "2.0", "method": "#).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], Value::Null, "{body}");
    assert_eq!(body["error"]["code"], -32700, "{body}");
}

#[tokio::test]
async fn a_body_not_declared_json_is_refused_before_it_is_read() {
    let ping = r#"{"jsonrpc":"2.0","method":"ping","id":1}"#;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let (status, body) = send(post(content_type, ping)).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{content_type:?}");
        assert_eq!(body["error"]["code"], -32600, "{content_type:?}: {body}");
    }
    // Any JSON media type, parameters allowed.
    let (status, body) = send(post(Some("application/vnd.league+json; charset=utf-8"), ping)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["status"], "ok", "{body}");
}

#[tokio::test]
async fn a_body_over_the_bound_is_refused_as_too_large() {
    let padding = "x".repeat(MAX_BODY_BYTES);
    let call = json!({"jsonrpc": "2.0", "method": "ping", "id": 1, "params": {"padding": padding}});
    let (status, body) = post_json(&call.to_string()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        body["error"]["data"]["error_code"],
        league_proto::ErrorCode::PayloadTooLarge.code(),
        "{body}"
    );
    // The same call within the bound is answered.
    let call = json!({"jsonrpc": "2.0", "method": "ping", "id": 1});
    let (status, body) = post_json(&call.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["status"], "ok", "{body}");
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found_echoing_the_id() {
    let (status, body) =
        post_json(r#"{"jsonrpc":"2.0","method":"fly_to_the_moon","params":{},"id":"m1"}"#).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["id"], "m1", "{body}");
    assert_eq!(body["error"]["code"], -32601, "{body}");
}

#[tokio::test]
async fn a_batch_is_answered_element_by_element() {
    // An empty batch is one refusal, not an empty array.
    let (status, body) = post_json("[]").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["code"], -32600, "{body}");
    // Each element on its own: a ping, a non-object, an unknown method, a notification (no answer).
    let batch = r#"[
        {"jsonrpc":"2.0","method":"ping","id":1},
        7,
        {"jsonrpc":"2.0","method":"fly_to_the_moon","id":3},
        {"jsonrpc":"2.0","method":"ping"}
    ]"#;
    let (status, body) = post_json(batch).await;
    assert_eq!(status, StatusCode::OK);
    let answers = body.as_array().unwrap_or_else(|| panic!("an array: {body}"));
    assert_eq!(answers.len(), 3, "no answer to the notification: {body}");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["result"]["status"], "ok");
    assert_eq!(answers[1]["id"], Value::Null);
    assert_eq!(answers[1]["error"]["code"], -32600);
    assert_eq!(answers[2]["id"], 3);
    assert_eq!(answers[2]["error"]["code"], -32601);
    // Notifications alone: nothing to answer.
    let (status, body) = post_json(r#"[{"jsonrpc":"2.0","method":"ping"}]"#).await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
}

#[tokio::test]
async fn an_unknown_query_type_is_e002_naming_the_choices() {
    let call = json!({"jsonrpc": "2.0", "method": "league_query", "id": 1, "params": {
        "query_type": "GET_EVERYTHING", "auth_token": OPERATOR_TOKEN,
    }});
    let (status, body) = post_json(&call.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["data"]["error_code"], "E002", "{body}");
    let names = league_v2::query::Query::names();
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains(&names)),
        "{body}"
    );
}

#[tokio::test]
async fn health_is_answered_and_readiness_waits_for_the_gateway() {
    let get = |path: &str| Request::get(path).body(Body::empty()).expect("a request");
    let response = router().oneshot(get("/healthz")).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    let response = router().oneshot(get("/readyz")).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
}
