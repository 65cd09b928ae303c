//! What the league sends external agents, on real HTTP: the outbound `auth_token` on every message (and
//! refused when presented back), the manager's sender form learned per agent (a greeting before the
//! registration is answered; a call refused over the sender, retried once in the other form), GAME_ERROR complete, method names
//! found once per message type (the lower-case message type too), the nested dialect, and refusals of
//! notifications recorded as what they were.
//!
//! The agents here are picky ones: the test kit's fake agents in the behaviour each test chooses,
//! recording every call and what it answered.

use crate::support;

use std::time::{Duration, SystemTime};

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::*;
use league_v2::compliance::Mode;
use serde_json::{Value, json};
use support::*;

/// A picky agent: the test kit's fake agents in one of the picky behaviours, keeping every call and
/// the status it answered; the one agent they play is called `picky`.
struct PickyAgent(FakeAgents);

impl PickyAgent {
    async fn spawn(picky: Behaviour) -> Self {
        Self(FakeAgents::start(picky).await)
    }

    fn endpoint(&self) -> String {
        self.0.endpoint("picky")
    }

    fn calls(&self) -> Vec<Received> {
        self.0.received()
    }
}

/// What every test here starts from: a fresh manager, a lenient gateway in front of it, and a picky
/// agent registered through it as a player.
struct PickyPlayer {
    manager: TestManager,
    gateway: TestGateway,
    agent: PickyAgent,
    /// The player's id and its own token.
    me: Registered,
    /// The registration's answer.
    answer: Value,
}

impl PickyPlayer {
    /// A `picky` agent registered as `name` with `register_player`.
    async fn register(picky: Behaviour, name: &str) -> Self {
        Self::register_with(picky, "register_player", |endpoint| {
            player_registration(name, endpoint)
        })
        .await
    }

    /// A `picky` agent registered by `method` with the params `registration` makes of its endpoint.
    async fn register_with(picky: Behaviour, method: &str, registration: impl FnOnce(&str) -> Value) -> Self {
        let manager = spawn_manager().await;
        let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
        let agent = PickyAgent::spawn(picky).await;
        let (me, answer) = register_answered(&gateway, method, registration(&agent.endpoint())).await;
        Self {
            manager,
            gateway,
            agent,
            me,
            answer,
        }
    }

    /// A ROUND_ANNOUNCEMENT (event `event_id`) sent to the player through `gateway`'s bridge, as the
    /// manager's event delivery sends it; the gateway takes it as delivered.
    async fn announce_round(&self, gateway: &TestGateway, event_id: &str) {
        gateway
            .players()
            .notify_league_event(round_announcement(&self.me.id, event_id))
            .await
            .unwrap_or_else(|status| panic!("{event_id} not delivered: {status:?}"));
    }
}

fn context() -> Option<MatchContext> {
    Some(MatchContext {
        league_id: LEAGUE_ID.into(),
        round_id: 1,
        match_id: "R1M1".into(),
        game_type: "even_odd".into(),
        conversation_id: "conv-outbound".into(),
        referee_id: "REF01".into(),
    })
}

fn invitation(player_id: &str) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: player_id.into(),
        context: context(),
        role_in_match: Role::PlayerA as i32,
        opponent_id: "P99".into(),
        deadline: Some(prost_types::Timestamp::from(
            SystemTime::now() + Duration::from_secs(10),
        )),
    }
}

