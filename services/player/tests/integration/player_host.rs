//! The player host over real gRPC: a server on 127.0.0.1:0 and a `PlayerServiceClient`, as a referee and
//! the manager would call it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use league_player::{EventKind, PlayerHost, StrategyKind};
use league_proto::v2::match_call::Request as Call;
use league_proto::v2::match_calls_response::Answer;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{
    InviteToMatchRequest, LeagueEventDelivery, MatchCallsRequest, MatchContext, MatchResult,
    NotifyGameErrorRequest, NotifyGameOverRequest, NotifyLeagueEventRequest, NotifyLeagueEventsRequest,
    PlayerScore, RequestMoveRequest, ResultStatus, RoundAnnouncement, notify_league_event_request::Event,
};
use league_proto::{ErrorCode, error_code};
use prost_types::value::Kind;
use prost_types::{Struct, Value};
use tokio::net::TcpListener;
use tokio::time::Instant;
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;

/// A host with one bot per behaviour name, P01 for the first, served on a fresh port.
async fn serve(behaviours: &[&str]) -> (Arc<PlayerHost>, PlayerServiceClient<Channel>) {
    let host = Arc::new(PlayerHost::new());
    for (n, behaviour) in behaviours.iter().enumerate() {
        let behaviour = behaviour.parse().expect("behaviour name");
        host.add_bot(format!("P{:02}", n + 1), format!("bot-{n}"), behaviour);
    }
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let address = listener.local_addr().expect("bound address");
    let server = tonic::transport::Server::builder()
        .add_service(host.service())
        .serve_with_incoming(TcpIncoming::from(listener));
    tokio::spawn(server);
    // The listener is already bound, so the connection is accepted as soon as the server runs: no waiting.
    let client = PlayerServiceClient::connect(format!("http://{address}"))
        .await
        .expect("connect");
    (host, client)
}

fn context(game_type: &str) -> Option<MatchContext> {
    Some(MatchContext {
        league_id: "L1".into(),
        round_id: 1,
        match_id: "R1M1".into(),
        game_type: game_type.into(),
        conversation_id: "conv-1".into(),
        referee_id: "REF01".into(),
    })
}

fn invitation(player_id: &str) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: player_id.into(),
        context: context("even_odd"),
        opponent_id: "P99".into(),
        ..InviteToMatchRequest::default()
    }
}

fn move_request(player_id: &str) -> RequestMoveRequest {
    RequestMoveRequest {
        player_id: player_id.into(),
        context: context("even_odd"),
        opponent_id: "P99".into(),
        step: 1,
        attempt: 1,
        ..RequestMoveRequest::default()
    }
}

fn event(player_id: &str, event_id: &str) -> NotifyLeagueEventRequest {
    NotifyLeagueEventRequest {
        player_id: player_id.into(),
        league_id: "L1".into(),
        event_id: event_id.into(),
        event: Some(Event::RoundAnnouncement(RoundAnnouncement {
            round_id: 1,
            matches: vec![],
        })),
    }
}

fn parity_choice(payload: Option<Struct>) -> Option<String> {
    match payload?.fields.get("parity_choice")? {
        Value {
            kind: Some(Kind::StringValue(choice)),
        } => Some(choice.clone()),
        _ => None,
    }
}

#[tokio::test]
async fn an_invitation_is_accepted_with_its_arrival_time() {
    let (_host, mut client) = serve(&["random", "declines"]).await;
    let ack = client
        .invite_to_match(invitation("P01"))
        .await
        .expect("invitation")
        .into_inner();
    assert!(ack.accept, "{ack:?}");
    assert!(ack.arrival_timestamp.is_some());
    let refusal = client
        .invite_to_match(invitation("P02"))
        .await
        .expect("invitation")
        .into_inner();
    assert!(!refusal.accept, "{refusal:?}");
}

