//! An external referee's MATCH_RESULT_REPORT becomes a result only if it is one (issue 52): a status of
//! the four, from a referee that called the match's players, with the players' own answers and the
//! outcome the Even/Odd rule gives. Anything else is refused with E002 naming the field, the match goes
//! back to the queue with nobody charged, and the referee gets a `refused_result` compliance warning.

use crate::support;

use league_testkit::observe;
use league_v2::compliance::Mode;
use serde_json::{Value, json};
use support::*;

/// The league error code of a refused call.
fn refused(answer: &Value) -> &str {
    answer["error"]["data"]["error_code"]
        .as_str()
        .unwrap_or_else(|| panic!("not refused: {answer}"))
}

/// The match's `(status, claims)`, how many matches are finished, and the games in the standings.
async fn row(manager: &TestManager) -> (String, i32, i64, i64) {
    sqlx::query_as(
        "select status, claims, (select count(*) from matches where status = 'finished'),
                (select coalesce(sum(wins + draws + losses), 0)::bigint from standings)
         from matches where match_id = 'R1M1'",
    )
    .fetch_one(&manager.pool)
    .await
    .expect("the match")
}

/// An external referee, as its calls reach the gateway.
struct Referee<'a> {
    gateway: &'a TestGateway,
    registered: Registered,
}

impl Referee<'_> {
    /// Pulls until the referee holds the league's match (the gateway's claimer for it may take it first,
    /// between a pull's look and its claim: the next pull lists it); its id.
    async fn hold_match(&self) -> String {
        for _ in 0..100 {
            let pulled = self
                .gateway
                .rpc(
                    "get_assigned_matches",
                    json!({"referee_id": self.registered.id, "auth_token": self.registered.token}),
                )
                .await;
            if let Some(match_id) = pulled["result"]["matches"][0]["match_id"].as_str() {
                return match_id.to_owned();
            }
            tokio::task::yield_now().await;
        }
        panic!("no match to referee after 100 pulls");
    }

    /// A league.v2 message of the referee's about `match_id`, with `fields`.
    async fn send(&self, message_type: &str, match_id: &str, fields: Value) -> Value {
        let mut message = json!({
            "protocol": "league.v2",
            "message_type": message_type,
            "sender": format!("referee:{}", self.registered.id),
            "timestamp": "2026-12-05T10:00:00Z",
            "conversation_id": "conv-referee-reports",
            "auth_token": self.registered.token,
            "league_id": LEAGUE_ID,
            "round_id": 1,
            "match_id": match_id,
        });
        if let (Value::Object(message), Value::Object(fields)) = (&mut message, fields) {
            message.extend(fields);
        }
        let body = json!({"jsonrpc": "2.0", "method": message_type, "params": message, "id": 1});
        self.gateway.post(body.to_string()).await.json()
    }

    /// CHOOSE_PARITY_CALL to `player`: the parity it answered.
    async fn ask(&self, match_id: &str, player: &str) -> String {
        let answer = self
            .send(
                "CHOOSE_PARITY_CALL",
                match_id,
                json!({"player_id": player, "step_context": {"action": "choose_parity"}}),
            )
            .await;
        answer["result"]["parity_choice"]
            .as_str()
            .unwrap_or_else(|| panic!("{player} chose nothing: {answer}"))
            .to_owned()
    }

    async fn report(&self, match_id: &str, result: Value) -> Value {
        self.send("MATCH_RESULT_REPORT", match_id, json!({"result": result}))
            .await
    }
}

