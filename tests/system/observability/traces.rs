//! One trace per match, across processes: the referee's `match` span is its root, the phases are its
//! children, and the player host's and the manager's server spans for the calls of that match hang off
//! the phase that made them — with the match's attributes, and failures marked as errors.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;

use super::collector::{Collector, MatchTrace, Received};
use super::harness::{self, Setup, var};

#[tokio::test(flavor = "multi_thread")]
async fn every_match_is_one_trace_across_referee_manager_and_player_host() {
    let collector = Collector::start().await;
    let league = harness::start(Setup {
        players: 4,
        referees: 2,
        strategies: "random,silent,alternating,always_odd",
        external_players: 0,
        timeout: Duration::from_millis(500),
        env: vec![var("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.as_str())],
    })
    .await;
    league.finished().await;
    let (silent,): (String,) =
        sqlx::query_as("select agent_id from agents where kind = 'player' and display_name like '%silent'")
            .fetch_one(&league.pool)
            .await
            .expect("the silent bot");
    let league_id = league.league_id.clone();
    // Every process exports its last spans before it exits.
    league.stop().await;
    let spans = collector.spans();

    // Five players: ten matches, each the root of its own trace.
    let matches: Vec<&Received> = spans.iter().filter(|span| span.name == "match").collect();
    assert_eq!(matches.len(), 10, "one match span per match");
    let match_ids: BTreeSet<&str> = matches
        .iter()
        .filter_map(|span| span.attribute("match_id"))
        .collect();
    assert_eq!(match_ids.len(), 10, "{match_ids:?}");
    let traces: HashSet<&str> = matches.iter().map(|span| span.trace_id.as_str()).collect();
    assert_eq!(traces.len(), 10, "one trace per match");

    for root in matches {
        let match_id = root.attribute("match_id").expect("a match id");
        let trace = MatchTrace::of(&spans, root, &league_id);
        let what = &trace.what;
        assert_eq!(root.attribute("game_type"), Some("even_odd"), "{what}");
        assert!(root.attribute("round_id").is_some(), "{what}");
        let players = [
            root.attribute("player_a_id").expect("player a"),
            root.attribute("player_b_id").expect("player b"),
        ];
        let outcome = root.attribute("outcome").expect("an outcome");
        let services: BTreeSet<&str> = trace.spans.iter().map(|span| span.service.as_str()).collect();
        assert_eq!(
            services,
            BTreeSet::from(["league-manager", "league-player", "league-referee"]),
            "{what}"
        );

        let phase = |name: &str| trace.phase(name);
        let invite = phase("invite");
        let game_over = phase("game_over");
        let report = phase("report");
        let calls_under = |parent: &Received, method: &str| -> Vec<&Received> {
            let mut calls = trace.children(parent);
            calls.retain(|span| span.name == method);
            calls
        };
        let reports = calls_under(report, "league.v2.ManagerService/ReportMatchResult");
        assert_eq!(
            reports.len(),
            1,
            "the manager's server span is the report's child: {what}"
        );
        assert_eq!(reports[0].service, "league-manager");
        assert_eq!(reports[0].kind, SpanKind::Server);
        assert_eq!(reports[0].attribute("match_id"), Some(match_id));
        let invitations = calls_under(invite, "league.v2.PlayerService/InviteToMatch");
        assert!(
            !invitations.is_empty(),
            "the player host's spans are the invite's children: {what}"
        );
        for call in &invitations {
            assert_eq!(call.service, "league-player");
            assert_eq!(call.kind, SpanKind::Server);
            assert_eq!(call.attribute("match_id"), Some(match_id));
            assert_eq!(
                call.attribute("conversation_id"),
                root.attribute("conversation_id")
            );
        }
        assert!(
            !calls_under(game_over, "league.v2.PlayerService/NotifyGameOver").is_empty(),
            "{what}"
        );

        if players.contains(&silent.as_str()) {
            // The silent bot never answers an invitation: a technical loss after three timeouts.
            assert_eq!(outcome, "technical_loss", "{what}");
            assert!(root.error, "a technical loss is a span error: {what}");
            assert!(
                invite.error,
                "the timeouts are errors of the invite phase: {what}"
            );
            assert!(
                !calls_under(invite, "league.v2.PlayerService/NotifyGameError").is_empty(),
                "GAME_ERRORs go out under the invite phase: {what}"
            );
        } else {
            assert!(matches!(outcome, "win" | "draw"), "{what}");
            assert!(!root.error, "{what}");
            let collect = phase("collect");
            phase("draw");
            assert!(
                !calls_under(collect, "league.v2.PlayerService/RequestMove").is_empty(),
                "{what}"
            );
        }
    }
}
