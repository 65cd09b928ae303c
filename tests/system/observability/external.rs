//! A match with an external player is still one trace, through the real gateway: the referee's phase
//! span → the gateway's `PlayerService` server span → the gateway's JSON-RPC client span → the
//! `traceparent` the agent receives. And the gateway's inbound HTTP span continues the trace context
//! its caller sent (here, the agent's registration), down to the manager's server span.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;

use league_testkit::fake_agent::Received as Call;
use league_testkit::{Behaviour, FakeAgents};

use super::collector::{Collector, MatchTrace, Received};
use super::harness::{self, Setup, var};

/// The trace context the agent's registration carries, as if the agent traced its own work.
const CALLER_TRACE_ID: &str = "5b8efff798038103d269b633813fc60c";
const CALLER_SPAN_ID: &str = "eee19b7ec3c1b174";

const GATEWAY: &str = "league-gateway";

/// A W3C `traceparent`: trace id, parent span id, flags.
fn parse_traceparent(header: &str) -> (&str, &str, &str) {
    let parts: Vec<&str> = header.split('-').collect();
    assert_eq!(parts.len(), 4, "a traceparent: {header}");
    assert_eq!(parts[0], "00", "version 00: {header}");
    assert_eq!(parts[1].len(), 32, "a trace id: {header}");
    assert_eq!(parts[2].len(), 16, "a span id: {header}");
    (parts[1], parts[2], parts[3])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_match_with_an_external_player_is_one_trace_through_the_gateway() {
    let collector = Collector::start().await;
    // An external player that answers at once, in full, and keeps every call with its traceparent.
    let agent = FakeAgents::start(Behaviour::Instant).await;
    // Four players (two bots of the player host, the test's bot, the external agent): six matches,
    // three with the agent. The timeouts only bound a hang: every player answers at once.
    let league = harness::start(Setup {
        players: 2,
        referees: 1,
        strategies: "random,alternating",
        external_players: 1,
        timeout: Duration::from_secs(5),
        env: vec![var("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.as_str())],
    })
    .await;
    let traceparent = format!("00-{CALLER_TRACE_ID}-{CALLER_SPAN_ID}-01");
    let gateway_mcp = format!("{}/mcp", league.process("gateway").url);
    // In the message-type dialect: the method is the message type.
    let external = agent
        .register(
            &gateway_mcp,
            "traced-agent",
            "LEAGUE_REGISTER_REQUEST",
            &[("traceparent", &traceparent)],
        )
        .await
        .expect("the agent registers")
        .id;
    league.finished().await;
    let league_id = league.league_id.clone();
    // Every process exports its last spans before it exits.
    league.stop().await;
    let spans = collector.spans();
    let calls = agent.received();

    // The registration: the gateway's server span for POST /mcp continues the caller's trace, and the
    // manager's server span for the registration is its child.
    let caller_trace: Vec<&Received> = spans
        .iter()
        .filter(|span| span.trace_id == CALLER_TRACE_ID)
        .collect();
    let inbound: Vec<&&Received> = caller_trace
        .iter()
        .filter(|span| span.service == GATEWAY && span.name == "POST /mcp")
        .collect();
    assert_eq!(
        inbound.len(),
        1,
        "the gateway's inbound span is in the caller's trace: {caller_trace:#?}"
    );
    let inbound = inbound[0];
    assert_eq!(inbound.kind, SpanKind::Server);
    assert_eq!(
        inbound.parent_span_id, CALLER_SPAN_ID,
        "the caller's span is the parent"
    );
    let registered: Vec<&&Received> = caller_trace
        .iter()
        .filter(|span| {
            span.service == "league-manager"
                && span.kind == SpanKind::Server
                && span.parent_span_id == inbound.span_id
        })
        .collect();
    assert!(
        registered
            .iter()
            .any(|span| span.name == "league.v2.ManagerService/RegisterPlayer"),
        "the manager's registration span is the gateway's child: {caller_trace:#?}"
    );

    // Every call the agent received names a client span of the gateway, in that span's trace.
    let client_spans: Vec<&Received> = spans
        .iter()
        .filter(|span| span.service == GATEWAY && span.kind == SpanKind::Client)
        .collect();
    assert!(!calls.is_empty());
    for call in &calls {
        let header = call
            .traceparent
            .as_deref()
            .unwrap_or_else(|| panic!("a call without traceparent: {call:?}"));
        let (trace_id, parent, flags) = parse_traceparent(header);
        assert_eq!(flags, "01", "sampled: {call:?}");
        let named: Vec<&&Received> = client_spans
            .iter()
            .filter(|span| span.span_id == parent)
            .collect();
        assert_eq!(
            named.len(),
            1,
            "the traceparent names one client span of the gateway: {call:?}"
        );
        assert_eq!(named[0].trace_id, trace_id, "{call:?}");
        assert_eq!(named[0].attribute("rpc.system"), Some("jsonrpc"));
        assert_eq!(
            named[0].attribute("rpc.method"),
            Some(call.message_type()),
            "the agent registered in the message-type dialect"
        );
    }

    // Each match of the agent's is one trace from the referee through the gateway to the agent.
    let matches: Vec<&Received> = spans
        .iter()
        .filter(|span| span.name == "match")
        .filter(|span| {
            span.attribute("player_a_id") == Some(external.as_str())
                || span.attribute("player_b_id") == Some(external.as_str())
        })
        .collect();
    assert_eq!(matches.len(), 3, "three matches with {external}");
    let traces: HashSet<&str> = matches.iter().map(|span| span.trace_id.as_str()).collect();
    assert_eq!(traces.len(), 3, "one trace per match");
    for root in matches {
        let match_id = root.attribute("match_id").expect("a match id");
        let trace = MatchTrace::of(&spans, root, &league_id);
        let what = &trace.what;
        assert!(
            matches!(root.attribute("outcome"), Some("win" | "draw")),
            "{what}"
        );
        let services: BTreeSet<&str> = trace.spans.iter().map(|span| span.service.as_str()).collect();
        for service in ["league-referee", "league-manager", GATEWAY] {
            assert!(services.contains(service), "{service} in the trace: {what}");
        }
        let phase = |name: &str| trace.phase(name);
        let children = |parent: &Received| trace.children(parent);

        for (phase_name, method, message_type) in [
            (
                "invite",
                "league.v2.PlayerService/InviteToMatch",
                "GAME_INVITATION",
            ),
            (
                "collect",
                "league.v2.PlayerService/RequestMove",
                "CHOOSE_PARITY_CALL",
            ),
            ("game_over", "league.v2.PlayerService/NotifyGameOver", "GAME_OVER"),
        ] {
            let phase = phase(phase_name);
            assert_eq!(phase.service, "league-referee", "{what}");
            // The referee's call to the agent's player: the gateway's server span, under the phase
            // that made the call.
            let servers: Vec<&Received> = children(phase)
                .into_iter()
                .filter(|span| span.service == GATEWAY && span.name == method)
                .collect();
            assert!(
                !servers.is_empty(),
                "the gateway's {method} is a child of {phase_name}: {what}"
            );
            let mut outbound = HashSet::new();
            for server in servers {
                assert_eq!(server.kind, SpanKind::Server, "{what}");
                assert!(!server.error, "{what}");
                assert_eq!(server.attribute("match_id"), Some(match_id), "{what}");
                assert_eq!(server.attribute("player_id"), Some(external.as_str()), "{what}");
                assert_eq!(
                    server.attribute("conversation_id"),
                    root.attribute("conversation_id"),
                    "{what}"
                );
                // The JSON-RPC call to the agent: a client span under the server span.
                let clients: Vec<&Received> = children(server)
                    .into_iter()
                    .filter(|span| span.service == GATEWAY && span.kind == SpanKind::Client)
                    .collect();
                assert!(
                    !clients.is_empty(),
                    "the outbound call is a child of the gateway's {method}: {what}"
                );
                for client in clients {
                    assert_eq!(client.attribute("rpc.method"), Some(message_type), "{what}");
                    assert!(!client.error, "{what}");
                    outbound.insert(client.span_id.as_str());
                }
            }
            // What the agent received: one call per client span, each naming it as the parent, in
            // the match's trace.
            let received: Vec<&Call> = calls
                .iter()
                .filter(|call| {
                    call.message_type() == message_type && call.params["match_id"].as_str() == Some(match_id)
                })
                .collect();
            let parents: HashSet<&str> = received
                .iter()
                .map(|call| {
                    let (trace_id, parent, _) =
                        parse_traceparent(call.traceparent.as_deref().expect("a traceparent"));
                    assert_eq!(
                        trace_id, root.trace_id,
                        "{message_type} in the match's trace: {what}"
                    );
                    parent
                })
                .collect();
            assert_eq!(received.len(), outbound.len(), "{message_type}: {what}");
            assert_eq!(
                parents, outbound,
                "{message_type}'s traceparent names the gateway's client span: {what}"
            );
        }

        let reports: Vec<&Received> = children(phase("report"))
            .into_iter()
            .filter(|span| span.name == "league.v2.ManagerService/ReportMatchResult")
            .collect();
        assert_eq!(
            reports.len(),
            1,
            "the manager's span is the report's child: {what}"
        );
        assert_eq!(reports[0].service, "league-manager", "{what}");
        assert_eq!(reports[0].attribute("match_id"), Some(match_id), "{what}");
    }
}