fn other(parity: &str) -> &'static str {
    if parity == "even" { "odd" } else { "even" }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_report_that_is_no_result_is_refused_warned_and_the_match_played_again() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    // Players that answer CHOOSE_PARITY_CALL (even and odd in turn); a referee that takes START_MATCH.
    let players = spawn_agents(Behaviour::Instant).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    let alice = register_player(&gateway, &players, "alice").await.id;
    let bob = register_player(&gateway, &players, "bob").await.id;
    let referee = Referee {
        gateway: &gateway,
        registered: register(
            &gateway,
            "register_referee",
            referee_registration("ref", &agents.endpoint("ref")),
        )
        .await,
    };
    start_league(&gateway).await;

    // Issue 52's reproduction: no player called, a status that is no result.
    let match_id = referee.hold_match().await;
    let answer = referee.report(&match_id, json!({"status": "ABORTED"})).await;
    assert_eq!(refused(&answer), "E002", "{answer}");
    assert!(answer.to_string().contains("result.status"), "{answer}");
    assert!(answer.to_string().contains("given back"), "{answer}");
    let (status, _, finished, played) = row(&manager).await;
    assert_eq!(
        (finished, played),
        (0, 0),
        "nothing recorded, nobody charged (status {status})"
    );
    gateway
        .wait_for_warnings("the refused report's warning", |warnings| {
            has_warning(warnings, &referee.registered.id, "refused_result")
        })
        .await;

    // A well-formed result for a match whose players the referee never called.
    let match_id = referee.hold_match().await;
    let answer = referee
        .report(&match_id, json!({"winner": alice, "score": {&alice: 3, &bob: 0}}))
        .await;
    assert_eq!(refused(&answer), "E002", "{answer}");
    assert!(answer.to_string().contains("called neither player"), "{answer}");

    // Choices the players did not make, an outcome against the rule, scores against the status.
    let mut bad_reports = 0;
    for field in ["result.details.choices", "result.winner", "scores"] {
        let match_id = referee.hold_match().await;
        let said_a = referee.ask(&match_id, &alice).await;
        let said_b = referee.ask(&match_id, &bob).await;
        let drawn = if said_a == "even" { 4 } else { 3 };
        let result = match field {
            "result.details.choices" => json!({
                "winner": alice, "score": {&alice: 3, &bob: 0},
                "details": {"drawn_number": 5, "choices": {&alice: other(&said_a), &bob: said_b}},
            }),
            // Whoever matched the number's parity won; the report names the other.
            "result.winner" if said_a != said_b => json!({
                "winner": bob, "score": {&alice: 0, &bob: 3},
                "details": {"drawn_number": drawn, "choices": {&alice: said_a, &bob: said_b}},
            }),
            "result.winner" => json!({
                "winner": alice, "score": {&alice: 3, &bob: 0},
                "details": {"drawn_number": drawn, "choices": {&alice: said_a, &bob: said_b}},
            }),
            _ => json!({"status": "WIN", "winner": alice, "score": {&alice: 1, &bob: 1}}),
        };
        let answer = referee.report(&match_id, result).await;
        assert_eq!(refused(&answer), "E002", "{field}: {answer}");
        let expected = if said_a == said_b && field == "result.winner" {
            "result.status"
        } else {
            field
        };
        assert!(answer.to_string().contains(expected), "{field}: {answer}");
        let (_, _, finished, played) = row(&manager).await;
        assert_eq!((finished, played), (0, 0), "{field}: nothing recorded");
        bad_reports += 1;
    }

    // Played again, and reported as it happened: recorded.
    let match_id = referee.hold_match().await;
    let said_a = referee.ask(&match_id, &alice).await;
    let said_b = referee.ask(&match_id, &bob).await;
    let drawn = if said_a == "even" { 4 } else { 3 };
    let (winner, score) = if said_a == said_b {
        (json!("DRAW"), json!({&alice: 1, &bob: 1}))
    } else {
        (json!(alice), json!({&alice: 3, &bob: 0}))
    };
    let answer = referee
        .report(
            &match_id,
            json!({"winner": winner, "score": score,
                   "details": {"drawn_number": drawn, "choices": {&alice: said_a, &bob: said_b}}}),
        )
        .await;
    assert_eq!(answer["result"]["status"], "ACCEPTED", "{answer}");
    let (status, claims, finished, played) = row(&manager).await;
    assert_eq!(
        (status.as_str(), finished, played),
        ("finished", 1, 2),
        "recorded once"
    );
    assert!(
        claims >= 2 + bad_reports,
        "played again after each refusal: {claims} claims"
    );
    let warnings = gateway
        .wait_for_warnings("every refused report counted", |warnings| {
            warnings.iter().any(|w| {
                w["agent_id"] == referee.registered.id.as_str()
                    && w["kind"] == "refused_result"
                    && w["count"].as_u64() >= Some(5)
            })
        })
        .await;
    assert!(has_warning(&warnings, &referee.registered.id, "refused_result"));

    // The live page lists it for anyone watching, with the refused report as its example.
    let (status, _, body) = crate::live::fetch(
        &crate::live::client(),
        "GET",
        &format!("http://{}/api/warnings", gateway.http),
        "content-type",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).expect("JSON");
    let shown = listed["warnings"]
        .as_array()
        .and_then(|warnings| {
            warnings
                .iter()
                .find(|w| w["agent_id"] == referee.registered.id.as_str() && w["kind"] == "refused_result")
        })
        .unwrap_or_else(|| panic!("the live page lists the refused results: {listed}"));
    assert!(shown["count"].as_u64() >= Some(5), "{shown}");
    assert!(
        shown["example"].as_str().is_some_and(|e| e.contains("R1M1")),
        "{shown}"
    );
}

/// The match's `(status, referee)`.
async fn holder(manager: &TestManager) -> (String, Option<String>) {
    sqlx::query_as("select status, referee_id from matches where match_id = 'R1M1'")
        .fetch_one(&manager.pool)
        .await
        .expect("the match")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_reports_match_is_played_again_by_another_referee() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let players = spawn_agents(Behaviour::Instant).await;
    let agents = spawn_agents(Behaviour::Clean).await;
    register_player(&gateway, &players, "alice").await;
    register_player(&gateway, &players, "bob").await;
    let mut referees = Vec::new();
    for name in ["first", "second"] {
        referees.push(
            register(
                &gateway,
                "register_referee",
                referee_registration(name, &agents.endpoint(name)),
            )
            .await,
        );
    }
    start_league(&gateway).await;
    // Whichever referee's claimer took the match reports what is no result.
    let held_by = observe("a referee takes the match", PATIENCE, async || {
        let (status, referee) = holder(&manager).await;
        referee.filter(|_| status == "running")
    })
    .await;
    let (holding, other): (Vec<_>, Vec<_>) = referees.into_iter().partition(|r| r.id == held_by);
    let referee = Referee {
        gateway: &gateway,
        registered: holding.into_iter().next().expect("the holder"),
    };
    let match_id = referee.hold_match().await;
    let answer = referee.report(&match_id, json!({"status": "CANCELLED"})).await;
    assert_eq!(refused(&answer), "E002", "{answer}");
    // The other referee plays it; the refused one is passed by while the other is live.
    let other = other.into_iter().next().expect("the other referee");
    observe("the other referee gets the match", PATIENCE, async || {
        let (status, referee) = holder(&manager).await;
        (status == "running" && referee.as_deref() == Some(other.id.as_str())).then_some(())
    })
    .await;
}
