//! The `llm` strategy against a fake OpenAI-compatible endpoint on loopback: a valid answer is played;
//! a slow, erroring or malformed endpoint, or an answer that is not a parity, is refused, and the bot
//! plays adaptive instead; every move is counted by who decided it, with the fallback's reason. A hosted
//! model on https is asked over TLS, its key with it; one whose certificate is not trusted is never sent
//! the key.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use league_player::llm::{LlmClient, LlmConfig, LlmError};
use league_player::{Behaviour, Decider, LlmMoves, Parity, PlayerHost};
use league_proto::v2::player_service_server::PlayerService;
use league_proto::v2::{MatchContext, RequestMoveRequest};
use league_runtime::tls::TlsConfig;
use prost_types::value::Kind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How the fake endpoint answers.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Answers(&'static str),
    Fails,
    Malformed,
    /// Takes the request and never answers.
    Slow,
}

/// A fake chat endpoint; what it was sent (head and body of each request).
struct Endpoint {
    url: String,
    received: Arc<Mutex<Vec<String>>>,
}

async fn endpoint(mode: Mode) -> Endpoint {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().expect("address")
    );
    let received = Arc::new(Mutex::new(vec![]));
    let seen = received.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let request = read_request(&mut stream).await;
                seen.lock().expect("lock").push(request);
                let (status, body) = match mode {
                    Mode::Answers(content) => (
                        "200 OK",
                        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
                            .to_string(),
                    ),
                    Mode::Fails => ("500 Internal Server Error", r#"{"error":"overloaded"}"#.to_owned()),
                    Mode::Malformed => ("200 OK", "<html>hello</html>".to_owned()),
                    Mode::Slow => {
                        // Holds the connection open without a word until the client gives up.
                        let mut rest = [0u8; 1];
                        let _ = stream.read(&mut rest).await;
                        return;
                    }
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Endpoint { url, received }
}

/// The request's head and body, as text.
async fn read_request(stream: &mut tokio::net::TcpStream) -> String {
    let mut bytes = vec![];
    let mut buffer = [0u8; 4096];
    while let Ok(read) = stream.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        bytes.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    line.to_lowercase()
                        .strip_prefix("content-length:")
                        .map(|n| n.trim().to_owned())
                })
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return text;
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn client(url: &str, timeout: Duration) -> LlmClient {
    LlmClient::from_config(&LlmConfig {
        llm_url: Some(url.to_owned()),
        llm_model: Some("test-model".to_owned()),
        llm_api_key: Some("k-123".to_owned().into()),
        llm_timeout: timeout,
        ..LlmConfig::default()
    })
    .expect("a usable configuration")
    .expect("a client")
}

#[tokio::test]
async fn a_valid_answer_is_taken_and_the_request_carries_the_history() {
    let endpoint = endpoint(Mode::Answers("Odd.")).await;
    let choice = client(&endpoint.url, Duration::from_secs(10))
        .choose("P02", &[Parity::Even, Parity::Odd])
        .await;
    assert_eq!(choice.ok(), Some(Parity::Odd));
    let received = endpoint.received.lock().expect("lock");
    let request = received.first().expect("one request");
    assert!(request.starts_with("POST /v1/chat/completions "), "{request}");
    assert!(
        request.to_lowercase().contains("authorization: bearer k-123"),
        "{request}"
    );
    assert!(request.contains(r#""model":"test-model""#), "{request}");
    assert!(
        request.contains("Your opponent P02 chose, oldest first: even, odd."),
        "{request}"
    );
}

/// A chat endpoint on https, presenting the test certificate (testkit/tls): its URL, and the
/// `Authorization` header of each request it received.
async fn tls_endpoint() -> (String, Arc<Mutex<Vec<String>>>, league_runtime::Shutdown) {
    let received = Arc::new(Mutex::new(vec![]));
    let seen = received.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |headers: http::HeaderMap| async move {
            let authorization = headers
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            seen.lock().expect("lock").push(authorization);
            axum::Json(
                serde_json::json!({"choices": [{"message": {"role": "assistant", "content": "even"}}]}),
            )
        }),
    );
    let (addr, shutdown) = league_testkit::tls::serve_tls_on_loopback(router).await;
    (format!("https://{addr}/v1/chat/completions"), received, shutdown)
}

#[tokio::test]
async fn a_hosted_model_on_https_is_asked_over_tls_and_one_not_trusted_never_gets_the_key() {
    let (url, received, _shutdown) = tls_endpoint().await;
    let trusting = LlmClient::from_config(&LlmConfig {
        llm_url: Some(url.clone()),
        llm_model: Some("test-model".to_owned()),
        llm_api_key: Some("k-123".to_owned().into()),
        llm_timeout: Duration::from_secs(10),
        tls: TlsConfig {
            extra_roots: Some(league_testkit::tls::CA.into()),
        },
    })
    .expect("a usable configuration")
    .expect("a client");
    assert_eq!(trusting.choose("P02", &[]).await.ok(), Some(Parity::Even));
    assert_eq!(*received.lock().expect("lock"), ["Bearer k-123"]);

    // The system's roots alone do not hold the test CA: the handshake fails before any request.
    let refused = client(&url, Duration::from_secs(10)).choose("P02", &[]).await;
    match refused {
        Err(LlmError::Request(said)) => assert!(
            said.contains("certificate is not trusted") && said.contains("LEAGUE_EXTRA_ROOTS"),
            "{said}"
        ),
        other => panic!("refused for its certificate, not {other:?}"),
    }
    assert_eq!(
        received.lock().expect("lock").len(),
        1,
        "the key went nowhere else"
    );
}

