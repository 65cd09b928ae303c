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

async fn registered(gateway: &TestGateway, method: &str, params: Value) -> (Registered, Value) {
    let response = gateway.rpc(method, params).await;
    let result = response["result"].clone();
    let registered = Registered {
        id: result["player_id"].as_str().expect("player id").to_owned(),
        token: result["auth_token"].as_str().expect("token").to_owned(),
    };
    (registered, result)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_message_carries_the_outbound_token_which_cannot_act() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::TypedSenders).await;
    let (me, result) = registered(
        &gateway,
        "register_player",
        player_registration("alpha", &agent.endpoint()),
    )
    .await;
    let outbound = result["league_auth_token"]
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
    gateway
        .players()
        .notify_league_event(round_announcement(&me.id, "e1"))
        .await
        .expect("ROUND_ANNOUNCEMENT delivered");
    let calls = agent.calls();
    assert!(!calls.is_empty());
    for call in &calls {
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
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::TypedSenders).await;
    let (me, _) = registered(
        &gateway,
        "register_player",
        player_registration("alpha", &agent.endpoint()),
    )
    .await;
    let calls_before = agent.calls().len();
    let mut players = gateway.players();
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
    assert_eq!(agent.calls().len(), calls_before, "the agent was not called");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_registration_is_answered_once_in_the_form_its_greeting_showed() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::TypedSenders).await;
    let registration = player_registration("bravo", &agent.endpoint());
    let (first, answer) = registered(&gateway, "register_player", registration.clone()).await;
    // Greeted before the answer: the bare form refused, the typed form taken, and the answer typed.
    assert_eq!(answer["sender"], "league_manager:LM01", "{answer}");
    let greeting: Vec<(u16, Value, Value)> = agent
        .calls()
        .into_iter()
        .map(|call| {
            (
                call.status,
                call.params["message_type"].clone(),
                call.params["sender"].clone(),
            )
        })
        .collect();
    assert_eq!(
        greeting,
        [
            (400, json!("LEAGUE_STANDINGS_UPDATE"), json!("league_manager")),
            (
                200,
                json!("LEAGUE_STANDINGS_UPDATE"),
                json!("league_manager:LM01")
            ),
        ]
    );
    let agents_before = snapshot(&manager.pool).await.agents;
    // Registering again without its credentials gets no second answer: E014, and how to resume.
    let again = gateway.rpc("register_player", registration).await;
    assert_eq!(again["result"]["status"], "REJECTED", "{again}");
    assert_eq!(again["result"]["error_code"], "E014", "{again}");
    assert!(again["result"].get("auth_token").is_none(), "{again}");
    assert_eq!(snapshot(&manager.pool).await.agents, agents_before);

    // The league writes the manager the way this agent takes it: no refusal at all.
    gateway
        .players()
        .notify_league_event(round_announcement(&first.id, "e1"))
        .await
        .expect("delivered");
    let calls = agent.calls();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(
        (calls[2].status, calls[2].params["sender"].as_str()),
        (200, Some("league_manager:LM01"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_refused_over_the_sender_is_retried_once_in_the_other_form_and_remembered() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::TypedSenders).await;
    let (me, _) = registered(
        &gateway,
        "register_player",
        player_registration("charlie", &agent.endpoint()),
    )
    .await;
    for event_id in ["e1", "e2", "e3"] {
        gateway
            .players()
            .notify_league_event(round_announcement(&me.id, event_id))
            .await
            .expect("delivered");
    }
    let senders: Vec<(u16, String)> = agent
        .calls()
        .into_iter()
        .map(|call| {
            (
                call.status,
                call.params["sender"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    // The first call, the registration's greeting, is refused over the sender and sent again in the
    // other form; from then on every call is in that form.
    let typed = "league_manager:LM01".to_owned();
    assert_eq!(
        senders,
        [
            (400, "league_manager".to_owned()),
            (200, typed.clone()),
            (200, typed.clone()),
            (200, typed.clone()),
            (200, typed)
        ]
    );
    // Delivered: nothing to warn about.
    let warnings = gateway.compliance_warnings().await;
    assert!(!has_warning(&warnings, &me.id, "refused_sender"), "{warnings:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lower_case_message_type_is_found_once_per_message_type() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::LowerCaseMethods).await;
    // Registered with the canonical name: the league starts there.
    let (me, _) = registered(
        &gateway,
        "register_player",
        player_registration("delta", &agent.endpoint()),
    )
    .await;
    for event_id in ["e1", "e2", "e3"] {
        gateway
            .players()
            .notify_league_event(round_announcement(&me.id, event_id))
            .await
            .expect("delivered");
    }
    let methods: Vec<String> = agent.calls().into_iter().map(|call| call.method).collect();
    assert_eq!(
        methods,
        [
            // The registration's greeting finds the agent's names...
            "update_standings",
            "LEAGUE_STANDINGS_UPDATE",
            "league_standings_update",
            // ...and every later message type is tried in them first.
            "round_announcement",
            "round_announcement",
            "round_announcement"
        ]
    );
    let warnings = gateway
        .wait_for_warnings("the dialect fallback", |w| {
            has_warning(w, &me.id, "method_dialect_fallback")
        })
        .await;
    assert!(!has_warning(&warnings, &me.id, "unimplemented_notification"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_notification_is_recorded_as_what_it_was() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::RefusesAuth).await;
    let (me, _) = registered(
        &gateway,
        "register_player",
        player_registration("echo", &agent.endpoint()),
    )
    .await;
    gateway
        .players()
        .notify_league_event(round_announcement(&me.id, "e1"))
        .await
        .expect("taken as delivered: sending it again would be refused again");
    let warnings = gateway
        .wait_for_warnings("refused_auth", |w| has_warning(w, &me.id, "refused_auth"))
        .await;
    assert_eq!(warning_kinds(&warnings, &me.id), ["refused_auth"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_that_registers_nested_is_called_nested() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::Nested).await;
    let (me, _) = registered(
        &gateway,
        "league_register_request",
        json!({"league_register_request": player_registration("foxtrot", &agent.endpoint())}),
    )
    .await;
    let joined = gateway
        .players()
        .invite_to_match(invitation(&me.id))
        .await
        .expect("invitation")
        .into_inner();
    assert!(joined.accept);
    // Its greeting and the invitation, both nested.
    let calls = agent.calls();
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
    let manager = spawn_manager().await;
    let first = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let second = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let agent = PickyAgent::spawn(Behaviour::TypedSenders).await;
    let (me, _) = registered(
        &first,
        "register_player",
        player_registration("golf", &agent.endpoint()),
    )
    .await;
    first
        .players()
        .notify_league_event(round_announcement(&me.id, "e1"))
        .await
        .expect("delivered");
    // The form is stored with the registration in the background: wait until it is there.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (stored,): (Option<String>,) = sqlx::query_as(
            "select label_values[array_position(label_keys, 'league.sender_form')] from agents where agent_id = $1",
        )
        .bind(&me.id)
        .fetch_one(&manager.pool)
        .await
        .expect("the agent's labels");
        if stored.as_deref() == Some("typed") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "sender form not stored: {stored:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The other replica had never seen the agent: its first call is in the stored form.
    second
        .players()
        .notify_league_event(round_announcement(&me.id, "e2"))
        .await
        .expect("delivered");
    let statuses: Vec<u16> = agent.calls().into_iter().map(|call| call.status).collect();
    // The greeting (refused bare, taken typed), then one call at each replica, typed.
    assert_eq!(statuses, [400, 200, 200, 200]);
}