fn round_announcement(player_id: &str, event_id: &str) -> NotifyLeagueEventRequest {
    NotifyLeagueEventRequest {
        player_id: player_id.into(),
        league_id: LEAGUE_ID.into(),
        event_id: event_id.into(),
        event: Some(Event::RoundAnnouncement(RoundAnnouncement {
            round_id: 1,
            matches: Vec::new(),
        })),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_message_carries_the_outbound_token_which_cannot_act() {
    let player = PickyPlayer::register(Behaviour::TypedSenders, "alpha").await;
    let (gateway, me) = (&player.gateway, &player.me);
    let outbound = player.answer["league_auth_token"]
        .as_str()
        .expect("league_auth_token")
        .to_owned();
    assert!(outbound.starts_with("league_out_"), "{outbound}");
    assert_ne!(outbound, me.token);

    gateway
        .players()
        .notify_game_error(NotifyGameErrorRequest {
            player_id: me.id.clone(),
            context: context(),
            error_code: "E001".into(),
            error_description: "no GAME_JOIN_ACK in time".into(),
            affected_player: me.id.clone(),
            action_required: "RESEND_JOIN_ACK".into(),
            retry_count: 1,
            max_retries: 3,
            consequence: "TECHNICAL_LOSS".into(),
        })
        .await
        .expect("GAME_ERROR delivered");
    player.announce_round(gateway, "e1").await;
    let calls = player.agent.calls();
    assert!(!calls.is_empty());
    // Every league message (MCP's `initialize`, asked once after the first refusal, is none: ADR 0071).
    for call in calls.iter().filter(|call| call.method != "initialize") {
        assert_eq!(call.params["auth_token"], outbound.as_str(), "{}", call.method);
    }

    // GAME_ERROR, complete: the specification's fields, `retry_info`, and the flat counts.
    let game_error = calls
        .iter()
        .find(|call| call.params["message_type"] == "GAME_ERROR")
        .expect("GAME_ERROR sent");
    for field in [
        "match_id",
        "error_code",
        "error_description",
        "affected_player",
        "action_required",
        "consequence",
    ] {
        assert!(
            game_error.params[field].as_str().is_some_and(|v| !v.is_empty()),
            "{field}: {}",
            game_error.params
        );
    }
    assert_eq!(
        game_error.params["retry_info"],
        json!({"retry_count": 1, "max_retries": 3})
    );
    assert_eq!(game_error.params["retry_count"], 1);

    // Presented back to the gateway, the outbound token is refused: it proves the league, not the agent.
    let query = json!({
        "protocol": "league.v2", "message_type": "LEAGUE_QUERY", "sender": format!("player:{}", me.id),
        "timestamp": "2026-11-21T08:53:40Z", "conversation_id": "c-q", "auth_token": outbound,
        "league_id": LEAGUE_ID, "query_type": "GET_STANDINGS",
    });
    let refused = gateway.rpc("league_query", query.clone()).await;
    assert_eq!(refused["error"]["data"]["error_code"], "E012", "{refused}");
    let mut with_own = query;
    with_own["auth_token"] = me.token.clone().into();
    let answered = gateway.rpc("league_query", with_own).await;
    assert_eq!(answered["result"]["success"], true, "{answered}");
}

/// A call from a referee that does not say which match it belongs to (or a game over without its result)
/// is refused with E002 and never reaches the agent with empty ids.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_without_its_match_is_refused_before_the_agent() {
    let player = PickyPlayer::register(Behaviour::TypedSenders, "alpha").await;
    let me = &player.me;
    let calls_before = player.agent.calls().len();
    let mut players = player.gateway.players();
    let refusals = [
        players
            .invite_to_match(InviteToMatchRequest {
                context: None,
                ..invitation(&me.id)
            })
            .await
            .expect_err("no context"),
        players
            .notify_game_over(NotifyGameOverRequest {
                player_id: me.id.clone(),
                context: context(),
                result: None,
            })
            .await
            .expect_err("no result"),
    ];
    for status in refusals {
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert_eq!(
            league_proto::error_code::code_of(&status),
            Some(league_proto::ErrorCode::MissingRequiredField),
            "{status:?}"
        );
    }
    assert_eq!(
        player.agent.calls().len(),
        calls_before,
        "the agent was not called"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_registration_is_answered_once_in_the_form_its_greeting_showed() {
    let player = PickyPlayer::register(Behaviour::TypedSenders, "bravo").await;
    // Greeted before the answer: the bare form refused, the typed form taken, and the answer typed.
    assert_eq!(
        player.answer["sender"], "league_manager:LM01",
        "{}",
        player.answer
    );
    assert_eq!(
        sent(&player.agent),
        [
            (400, "LEAGUE_STANDINGS_UPDATE", "league_manager"),
            // Asked once whether it is an MCP server (ADR 0071): it refuses MCP's `initialize` too.
            (400, "", ""),
            (200, "LEAGUE_STANDINGS_UPDATE", "league_manager:LM01"),
        ]
        .map(|(status, message_type, sender)| (status, message_type.to_owned(), sender.to_owned()))
    );
    let agents_before = snapshot(&player.manager.pool).await.agents;
    // Registering again without its credentials gets no second answer: E014, and how to resume.
    let registration = player_registration("bravo", &player.agent.endpoint());
    let again = player.gateway.rpc("register_player", registration).await;
    assert_eq!(again["result"]["status"], "REJECTED", "{again}");
    assert_eq!(again["result"]["error_code"], "E014", "{again}");
    assert!(again["result"].get("auth_token").is_none(), "{again}");
    assert_eq!(snapshot(&player.manager.pool).await.agents, agents_before);

    // The league writes the manager the way this agent takes it: no refusal at all.
    player.announce_round(&player.gateway, "e1").await;
    let calls = sent(&player.agent);
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!((calls[3].0, calls[3].2.as_str()), (200, "league_manager:LM01"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_refused_over_the_sender_is_retried_once_in_the_other_form_and_remembered() {
    let player = PickyPlayer::register(Behaviour::TypedSenders, "charlie").await;
    for event_id in ["e1", "e2", "e3"] {
        player.announce_round(&player.gateway, event_id).await;
    }
    let senders: Vec<(u16, String)> = sent(&player.agent)
        .into_iter()
        .map(|(status, _, sender)| (status, sender))
        .collect();
    // The first call, the registration's greeting, is refused over the sender (the league asks once
    // whether it is an MCP server: no, ADR 0071) and sent again in the other form; from then on every
    // call is in that form.
    let typed = "league_manager:LM01".to_owned();
    assert_eq!(
        senders,
        [
            (400, "league_manager".to_owned()),
            (400, String::new()),
            (200, typed.clone()),
            (200, typed.clone()),
            (200, typed.clone()),
            (200, typed)
        ]
    );
    // Delivered: nothing to warn about.
    let warnings = player.gateway.compliance_warnings().await;
    assert!(
        !has_warning(&warnings, &player.me.id, "refused_sender"),
        "{warnings:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lower_case_message_type_is_found_once_per_message_type() {
    // Registered with the canonical name: the league starts there.
    let player = PickyPlayer::register(Behaviour::LowerCaseMethods, "delta").await;
    for event_id in ["e1", "e2", "e3"] {
        player.announce_round(&player.gateway, event_id).await;
    }
    let methods: Vec<String> = player.agent.calls().into_iter().map(|call| call.method).collect();
    assert_eq!(
        methods,
        [
            // The registration's greeting finds the agent's names (the first -32601, before any result,
            // has the league ask once whether it is an MCP server: ADR 0071)...
            "update_standings",
            "initialize",
            "LEAGUE_STANDINGS_UPDATE",
            "league_standings_update",
            // ...and every later message type is tried in them first.
            "round_announcement",
            "round_announcement",
            "round_announcement"
        ]
    );
    let me = &player.me.id;
    let warnings = player
        .gateway
        .wait_for_warnings("the dialect fallback", |w| {
            has_warning(w, me, "method_dialect_fallback")
        })
        .await;
    assert!(!has_warning(&warnings, me, "unimplemented_notification"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_notification_is_recorded_as_what_it_was() {
    let player = PickyPlayer::register(Behaviour::RefusesAuth, "echo").await;
    // Taken as delivered: sending it again would be refused again.
    player.announce_round(&player.gateway, "e1").await;
    let me = &player.me.id;
    let warnings = player
        .gateway
        .wait_for_warnings("refused_auth", |w| has_warning(w, me, "refused_auth"))
        .await;
    assert_eq!(warning_kinds(&warnings, me), ["refused_auth"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_that_registers_nested_is_called_nested() {
    let player = PickyPlayer::register_with(
        Behaviour::Nested,
        "league_register_request",
        |endpoint| json!({"league_register_request": player_registration("foxtrot", endpoint)}),
    )
    .await;
    let joined = player
        .gateway
        .players()
        .invite_to_match(invitation(&player.me.id))
        .await
        .expect("invitation")
        .into_inner();
    assert!(joined.accept);
    // Its greeting and the invitation, both nested.
    let calls = player.agent.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].method, "league_standings_update");
    assert_eq!(calls[1].method, "game_invitation");
    assert_eq!(
        calls[1].params["game_invitation"]["message_type"],
        "GAME_INVITATION"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sender_form_learned_at_one_replica_is_used_by_the_others() {
    // Both replicas up before the agent registers at the first.
    let manager = spawn_manager().await;
    let first = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let second = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::TypedSenders).await;
    let registration = player_registration("golf", &agent.endpoint());
    let (me, answer) = register_answered(&first, "register_player", registration).await;
    let player = PickyPlayer {
        manager,
        gateway: first,
        agent,
        me,
        answer,
    };
    player.announce_round(&player.gateway, "e1").await;
    // The form is stored with the registration in the background: wait until it is there.
    league_testkit::observe("the sender form stored as typed", PATIENCE, async || {
        let (stored,): (Option<String>,) = sqlx::query_as(
            "select label_values[array_position(label_keys, 'league.sender_form')] from agents where agent_id = $1",
        )
        .bind(&player.me.id)
        .fetch_one(&player.manager.pool)
        .await
        .expect("the agent's labels");
        (stored.as_deref() == Some("typed")).then_some(())
    })
    .await;
    // The other replica had never seen the agent: its first call is in the stored form.
    player.announce_round(&second, "e2").await;
    let statuses: Vec<u16> = player.agent.calls().into_iter().map(|call| call.status).collect();
    // The greeting (refused bare, MCP's `initialize` asked once and refused, taken typed), then one
    // call at each replica, typed.
    assert_eq!(statuses, [400, 400, 200, 200, 200]);
}

/// Every call the agent took: its status, message type and sender.
fn sent(agent: &PickyAgent) -> Vec<(u16, String, String)> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    agent
        .calls()
        .into_iter()
        .map(|call| {
            (
                call.status,
                text(&call.params["message_type"]),
                text(&call.params["sender"]),
            )
        })
        .collect()
}

/// An agent whose server is not up for its first request (503, as a proxy answers for a server still
/// starting), then answers every call: the methods it was sent and the status of each.
async fn slow_starting_agent() -> (String, std::sync::Arc<std::sync::Mutex<Vec<(String, u16)>>>) {
    use axum::response::IntoResponse;
    let seen: std::sync::Arc<std::sync::Mutex<Vec<(String, u16)>>> = Default::default();
    let log = seen.clone();
    let handler = move |axum::Json(request): axum::Json<Value>| {
        let log = log.clone();
        async move {
            let method = request["method"].as_str().unwrap_or_default().to_owned();
            let mut log = log.lock().expect("log");
            if log.is_empty() {
                log.push((method, 503));
                return (http::StatusCode::SERVICE_UNAVAILABLE, "starting").into_response();
            }
            log.push((method, 200));
            let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"status": "acknowledged"}});
            axum::Json(answer).into_response()
        }
    };
    let router = axum::Router::new().route("/mcp", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/mcp"), seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_call_an_agent_cannot_take_is_sent_again_at_once() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let (endpoint, seen) = slow_starting_agent().await;
    let (me, _) = register_answered(
        &gateway,
        "register_player",
        player_registration("late", &endpoint),
    )
    .await;
    // The registration's greeting met the server not yet up, and was sent again at once (within the
    // greeting's own 2 s, so not after the referee's retry delay).
    let greeting: Vec<(String, u16)> = seen.lock().expect("seen").clone();
    assert_eq!(
        greeting,
        [
            ("update_standings".to_owned(), 503),
            ("update_standings".to_owned(), 200)
        ],
        "{greeting:?}"
    );
    gateway
        .players()
        .notify_league_event(round_announcement(&me.id, "e1"))
        .await
        .expect("delivered");
    assert_eq!(seen.lock().expect("seen").len(), 3);
}