#[tokio::test]
async fn slow_erroring_malformed_and_unclear_answers_are_refused() {
    let slow = endpoint(Mode::Slow).await;
    let refused = client(&slow.url, Duration::from_millis(200))
        .choose("P02", &[])
        .await;
    assert!(matches!(refused, Err(LlmError::Timeout(_))), "{refused:?}");
    let failing = endpoint(Mode::Fails).await;
    let refused = client(&failing.url, Duration::from_secs(10))
        .choose("P02", &[])
        .await;
    assert!(matches!(refused, Err(LlmError::Status(500))), "{refused:?}");
    let malformed = endpoint(Mode::Malformed).await;
    let refused = client(&malformed.url, Duration::from_secs(10))
        .choose("P02", &[])
        .await;
    assert!(matches!(refused, Err(LlmError::Malformed(_))), "{refused:?}");
    let unclear = endpoint(Mode::Answers("I would say even, probably")).await;
    let refused = client(&unclear.url, Duration::from_secs(10))
        .choose("P02", &[])
        .await;
    assert!(matches!(refused, Err(LlmError::NotAParity(_))), "{refused:?}");
}

/// The parity an `llm` bot plays over `moves` moves, against a host using `url`, and who decided them.
async fn played(url: &str, moves: u32) -> (Vec<String>, LlmMoves) {
    let host = PlayerHost::new().with_llm(Some(client(url, Duration::from_millis(500))));
    host.add_bot("P01", "bot-llm", Behaviour::Llm);
    let mut choices = vec![];
    for step in 1..=moves {
        let request = RequestMoveRequest {
            player_id: "P01".into(),
            opponent_id: "P02".into(),
            step,
            context: Some(MatchContext {
                game_type: "even_odd".into(),
                match_id: format!("R{step}M1"),
                ..MatchContext::default()
            }),
            ..RequestMoveRequest::default()
        };
        let answer = host
            .request_move(tonic::Request::new(request))
            .await
            .expect("a move whatever the model does")
            .into_inner();
        let choice = answer
            .move_payload
            .and_then(|payload| payload.fields.get("parity_choice").cloned())
            .and_then(|value| match value.kind {
                Some(Kind::StringValue(choice)) => Some(choice),
                _ => None,
            })
            .expect("a parity choice");
        choices.push(choice);
    }
    let counted = host.llm_moves().remove("P01").unwrap_or_default();
    (choices, counted)
}

#[tokio::test]
async fn an_llm_bot_plays_the_models_answer_or_adaptive_when_it_fails() {
    let answering = endpoint(Mode::Answers("odd")).await;
    let (choices, counted) = played(&answering.url, 12).await;
    assert_eq!(choices, vec!["odd"; 12]);
    assert_eq!(answering.received.lock().expect("lock").len(), 12);
    assert_eq!((counted.of(Decider::Model), counted.fallbacks()), (12, 0));
    for (mode, reason) in [
        (Mode::Fails, Decider::Down),
        (Mode::Malformed, Decider::Nonsense),
        (Mode::Answers("I would say even, probably"), Decider::Nonsense),
        (Mode::Slow, Decider::Slow),
    ] {
        let broken = endpoint(mode).await;
        let (choices, counted) = played(&broken.url, 6).await;
        assert!(
            choices.iter().all(|choice| choice == "even" || choice == "odd"),
            "{mode:?}: {choices:?}"
        );
        assert_eq!(
            broken.received.lock().expect("lock").len(),
            6,
            "{mode:?}: asked every time"
        );
        assert_eq!(
            (
                counted.of(reason),
                counted.of(Decider::Model),
                counted.fallbacks()
            ),
            (6, 0, 6),
            "{mode:?}: {counted:?}"
        );
    }
}

#[tokio::test]
async fn in_another_game_the_model_is_not_asked_and_that_is_counted() {
    let answering = endpoint(Mode::Answers("odd")).await;
    let host = PlayerHost::new().with_llm(Some(client(&answering.url, Duration::from_secs(10))));
    host.add_bot("P01", "bot-llm", Behaviour::Llm);
    host.add_bot("P02", "bot-adaptive", "adaptive".parse().expect("a behaviour"));
    for player_id in ["P01", "P02"] {
        let request = RequestMoveRequest {
            player_id: player_id.into(),
            opponent_id: "P03".into(),
            step: 1,
            context: Some(MatchContext {
                game_type: "tic_tac_toe".into(),
                match_id: "R1M1".into(),
                ..MatchContext::default()
            }),
            ..RequestMoveRequest::default()
        };
        host.request_move(tonic::Request::new(request))
            .await
            .expect("a move all the same");
    }
    assert!(answering.received.lock().expect("lock").is_empty());
    let counted = host.llm_moves();
    assert_eq!(
        counted.keys().collect::<Vec<_>>(),
        ["P01"],
        "only llm bots are counted"
    );
    assert_eq!(counted["P01"].of(Decider::OtherGame), 1);
}

#[test]
fn without_configuration_the_strategy_is_unavailable_with_a_clear_message() {
    let config = league_player::app::PlayerConfig {
        strategies: "adaptive,llm".to_owned(),
        ..league_player::app::PlayerConfig::default()
    };
    let specs = config.specs().expect("llm is a behaviour name");
    assert!(specs.iter().any(|spec| spec.behaviour == Behaviour::Llm));
    let message = league_player::app::unavailable_llm(&specs, &config.llm)
        .expect_err("no endpoint configured")
        .to_string();
    assert!(
        message.contains("LEAGUE_LLM_URL") && message.contains("LEAGUE_LLM_MODEL"),
        "{message}"
    );
}