#[tokio::test]
async fn a_move_is_even_or_odd() {
    let (_host, mut client) = serve(&["random", "adaptive", "always_odd", "invalid"]).await;
    for player_id in ["P01", "P02"] {
        let response = client
            .request_move(move_request(player_id))
            .await
            .expect("move")
            .into_inner();
        let choice = parity_choice(response.move_payload);
        assert!(
            matches!(choice.as_deref(), Some("even" | "odd")),
            "{player_id}: {choice:?}"
        );
    }
    let odd = client
        .request_move(move_request("P03"))
        .await
        .expect("move")
        .into_inner();
    assert_eq!(parity_choice(odd.move_payload).as_deref(), Some("odd"));
    let invalid = client
        .request_move(move_request("P04"))
        .await
        .expect("move")
        .into_inner();
    assert_eq!(parity_choice(invalid.move_payload).as_deref(), Some("maybe"));
}

#[tokio::test]
async fn an_unknown_player_is_not_found_with_e005() {
    let (_host, mut client) = serve(&["random"]).await;
    let status = client
        .request_move(move_request("P42"))
        .await
        .expect_err("not hosted");
    assert_eq!(status.code(), tonic::Code::NotFound);
    assert_eq!(error_code::code_of(&status), Some(ErrorCode::PlayerNotRegistered));
    let status = client
        .notify_league_event(event("P42", "ev-1"))
        .await
        .expect_err("not hosted");
    assert_eq!(error_code::code_of(&status), Some(ErrorCode::PlayerNotRegistered));
}

// Time is real here: pausing it (`start_paused`) needs tokio's `test-util` feature, which this crate does
// not enable. The timeouts are short so the test still takes a fraction of a second.
const CLIENT_TIMEOUT: Duration = Duration::from_millis(100);

#[tokio::test]
async fn a_silent_bot_never_answers_and_the_caller_times_out() {
    let (_host, mut client) = serve(&["silent", "random"]).await;
    // Notifications are still taken; this also opens the connection before the clock matters.
    client
        .notify_league_event(event("P01", "ev-1"))
        .await
        .expect("event taken");

    let started = Instant::now();
    let mut request = tonic::Request::new(move_request("P01"));
    request.set_timeout(CLIENT_TIMEOUT);
    let status = client
        .request_move(request)
        .await
        .expect_err("a silent bot never answers");
    assert_eq!(status.code(), tonic::Code::Cancelled, "{status:?}");
    assert!(
        started.elapsed() >= CLIENT_TIMEOUT,
        "gave up only at the deadline"
    );

    let mut invitation = tonic::Request::new(invitation("P01"));
    invitation.set_timeout(CLIENT_TIMEOUT);
    let status = client
        .invite_to_match(invitation)
        .await
        .expect_err("nor an invitation");
    assert_eq!(status.code(), tonic::Code::Cancelled, "{status:?}");

    // The silent bot holds up nobody else.
    let response = client
        .request_move(move_request("P02"))
        .await
        .expect("move")
        .into_inner();
    assert!(parity_choice(response.move_payload).is_some());
}

#[tokio::test]
async fn a_late_bot_answers_after_its_delay() {
    let (_host, mut client) = serve(&["late:150"]).await;
    let started = Instant::now();
    let response = client
        .request_move(move_request("P01"))
        .await
        .expect("late, but an answer");
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert!(matches!(
        parity_choice(response.into_inner().move_payload).as_deref(),
        Some("even" | "odd")
    ));
}

#[tokio::test]
async fn a_flaky_bot_is_unavailable_then_plays() {
    let (_host, mut client) = serve(&["flaky:1"]).await;
    let status = client
        .request_move(move_request("P01"))
        .await
        .expect_err("first request fails");
    assert_eq!(status.code(), tonic::Code::Unavailable);
    assert_eq!(error_code::code_of(&status), Some(ErrorCode::ConnectionError));
    let retry = client
        .request_move(move_request("P01"))
        .await
        .expect("then plays")
        .into_inner();
    assert!(parity_choice(retry.move_payload).is_some());
}

#[tokio::test]
async fn a_repeated_event_id_is_recorded_once() {
    let (host, mut client) = serve(&["random"]).await;
    for event_id in ["ev-1", "ev-1", "ev-2", "ev-1"] {
        client
            .notify_league_event(event("P01", event_id))
            .await
            .expect("acknowledged every time");
    }
    let events = host.events("P01").expect("hosted");
    assert_eq!(
        events,
        [
            ("ev-1".to_owned(), EventKind::RoundAnnouncement),
            ("ev-2".to_owned(), EventKind::RoundAnnouncement)
        ]
    );
}

