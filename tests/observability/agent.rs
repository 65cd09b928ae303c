//! An external player in the test process: a league.v2 JSON-RPC endpoint (axum on port 0) that answers
//! every call at once — accepts invitations, chooses "even", acknowledges anything else — and keeps the
//! `traceparent` header of every call it receives. It registers through the gateway in the
//! message-type dialect (the message type is the method).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use league_runtime::{Shutdown, grpc};
use serde_json::{Value, json};

use crate::harness::http_post_json;

/// One call the agent received.
#[derive(Debug, Clone)]
pub struct Call {
    pub message_type: String,
    pub match_id: Option<String>,
    pub traceparent: Option<String>,
}

type Calls = Arc<Mutex<Vec<Call>>>;

/// A running agent.
#[derive(Debug)]
pub struct Agent {
    /// Where the gateway calls it.
    pub contact_endpoint: String,
    calls: Calls,
    shutdown: Shutdown,
}

impl Agent {
    pub async fn start() -> Agent {
        let (listener, addr) = grpc::bind(([127, 0, 0, 1], 0).into()).await.expect("bind");
        let calls = Calls::default();
        let router = Router::new()
            .route("/mcp", post(answer))
            .with_state(calls.clone());
        let shutdown = Shutdown::new();
        let stop = shutdown.signal();
        tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(stop.wait())
                .await
                .expect("the agent serves");
        });
        Agent {
            contact_endpoint: format!("{}/mcp", grpc::local_url(addr)),
            calls,
            shutdown,
        }
    }

    /// Registers as a player through the gateway at `gateway` (its HTTP base URL), sending
    /// `traceparent`; the player id assigned.
    pub async fn register(&self, gateway: &str, name: &str, traceparent: &str) -> String {
        let now = humantime_serde::re::humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let request = json!({
            "jsonrpc": "2.0",
            "method": "LEAGUE_REGISTER_REQUEST",
            "id": 1,
            "params": {
                "protocol": "league.v2",
                "message_type": "LEAGUE_REGISTER_REQUEST",
                "sender": format!("player:{name}"),
                "timestamp": now,
                "conversation_id": format!("conv-{name}-register"),
                "player_meta": {
                    "display_name": name,
                    "version": "1.0.0",
                    "game_types": ["even_odd"],
                    "contact_endpoint": self.contact_endpoint,
                },
            },
        });
        let (status, body) = http_post_json(
            gateway,
            "/mcp",
            &[("traceparent", traceparent)],
            &request.to_string(),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).expect("a JSON answer");
        let result = &answer["result"];
        assert_eq!(result["status"], "ACCEPTED", "{answer}");
        result["player_id"].as_str().expect("a player id").to_owned()
    }

    /// Every call received so far.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

async fn answer(State(calls): State<Calls>, headers: HeaderMap, Json(request): Json<Value>) -> Json<Value> {
    let params = &request["params"];
    let message_type = params["message_type"]
        .as_str()
        .or_else(|| request["method"].as_str())
        .unwrap_or_default()
        .to_owned();
    let match_id = params["match_id"].as_str().map(str::to_owned);
    calls.lock().unwrap_or_else(PoisonError::into_inner).push(Call {
        message_type: message_type.clone(),
        match_id: match_id.clone(),
        traceparent: headers
            .get("traceparent")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
    });
    let result = match message_type.as_str() {
        "GAME_INVITATION" => json!({
            "message_type": "GAME_JOIN_ACK",
            "match_id": match_id,
            "player_id": params["player_id"],
            "accept": true,
        }),
        "CHOOSE_PARITY_CALL" => json!({
            "message_type": "CHOOSE_PARITY_RESPONSE",
            "match_id": match_id,
            "player_id": params["player_id"],
            "parity_choice": "even",
        }),
        other => json!({"status": "acknowledged", "message_type": other}),
    };
    Json(json!({"jsonrpc": "2.0", "result": result, "id": request["id"]}))
}