#[tokio::test]
async fn one_delivery_reaches_each_recipient_and_a_failure_holds_back_that_players_later_events() {
    let (host, mut client) = serve(&["random", "random"]).await;
    let delivery = |event: Option<NotifyLeagueEventRequest>, to: &[&str]| LeagueEventDelivery {
        event,
        player_ids: to.iter().map(|id| (*id).to_owned()).collect(),
    };
    // Shared by its recipients: no player_id of its own.
    let shared = |event_id: &str| Some(event("", event_id));
    let deliveries = vec![
        // P42 is not hosted here.
        delivery(shared("L1/1"), &["P01", "P42", "P02"]),
        delivery(shared("L1/2"), &["P42", "P02"]),
        // Without its event: taken by nobody, and P01's later events wait for the redelivery.
        delivery(None, &["P01"]),
        delivery(shared("L1/3"), &["P01", "P02"]),
    ];
    let accepted = client
        .notify_league_events(NotifyLeagueEventsRequest { deliveries })
        .await
        .expect("answered")
        .into_inner()
        .accepted;
    assert_eq!(accepted, [true, false, true, false, true, false, false, true]);
    let seen = |player_id: &str| -> Vec<String> {
        let events = host.events(player_id).expect("hosted");
        events.into_iter().map(|(event_id, _)| event_id).collect()
    };
    assert_eq!(seen("P01"), ["L1/1"]);
    assert_eq!(seen("P02"), ["L1/1", "L1/2", "L1/3"]);
}

#[tokio::test]
async fn game_over_and_game_errors_are_remembered() {
    let (host, mut client) = serve(&["adaptive"]).await;
    let choices = Struct {
        fields: [("P01", "odd"), ("P99", "even")]
            .map(|(id, choice)| {
                (
                    id.to_owned(),
                    Value {
                        kind: Some(Kind::StringValue(choice.into())),
                    },
                )
            })
            .into(),
    };
    let result = MatchResult {
        match_id: "R1M1".into(),
        status: ResultStatus::Win.into(),
        winner_player_id: "P99".into(),
        scores: vec![
            PlayerScore {
                player_id: "P01".into(),
                points: 0,
            },
            PlayerScore {
                player_id: "P99".into(),
                points: 3,
            },
        ],
        game_metadata: Some(Struct {
            fields: [(
                "choices".to_owned(),
                Value {
                    kind: Some(Kind::StructValue(choices)),
                },
            )]
            .into(),
        }),
        ..MatchResult::default()
    };
    let game_over = NotifyGameOverRequest {
        player_id: "P01".into(),
        context: context("even_odd"),
        result: Some(result),
    };
    client
        .notify_game_over(game_over.clone())
        .await
        .expect("game over");
    client
        .notify_game_over(game_over)
        .await
        .expect("a redelivery is acknowledged too");
    let error = NotifyGameErrorRequest {
        player_id: "P01".into(),
        context: context("even_odd"),
        error_code: "E001".into(),
        retry_count: 1,
        max_retries: 3,
        ..NotifyGameErrorRequest::default()
    };
    client.notify_game_error(error).await.expect("game error");

    let history = host.history("P01").expect("hosted");
    let [game] = history.as_slice() else {
        panic!("one game: {history:?}")
    };
    assert_eq!(
        (game.opponent_id.as_str(), game.outcome),
        ("P99", league_player::Outcome::Loss)
    );
    assert_eq!(game.opponent_choice, Some(league_player::Parity::Even));
    let errors = host.game_errors("P01").expect("hosted");
    assert_eq!(
        errors
            .iter()
            .map(|e| (e.code.as_str(), e.retry_count))
            .collect::<Vec<_>>(),
        [("E001", 1)]
    );
}

#[tokio::test]
async fn bots_can_be_added_while_serving_and_play_tic_tac_toe() {
    let (host, mut client) = serve(&[]).await;
    host.add_bot("P07", "late-joiner", StrategyKind::AlwaysEven.into());
    let board = ["X", "X", "", "", "O", "", "", "", ""].map(|cell| Value {
        kind: Some(Kind::StringValue(cell.into())),
    });
    let legal = [2, 3, 5, 6, 7, 8].map(|cell: u32| Value {
        kind: Some(Kind::NumberValue(cell.into())),
    });
    let list = |values: Vec<Value>| Value {
        kind: Some(Kind::ListValue(prost_types::ListValue { values })),
    };
    let step_context = Struct {
        fields: [
            ("board".to_owned(), list(board.to_vec())),
            (
                "your_mark".to_owned(),
                Value {
                    kind: Some(Kind::StringValue("O".into())),
                },
            ),
            ("legal_moves".to_owned(), list(legal.to_vec())),
        ]
        .into(),
    };
    let request = RequestMoveRequest {
        context: context("tic_tac_toe"),
        step_context: Some(step_context),
        ..move_request("P07")
    };
    let response = client.request_move(request).await.expect("move").into_inner();
    let position = response
        .move_payload
        .and_then(|payload| payload.fields.get("position").cloned());
    assert_eq!(
        position,
        Some(Value {
            kind: Some(Kind::NumberValue(2.0))
        }),
        "O blocks the top row"
    );
    assert_eq!(host.bots().len(), 1);
}

/// `calls` as one MatchCalls exchange, each made outside any span.
fn match_calls(calls: impl IntoIterator<Item = Call>) -> MatchCallsRequest {
    MatchCallsRequest {
        calls: calls.into_iter().map(league_runtime::grpc::match_call).collect(),
    }
}

#[tokio::test]
async fn match_calls_are_answered_each_as_soon_as_it_is_ready() {
    let (_host, mut client) = serve(&["silent", "random"]).await;
    let mut answers = client
        .match_calls(match_calls([
            Call::InviteToMatch(invitation("P01")),
            Call::InviteToMatch(invitation("P02")),
            Call::RequestMove(move_request("P02")),
            Call::InviteToMatch(invitation("P09")),
        ]))
        .await
        .expect("an exchange")
        .into_inner();
    // The silent bot never answers; the three others do, without waiting for it.
    let mut answered = Vec::new();
    for _ in 0..3 {
        let answer = answers.message().await.expect("a message").expect("an answer");
        answered.push((answer.index, answer.answer.expect("answered")));
    }
    answered.sort_by_key(|(index, _)| *index);
    assert!(
        matches!(&answered[0], (1, Answer::InviteToMatch(invited)) if invited.accept),
        "{answered:?}"
    );
    assert!(
        matches!(&answered[1], (2, Answer::RequestMove(answer)) if answer.move_payload.is_some()),
        "{answered:?}"
    );
    let (3, Answer::Failure(failure)) = answered[2].clone() else {
        panic!("P09 is not hosted: {answered:?}");
    };
    let status = league_runtime::grpc::status_of(failure);
    assert_eq!(error_code::code_of(&status), Some(ErrorCode::PlayerNotRegistered));
}

#[tokio::test]
async fn the_host_refuses_more_match_calls_than_it_takes_at_once() {
    let (host, mut client) = serve(&["random"]).await;
    let game_error = || {
        Call::NotifyGameError(NotifyGameErrorRequest {
            player_id: "P01".into(),
            context: context("even_odd"),
            error_code: "E001".into(),
            ..NotifyGameErrorRequest::default()
        })
    };
    let refused = client
        .match_calls(match_calls(
            (0..=league_runtime::grpc::MAX_MATCH_CALLS).map(|_| game_error()),
        ))
        .await
        .expect_err("too many calls");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().contains("at most 1024"),
        "{}",
        refused.message()
    );
    assert_eq!(host.game_errors("P01").map(|errors| errors.len()), Some(0));
    // One call fewer is taken, every one.
    let answers = client
        .match_calls(match_calls(
            (0..league_runtime::grpc::MAX_MATCH_CALLS).map(|_| game_error()),
        ))
        .await
        .expect("taken")
        .into_inner();
    let answered: Vec<_> = futures::StreamExt::collect(answers).await;
    assert_eq!(answered.len(), league_runtime::grpc::MAX_MATCH_CALLS);
    assert_eq!(
        host.game_errors("P01").map(|errors| errors.len()),
        Some(league_runtime::grpc::MAX_MATCH_CALLS)
    );
}
