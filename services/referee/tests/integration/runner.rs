//! The match runner against scripted in-process players, on paused tokio time: every timeout and retry
//! delay elapses instantly and exactly, so the tests also check how long a match takes.
//!
//! Needs tokio's `test-util` feature (`start_paused`): `[dev-dependencies] tokio = { workspace = true,
//! features = ["test-util"] }` in this crate's Cargo.toml, or `cargo test -p league-referee --features
//! tokio/test-util`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use league_domain::Assignment;
use league_proto::v2::{
    self, AssignedPlayer, Direction, InviteToMatchRequest, InviteToMatchResponse, MatchAssignment,
    MessageRecord, NotifyGameErrorRequest, NotifyGameErrorResponse, NotifyGameOverRequest,
    NotifyGameOverResponse, PlayerRecord, RequestMoveRequest, RequestMoveResponse, ResultStatus, Role,
    ScheduledMatch, transcript_entry,
};
use league_proto::{ErrorCode, error_code};
use league_referee::payload::{number, object, string};
use league_referee::{Chance, MatchReport, MatchState, Players, Seat, run_match};
use prost_types::Struct;
use prost_types::value::Kind;
use tokio::sync::Barrier;
use tokio::time::Instant;
use tonic::{Code, Status};

// ---------------------------------------------------------------------------------------------------
// Scripted players

/// What a player does with an invitation.
#[derive(Debug, Clone)]
enum Invite {
    Accept,
    Decline(&'static str),
    Silent,
    Fail(Code),
    Status(Status),
}

/// What a player does with a move request.
#[derive(Debug, Clone)]
enum Move {
    Play(Struct),
    /// Answers, but only after this long.
    Late(Duration, Struct),
    Silent,
    Fail(Code),
    /// Fails as the gateway does when it cannot reach the agent behind it: E009, the player's miss.
    Unreachable,
    /// tic_tac_toe: the first legal cell of the step context.
    FirstLegal,
}

/// What a player does with a GAME_ERROR or GAME_OVER.
#[derive(Debug, Clone)]
enum Notice {
    Take,
    Silent,
    Fail(Code),
}

/// One player's behaviour: the n-th call of a kind follows the n-th entry, the last entry repeating.
#[derive(Debug, Clone)]
struct Script {
    invites: Vec<Invite>,
    moves: Vec<Move>,
    game_errors: Notice,
    game_overs: Notice,
}

impl Script {
    /// Joins and always plays `choice`.
    fn playing(choice: Struct) -> Script {
        Script {
            invites: vec![Invite::Accept],
            moves: vec![Move::Play(choice)],
            game_errors: Notice::Take,
            game_overs: Notice::Take,
        }
    }

    fn invites(self, invites: impl Into<Vec<Invite>>) -> Script {
        Script {
            invites: invites.into(),
            ..self
        }
    }

    fn moves(self, moves: impl Into<Vec<Move>>) -> Script {
        Script {
            moves: moves.into(),
            ..self
        }
    }

    fn game_errors(self, game_errors: Notice) -> Script {
        Script { game_errors, ..self }
    }

    fn game_overs(self, game_overs: Notice) -> Script {
        Script { game_overs, ..self }
    }
}

fn nth<T: Clone>(items: &[T], n: usize) -> T {
    items
        .get(n)
        .or(items.last())
        .cloned()
        .expect("a script is never empty")
}

/// Everything that happened, in order, with the (paused) time it happened at.
#[derive(Debug, Clone)]
enum Event {
    Invited(Seat, InviteToMatchRequest),
    MoveRequested(Seat, RequestMoveRequest),
    MoveAnswered(Seat),
    GameError(Seat, NotifyGameErrorRequest),
    GameOver(Seat, NotifyGameOverRequest),
    Drew(u32),
}

#[derive(Debug, Clone, Default)]
struct Log(Arc<Mutex<Vec<(Instant, Event)>>>);

impl Log {
    fn push(&self, event: Event) {
        self.lock().push((Instant::now(), event));
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(Instant, Event)>> {
        self.0.lock().expect("log lock")
    }

    fn events(&self) -> Vec<(Instant, Event)> {
        self.lock().clone()
    }

    fn invites(&self, seat: Seat) -> Vec<InviteToMatchRequest> {
        self.filter(|event| match event {
            Event::Invited(s, request) if *s == seat => Some(request.clone()),
            _ => None,
        })
    }

    fn move_requests(&self, seat: Seat) -> Vec<RequestMoveRequest> {
        self.filter(|event| match event {
            Event::MoveRequested(s, request) if *s == seat => Some(request.clone()),
            _ => None,
        })
    }

    fn game_errors(&self, seat: Seat) -> Vec<NotifyGameErrorRequest> {
        self.filter(|event| match event {
            Event::GameError(s, request) if *s == seat => Some(request.clone()),
            _ => None,
        })
    }

    fn game_overs(&self, seat: Seat) -> Vec<NotifyGameOverRequest> {
        self.filter(|event| match event {
            Event::GameOver(s, request) if *s == seat => Some(request.clone()),
            _ => None,
        })
    }

    fn draws(&self) -> Vec<u32> {
        self.filter(|event| match event {
            Event::Drew(number) => Some(*number),
            _ => None,
        })
    }

    /// Position in the log of the first event `select` picks.
    fn position(&self, select: impl Fn(&Event) -> bool) -> usize {
        self.lock()
            .iter()
            .position(|(_, event)| select(event))
            .expect("event in the log")
    }

    fn filter<T>(&self, select: impl Fn(&Event) -> Option<T>) -> Vec<T> {
        self.lock()
            .iter()
            .filter_map(|(_, event)| select(event))
            .collect()
    }
}

#[derive(Debug)]
struct FakePlayers {
    scripts: [Script; 2],
    log: Log,
    /// When set, a player's first move request waits here for the other's: both must be in flight at once.
    together: Option<Barrier>,
}

impl FakePlayers {
    fn new(a: Script, b: Script, log: &Log) -> FakePlayers {
        FakePlayers {
            scripts: [a, b],
            log: log.clone(),
            together: None,
        }
    }

    /// Neither player answers its first move request until both requests have arrived.
    fn answering_only_together(self) -> FakePlayers {
        FakePlayers {
            together: Some(Barrier::new(2)),
            ..self
        }
    }

    fn script(&self, seat: Seat) -> &Script {
        &self.scripts[seat.index()]
    }
}

impl Players for FakePlayers {
    async fn invite(
        &self,
        seat: Seat,
        request: InviteToMatchRequest,
    ) -> Result<InviteToMatchResponse, Status> {
        let calls = self.log.invites(seat).len();
        self.log.push(Event::Invited(seat, request));
        let answer = |accept: bool, reason: &str| InviteToMatchResponse {
            accept,
            arrival_timestamp: None,
            reason: reason.to_owned(),
        };
        match nth(&self.script(seat).invites, calls) {
            Invite::Accept => Ok(answer(true, "")),
            Invite::Decline(reason) => Ok(answer(false, reason)),
            Invite::Silent => std::future::pending().await,
            Invite::Fail(code) => Err(Status::new(code, "scripted failure")),
            Invite::Status(status) => Err(status),
        }
    }

    async fn request_move(
        &self,
        seat: Seat,
        request: RequestMoveRequest,
    ) -> Result<RequestMoveResponse, Status> {
        let calls = self.log.move_requests(seat).len();
        let legal = first_legal(&request);
        self.log.push(Event::MoveRequested(seat, request));
        if calls == 0
            && let Some(together) = &self.together
        {
            together.wait().await;
        }
        let payload = match nth(&self.script(seat).moves, calls) {
            Move::Play(payload) => payload,
            Move::Late(delay, payload) => {
                tokio::time::sleep(delay).await;
                payload
            }
            Move::Silent => std::future::pending().await,
            Move::Fail(code) => return Err(Status::new(code, "scripted failure")),
            Move::Unreachable => {
                return Err(error_code::status(
                    ErrorCode::ConnectionError,
                    "the agent refused the connection",
                ));
            }
            Move::FirstLegal => object([("position", number(legal.expect("a legal move")))]),
        };
        self.log.push(Event::MoveAnswered(seat));
        Ok(RequestMoveResponse {
            move_payload: Some(payload),
        })
    }

    async fn game_over(
        &self,
        seat: Seat,
        request: NotifyGameOverRequest,
    ) -> Result<NotifyGameOverResponse, Status> {
        self.log.push(Event::GameOver(seat, request));
        notice(&self.script(seat).game_overs)
            .await
            .map(|()| NotifyGameOverResponse {})
    }

    async fn game_error(
        &self,
        seat: Seat,
        request: NotifyGameErrorRequest,
    ) -> Result<NotifyGameErrorResponse, Status> {
        self.log.push(Event::GameError(seat, request));
        notice(&self.script(seat).game_errors)
            .await
            .map(|()| NotifyGameErrorResponse {})
    }
}

async fn notice(behaviour: &Notice) -> Result<(), Status> {
    match behaviour {
        Notice::Take => Ok(()),
        Notice::Silent => std::future::pending().await,
        Notice::Fail(code) => Err(Status::new(*code, "scripted failure")),
    }
}

/// The first cell of `legal_moves` in a tic_tac_toe step context.
fn first_legal(request: &RequestMoveRequest) -> Option<u32> {
    let context = request.step_context.as_ref()?;
    let Some(Kind::ListValue(cells)) = context.fields.get("legal_moves")?.kind.as_ref() else {
        return None;
    };
    match cells.values.first()?.kind {
        Some(Kind::NumberValue(cell)) => Some(cell as u32),
        _ => None,
    }
}

/// A chance that hands out fixed numbers and logs every draw.
#[derive(Debug)]
struct RecordingChance {
    numbers: VecDeque<u32>,
    log: Log,
}

impl RecordingChance {
    fn new(numbers: impl IntoIterator<Item = u32>, log: &Log) -> RecordingChance {
        RecordingChance {
            numbers: numbers.into_iter().collect(),
            log: log.clone(),
        }
    }
}

impl Chance for RecordingChance {
    fn number_between(&mut self, low: u32, high: u32) -> u32 {
        let number = self.numbers.pop_front().expect("a number left to draw");
        assert!((low..=high).contains(&number), "{number} not in {low}..={high}");
        self.log.push(Event::Drew(number));
        number
    }

    fn source(&self) -> &'static str {
        "recording (test)"
    }
}

// ---------------------------------------------------------------------------------------------------
// Helpers

fn choice(parity: &str) -> Struct {
    object([("parity_choice", string(parity))])
}

fn even() -> Script {
    Script::playing(choice("even"))
}

fn odd() -> Script {
    Script::playing(choice("odd"))
}

fn player(id: &str, wins: u32) -> AssignedPlayer {
    AssignedPlayer {
        player_id: id.into(),
        display_name: format!("Bot {id}"),
        service_endpoint: "http://players.invalid:50051".into(),
        record: Some(PlayerRecord {
            wins,
            losses: 1,
            draws: 0,
        }),
    }
}

/// P01 (seat A) against P02 (seat B), default timings: join 5 s, move 30 s, game over 5 s, 3 attempts
/// 2 s apart.
fn assignment(game_type: &str) -> Assignment {
    let wire = MatchAssignment {
        r#match: Some(ScheduledMatch {
            league_id: "l1".into(),
            round_id: 2,
            match_id: "R2M1".into(),
            game_type: game_type.into(),
            player_a_id: "P01".into(),
            player_b_id: "P02".into(),
            status: v2::MatchStatus::Running.into(),
            referee_id: "REF01".into(),
            ..ScheduledMatch::default()
        }),
        lease_id: "lease-1".into(),
        lease_expires_at: None,
        timing: None,
        player_a: Some(player("P01", 2)),
        player_b: Some(player("P02", 0)),
    };
    Assignment::try_from(wire).expect("a complete assignment")
}

/// Runs an even_odd match and says how long it took.
async fn play(players: &FakePlayers, chance: &mut RecordingChance) -> (MatchReport, Duration) {
    play_game("even_odd", players, chance).await
}

async fn play_game(
    game_type: &str,
    players: &FakePlayers,
    chance: &mut RecordingChance,
) -> (MatchReport, Duration) {
    let started = Instant::now();
    let report = run_match(&assignment(game_type), players, chance, "REF01")
        .await
        .expect("no outage in this match");
    (report, started.elapsed())
}

fn secs(seconds: u64) -> Duration {
    Duration::from_secs(seconds)
}

fn scores(report: &MatchReport) -> Vec<(&str, u32)> {
    report
        .result
        .scores
        .iter()
        .map(|score| (score.player_id.as_str(), score.points))
        .collect()
}

fn transitions(report: &MatchReport) -> Vec<(v2::MatchState, v2::MatchState)> {
    report
        .transcript
        .entries
        .iter()
        .filter_map(|entry| match &entry.entry {
            Some(transcript_entry::Entry::StateTransition(t)) => Some((t.from(), t.to())),
            _ => None,
        })
        .collect()
}

fn messages(report: &MatchReport) -> Vec<&MessageRecord> {
    report
        .transcript
        .entries
        .iter()
        .filter_map(|entry| match &entry.entry {
            Some(transcript_entry::Entry::Message(message)) => Some(message),
            _ => None,
        })
        .collect()
}

/// (direction, type, attempt, error code) of one player's messages, in order.
fn exchanges<'a>(report: &'a MatchReport, player_id: &str) -> Vec<(Direction, &'a str, u32, &'a str)> {
    messages(report)
        .into_iter()
        .filter(|message| message.player_id == player_id)
        .map(|m| {
            (
                m.direction(),
                m.message_type.as_str(),
                m.attempt,
                m.error_code.as_str(),
            )
        })
        .collect()
}

fn codes(errors: &[NotifyGameErrorRequest]) -> Vec<&str> {
    errors.iter().map(|error| error.error_code.as_str()).collect()
}

const PLAYED: [(v2::MatchState, v2::MatchState); 5] = [
    (v2::MatchState::Unspecified, v2::MatchState::WaitingForPlayers),
    (
        v2::MatchState::WaitingForPlayers,
        v2::MatchState::CollectingChoices,
    ),
    (v2::MatchState::CollectingChoices, v2::MatchState::DrawingNumber),
    (v2::MatchState::DrawingNumber, v2::MatchState::Evaluating),
    (v2::MatchState::Evaluating, v2::MatchState::Finished),
];

fn assert_game_over_sent_to_both(log: &Log, report: &MatchReport) {
    for seat in Seat::BOTH {
        let overs = log.game_overs(seat);
        assert_eq!(overs.len(), 1, "one GAME_OVER to {seat}");
        assert_eq!(overs[0].result.as_ref(), Some(&report.result));
    }
}

// ---------------------------------------------------------------------------------------------------
// Even/odd, played to the end

#[tokio::test(start_paused = true)]
async fn both_choices_are_requested_before_either_is_answered() {
    let log = Log::default();
    // Neither answers until both requests have arrived: asking one after the other would time out.
    let players = FakePlayers::new(even(), odd(), &log).answering_only_together();
    let mut chance = RecordingChance::new([8], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, Duration::ZERO, "nobody waited for a timeout");
    assert_eq!(report.final_state, MatchState::Finished);
    let result = &report.result;
    assert_eq!(result.match_id, "R2M1");
    assert_eq!(result.status(), ResultStatus::Win);
    assert_eq!(result.winner_player_id, "P01");
    assert_eq!(scores(&report), [("P01", 3), ("P02", 0)]);
    assert_eq!(result.reason, "P01 chose even, number was 8 (even)");
    assert!(result.at_fault_player_ids.is_empty());
    let metadata = result.game_metadata.as_ref().expect("the game's metadata");
    assert_eq!(metadata.fields["drawn_number"], number(8));
    assert_eq!(metadata.fields["number_parity"], string("even"));
    for seat in Seat::BOTH {
        assert!(log.game_errors(seat).is_empty());
        assert_eq!(log.move_requests(seat).len(), 1);
    }
    assert_game_over_sent_to_both(&log, &report);
}

#[tokio::test(start_paused = true)]
async fn the_number_is_drawn_only_after_both_choices_are_in() {
    let log = Log::default();
    // P02 takes 10 s to choose: the draw waits for it.
    let slow = odd().moves([Move::Late(secs(10), choice("odd"))]);
    let players = FakePlayers::new(even(), slow, &log);
    let mut chance = RecordingChance::new([3], &log);
    let started = Instant::now();

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(10));
    assert_eq!(log.draws(), [3], "exactly one draw");
    let drew = log.position(|event| matches!(event, Event::Drew(_)));
    for seat in Seat::BOTH {
        let answered = log.position(|event| matches!(event, Event::MoveAnswered(s) if *s == seat));
        assert!(answered < drew, "{seat} chose before the draw");
        let over = log.position(|event| matches!(event, Event::GameOver(s, _) if *s == seat));
        assert!(drew < over, "{seat} learnt the result after the draw");
    }
    let drawn_at = log
        .events()
        .into_iter()
        .find_map(|(at, event)| matches!(event, Event::Drew(_)).then_some(at))
        .expect("drawn");
    assert_eq!(
        drawn_at - started,
        secs(10),
        "drawn when the last choice arrived, not before"
    );
    // Each player was told only the game's step context: no trace of the other's choice.
    for seat in Seat::BOTH {
        let context = log.move_requests(seat)[0]
            .step_context
            .clone()
            .expect("step context");
        let mut fields: Vec<_> = context.fields.keys().map(String::as_str).collect();
        fields.sort_unstable();
        assert_eq!(fields, ["action", "valid_choices"]);
    }
    assert_eq!(report.result.status(), ResultStatus::Win);
    assert_eq!(report.result.winner_player_id, "P02", "3 is odd");
}

#[tokio::test(start_paused = true)]
async fn requests_carry_the_match_context_role_standings_and_deadlines() {
    let log = Log::default();
    let players = FakePlayers::new(even(), even(), &log);
    let mut chance = RecordingChance::new([5], &log);

    let (report, _) = play(&players, &mut chance).await;

    assert_eq!(report.result.status(), ResultStatus::Draw);
    assert_eq!(scores(&report), [("P01", 1), ("P02", 1)]);
    assert_eq!(report.result.winner_player_id, "");
    let invite = &log.invites(Seat::B)[0];
    assert_eq!(invite.player_id, "P02");
    assert_eq!(invite.role_in_match(), Role::PlayerB);
    assert_eq!(invite.opponent_id, "P01");
    let context = invite.context.clone().expect("context");
    assert_eq!(
        (
            context.league_id.as_str(),
            context.round_id,
            context.match_id.as_str()
        ),
        ("l1", 2, "R2M1")
    );
    assert_eq!(
        (context.game_type.as_str(), context.referee_id.as_str()),
        ("even_odd", "REF01")
    );
    assert_eq!(context.conversation_id.len(), 32);
    assert!(context.conversation_id.chars().all(|c| c.is_ascii_hexdigit()));
    let now = std::time::SystemTime::now();
    let until = |deadline: Option<prost_types::Timestamp>| {
        std::time::SystemTime::try_from(deadline.expect("deadline"))
            .expect("valid deadline")
            .duration_since(now)
            .unwrap_or_default()
    };
    let join_deadline = until(invite.deadline);
    assert!(
        join_deadline > secs(4) && join_deadline <= secs(5),
        "{join_deadline:?}"
    );

    let request = &log.move_requests(Seat::A)[0];
    assert_eq!(
        (request.player_id.as_str(), request.opponent_id.as_str()),
        ("P01", "P02")
    );
    assert_eq!((request.step, request.attempt), (1, 1));
    assert_eq!(request.your_standings, player("P01", 2).record);
    let move_deadline = until(request.deadline);
    assert!(
        move_deadline > secs(29) && move_deadline <= secs(30),
        "{move_deadline:?}"
    );
    // One conversation for every message of the match.
    let conversations: Vec<_> = log
        .invites(Seat::A)
        .into_iter()
        .filter_map(|invite| invite.context)
        .chain(
            log.move_requests(Seat::B)
                .into_iter()
                .filter_map(|request| request.context),
        )
        .chain(
            log.game_overs(Seat::A)
                .into_iter()
                .filter_map(|over| over.context),
        )
        .map(|context| context.conversation_id)
        .collect();
    assert_eq!(conversations.len(), 3);
    assert!(conversations.iter().all(|id| *id == context.conversation_id));
}

#[tokio::test(start_paused = true)]
async fn the_transcript_records_every_transition_and_message_in_order() {
    let log = Log::default();
    let players = FakePlayers::new(even(), odd(), &log).answering_only_together();
    let mut chance = RecordingChance::new([8], &log);

    let (report, _) = play(&players, &mut chance).await;

    assert_eq!(report.transcript.match_id, "R2M1");
    assert_eq!(transitions(&report), PLAYED);
    let to = Direction::ToPlayer;
    let from = Direction::FromPlayer;
    for (player, parity) in [("P01", "even"), ("P02", "odd")] {
        assert_eq!(
            exchanges(&report, player),
            [
                (to, "GAME_INVITATION", 1, ""),
                (from, "GAME_JOIN_ACK", 1, ""),
                (to, "CHOOSE_PARITY_CALL", 1, ""),
                (from, "CHOOSE_PARITY_RESPONSE", 1, ""),
                (to, "GAME_OVER", 1, ""),
            ],
            "{player}"
        );
        let response = messages(&report)
            .into_iter()
            .find(|m| m.player_id == player && m.message_type == "CHOOSE_PARITY_RESPONSE")
            .expect("response recorded");
        assert_eq!(response.payload, Some(choice(parity)));
    }
    // Messages sit between the transitions they belong to.
    let kinds: Vec<String> = report
        .transcript
        .entries
        .iter()
        .map(|entry| match &entry.entry {
            Some(transcript_entry::Entry::StateTransition(t)) => t.to().as_str_name().to_owned(),
            Some(transcript_entry::Entry::Message(m)) => m.message_type.clone(),
            None => String::new(),
        })
        .collect();
    let at = |name: &str| kinds.iter().position(|kind| kind == name).expect(name);
    let last = |name: &str| kinds.iter().rposition(|kind| kind == name).expect(name);
    assert!(at("MATCH_STATE_WAITING_FOR_PLAYERS") < at("GAME_INVITATION"));
    assert!(last("GAME_JOIN_ACK") < at("MATCH_STATE_COLLECTING_CHOICES"));
    assert!(at("MATCH_STATE_COLLECTING_CHOICES") < at("CHOOSE_PARITY_CALL"));
    assert!(last("CHOOSE_PARITY_RESPONSE") < at("MATCH_STATE_DRAWING_NUMBER"));
    assert!(at("MATCH_STATE_FINISHED") < at("GAME_OVER"));
    assert_eq!(kinds.len(), 5 + 2 * 5);
    assert!(report.transcript.entries.iter().all(|entry| entry.at.is_some()));
    let call = messages(&report)
        .into_iter()
        .find(|m| m.message_type == "CHOOSE_PARITY_CALL")
        .and_then(|m| m.payload.clone())
        .expect("call payload");
    assert_eq!(call.fields["step"], number(1));
    assert!(call.fields.contains_key("step_context"));
}

// ---------------------------------------------------------------------------------------------------
// Faults during the invitation

#[tokio::test(start_paused = true)]
async fn a_player_silent_on_the_invitation_loses_after_max_attempts() {
    let log = Log::default();
    let players = FakePlayers::new(even(), odd().invites([Invite::Silent]), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play(&players, &mut chance).await;

    // Three join timeouts of 5 s, two retry delays of 2 s.
    assert_eq!(took, secs(3 * 5 + 2 * 2));
    assert_eq!(log.invites(Seat::A).len(), 1);
    assert_eq!(log.invites(Seat::B).len(), 3);
    let errors = log.game_errors(Seat::B);
    assert_eq!(
        codes(&errors),
        ["E001", "E001", "E001"],
        "one GAME_ERROR per miss"
    );
    let actions: Vec<_> = errors.iter().map(|e| e.action_required.as_str()).collect();
    assert_eq!(actions, ["ANSWER_INVITATION", "ANSWER_INVITATION", "NONE"]);
    let counts: Vec<_> = errors.iter().map(|e| (e.retry_count, e.max_retries)).collect();
    assert_eq!(counts, [(1, 3), (2, 3), (3, 3)]);
    assert!(
        errors
            .iter()
            .all(|e| e.affected_player == "P02" && e.consequence == "TECHNICAL_LOSS")
    );
    assert!(log.game_errors(Seat::A).is_empty());
    assert!(
        log.move_requests(Seat::A).is_empty(),
        "no move before both joined"
    );

    assert_eq!(report.final_state, MatchState::Aborted);
    assert_eq!(report.result.status(), ResultStatus::TechnicalLoss);
    assert_eq!(report.result.winner_player_id, "P01");
    assert_eq!(scores(&report), [("P01", 3), ("P02", 0)]);
    assert_eq!(report.result.at_fault_player_ids, ["P02"]);
    assert_eq!(
        report.result.reason,
        "P02 did not answer the invitation 3 times (E001)"
    );
    assert_eq!(report.result.game_metadata, None);
    assert_eq!(
        transitions(&report),
        [
            (v2::MatchState::Unspecified, v2::MatchState::WaitingForPlayers),
            (v2::MatchState::WaitingForPlayers, v2::MatchState::Aborted),
        ]
    );
    assert_game_over_sent_to_both(&log, &report);
    assert!(log.draws().is_empty());
    // The transcript shows each missing GAME_JOIN_ACK and each GAME_ERROR.
    let to = Direction::ToPlayer;
    let from = Direction::FromPlayer;
    let mut expected = Vec::new();
    for attempt in 1..=3 {
        expected.push((to, "GAME_INVITATION", attempt, ""));
        expected.push((from, "GAME_JOIN_ACK", attempt, "E001"));
        expected.push((to, "GAME_ERROR", attempt, "E001"));
    }
    expected.push((to, "GAME_OVER", 1, ""));
    assert_eq!(exchanges(&report, "P02"), expected);
}

#[tokio::test(start_paused = true)]
async fn a_declined_invitation_is_a_technical_loss_without_retries() {
    let log = Log::default();
    let players = FakePlayers::new(even().invites([Invite::Decline("busy")]), odd(), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, Duration::ZERO);
    assert_eq!(log.invites(Seat::A).len(), 1, "no second invitation");
    assert!(log.game_errors(Seat::A).is_empty());
    assert_eq!(report.result.status(), ResultStatus::TechnicalLoss);
    assert_eq!(report.result.winner_player_id, "P02");
    assert_eq!(scores(&report), [("P01", 0), ("P02", 3)]);
    assert_eq!(report.result.at_fault_player_ids, ["P01"]);
    assert_eq!(report.result.reason, "P01 declined the invitation: busy");
    assert_game_over_sent_to_both(&log, &report);
}

#[tokio::test(start_paused = true)]
async fn a_player_service_refusing_the_call_loses_at_once() {
    let log = Log::default();
    let players = FakePlayers::new(even(), odd().invites([Invite::Fail(Code::Unimplemented)]), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, Duration::ZERO, "a deliberate refusal is not retried");
    assert_eq!(log.invites(Seat::B).len(), 1);
    let errors = log.game_errors(Seat::B);
    assert_eq!(codes(&errors), ["E009"]);
    assert_eq!(errors[0].action_required, "NONE");
    assert_eq!(report.result.status(), ResultStatus::TechnicalLoss);
    assert_eq!(report.result.winner_player_id, "P01");
    assert_eq!(
        report.result.reason,
        "P02 refused the invitation: GAME_JOIN_ACK failed: Unimplemented: scripted failure (E009)"
    );
}

#[tokio::test(start_paused = true)]
async fn both_players_silent_on_the_invitation_is_a_double_forfeit() {
    let log = Log::default();
    let players = FakePlayers::new(
        even().invites([Invite::Silent]),
        odd().invites([Invite::Silent]),
        &log,
    );
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(19), "both invited at once, so both time out together");
    assert_eq!(report.result.status(), ResultStatus::DoubleForfeit);
    assert_eq!(scores(&report), [("P01", 0), ("P02", 0)]);
    assert_eq!(report.result.at_fault_player_ids, ["P01", "P02"]);
}

// ---------------------------------------------------------------------------------------------------
// Faults during the moves

#[tokio::test(start_paused = true)]
async fn an_invalid_choice_then_a_valid_one_completes_the_match_with_one_e004() {
    let log = Log::default();
    let fumbling = even().moves([Move::Play(choice("EVEN")), Move::Play(choice("even"))]);
    let players = FakePlayers::new(fumbling, odd(), &log);
    let mut chance = RecordingChance::new([7], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(2), "one retry delay");
    let errors = log.game_errors(Seat::A);
    assert_eq!(codes(&errors), ["E004"]);
    let error = &errors[0];
    assert_eq!(
        (
            error.action_required.as_str(),
            error.retry_count,
            error.max_retries
        ),
        ("RESEND_MOVE", 1, 3)
    );
    assert!(
        error.error_description.contains("lowercase only"),
        "{}",
        error.error_description
    );
    let requests = log.move_requests(Seat::A);
    assert_eq!(
        requests.iter().map(|r| (r.step, r.attempt)).collect::<Vec<_>>(),
        [(1, 1), (1, 2)]
    );
    assert_eq!(
        requests[0].step_context, requests[1].step_context,
        "the retry reveals nothing new"
    );
    assert_eq!(log.move_requests(Seat::B).len(), 1);
    assert_eq!(report.final_state, MatchState::Finished);
    assert_eq!(report.result.status(), ResultStatus::Win);
    assert_eq!(report.result.winner_player_id, "P02", "7 is odd");
    assert_eq!(transitions(&report), PLAYED);
}

#[tokio::test(start_paused = true)]
async fn always_invalid_choices_are_a_technical_loss_after_three_e004() {
    let log = Log::default();
    let players = FakePlayers::new(Script::playing(choice("maybe")), odd(), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(2 * 2));
    let errors = log.game_errors(Seat::A);
    assert_eq!(codes(&errors), ["E004", "E004", "E004"]);
    let actions: Vec<_> = errors.iter().map(|e| e.action_required.as_str()).collect();
    assert_eq!(actions, ["RESEND_MOVE", "RESEND_MOVE", "NONE"]);
    assert_eq!(log.move_requests(Seat::A).len(), 3);
    assert_eq!(
        log.move_requests(Seat::B).len(),
        1,
        "P02's choice was taken the first time"
    );
    assert!(log.draws().is_empty(), "no draw for an aborted match");
    assert_eq!(report.final_state, MatchState::Aborted);
    assert_eq!(report.result.status(), ResultStatus::TechnicalLoss);
    assert_eq!(report.result.winner_player_id, "P02");
    assert_eq!(report.result.at_fault_player_ids, ["P01"]);
    assert!(
        report
            .result
            .reason
            .starts_with("P01 made 3 invalid moves (E004: "),
        "{}",
        report.result.reason
    );
    assert_eq!(
        transitions(&report).last(),
        Some(&(v2::MatchState::CollectingChoices, v2::MatchState::Aborted))
    );
    assert_game_over_sent_to_both(&log, &report);
}

#[tokio::test(start_paused = true)]
async fn a_player_unreachable_twice_then_answering_completes_the_match() {
    let log = Log::default();
    let flaky = odd().moves([Move::Unreachable, Move::Unreachable, Move::Play(choice("odd"))]);
    let players = FakePlayers::new(even(), flaky, &log);
    let mut chance = RecordingChance::new([2], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(2 * 2));
    assert_eq!(codes(&log.game_errors(Seat::B)), ["E009", "E009"]);
    assert_eq!(log.move_requests(Seat::B).len(), 3);
    assert_eq!(report.final_state, MatchState::Finished);
    assert_eq!(report.result.winner_player_id, "P01", "2 is even");
}

// ---------------------------------------------------------------------------------------------------
// Outages of the league's own services are nobody's miss

#[tokio::test(start_paused = true)]
async fn an_outage_between_referee_and_player_is_waited_out_without_a_miss() {
    let log = Log::default();
    // The service in between (gateway, player host) refuses the connection three times, then is back.
    let behind_an_outage = odd().moves([
        Move::Fail(Code::Unavailable),
        Move::Fail(Code::Unknown),
        Move::Fail(Code::Unavailable),
        Move::Play(choice("odd")),
    ]);
    let players = FakePlayers::new(even(), behind_an_outage, &log);
    let mut chance = RecordingChance::new([3], &log);

    let (report, _) = play(&players, &mut chance).await;

    assert_eq!(report.final_state, MatchState::Finished);
    assert_eq!(report.result.status(), ResultStatus::Win);
    assert_eq!(report.result.winner_player_id, "P02", "3 is odd");
    assert!(
        log.game_errors(Seat::B).is_empty(),
        "no GAME_ERROR for our outage"
    );
    let requests = log.move_requests(Seat::B);
    assert_eq!(requests.len(), 4);
    assert!(
        requests.iter().all(|request| request.attempt == 1),
        "an outage uses no attempt"
    );
}

#[tokio::test(start_paused = true)]
async fn an_outage_longer_than_the_patience_interrupts_the_match_and_charges_nobody() {
    let log = Log::default();
    let players = FakePlayers::new(
        even().invites([Invite::Fail(Code::Unavailable)]),
        odd().invites([Invite::Fail(Code::Unavailable)]),
        &log,
    );
    let mut chance = RecordingChance::new([], &log);

    let started = Instant::now();
    let interrupted = run_match(&assignment("even_odd"), &players, &mut chance, "REF01")
        .await
        .expect_err("no result while the services are down");

    assert!(started.elapsed() >= league_referee::runner::outage::DEFAULT_PATIENCE);
    assert!(
        interrupted.reason.contains("could not be reached"),
        "{interrupted:?}"
    );
    for seat in Seat::BOTH {
        assert!(log.game_errors(seat).is_empty());
        assert!(log.game_overs(seat).is_empty(), "no result, so no GAME_OVER");
        assert!(
            log.invites(seat).len() > 3,
            "invited again and again, no attempts counted"
        );
    }
    assert!(log.draws().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_agent_the_gateway_cannot_look_up_is_an_outage_but_an_unknown_agent_is_not() {
    let log = Log::default();
    let lookup_failed = error_code::service_outage("the gateway could not look up P02: manager away");
    assert!(error_code::code_of(&lookup_failed).is_none());
    // Marked as an outage: the same as a refused connection (waited out, see above). Unknown to the
    // gateway (E005): the player's miss, not retried.
    let unknown = error_code::status(ErrorCode::PlayerNotRegistered, "no P02");
    let players = FakePlayers::new(
        even(),
        odd().invites([Invite::Status(lookup_failed), Invite::Status(unknown)]),
        &log,
    );
    let mut chance = RecordingChance::new([], &log);

    let (report, _) = play(&players, &mut chance).await;

    assert_eq!(log.invites(Seat::B).len(), 2);
    assert_eq!(codes(&log.game_errors(Seat::B)), ["E005"]);
    assert_eq!(report.result.status(), ResultStatus::TechnicalLoss);
    assert_eq!(report.result.at_fault_player_ids, ["P02"]);
}

#[tokio::test(start_paused = true)]
async fn both_players_silent_on_the_move_is_a_double_forfeit() {
    let log = Log::default();
    let players = FakePlayers::new(even().moves([Move::Silent]), odd().moves([Move::Silent]), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(3 * 30 + 2 * 2));
    for seat in Seat::BOTH {
        assert_eq!(codes(&log.game_errors(seat)), ["E001", "E001", "E001"]);
    }
    assert!(log.draws().is_empty());
    assert_eq!(report.final_state, MatchState::Aborted);
    let result = &report.result;
    assert_eq!(result.status(), ResultStatus::DoubleForfeit);
    assert_eq!(result.winner_player_id, "");
    assert_eq!(scores(&report), [("P01", 0), ("P02", 0)]);
    assert_eq!(result.at_fault_player_ids, ["P01", "P02"]);
    assert_eq!(
        result.reason,
        "P01 did not answer the move request 3 times (E001); P02 did not answer the move request 3 times (E001)"
    );
    assert_game_over_sent_to_both(&log, &report);
}

#[tokio::test(start_paused = true)]
async fn an_answer_after_the_move_timeout_counts_as_a_miss() {
    let log = Log::default();
    let late = even().moves([Move::Late(secs(31), choice("odd")), Move::Play(choice("even"))]);
    let players = FakePlayers::new(late, odd(), &log);
    let mut chance = RecordingChance::new([4], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(30 + 2), "the late answer is not waited for");
    assert_eq!(codes(&log.game_errors(Seat::A)), ["E001"]);
    // The late "odd" never counted: the game took the retry's "even".
    assert_eq!(report.result.winner_player_id, "P01", "4 is even");
    let to = Direction::ToPlayer;
    let from = Direction::FromPlayer;
    assert_eq!(
        exchanges(&report, "P01")[2..7],
        [
            (to, "CHOOSE_PARITY_CALL", 1, ""),
            (from, "CHOOSE_PARITY_RESPONSE", 1, "E001"),
            (to, "GAME_ERROR", 1, "E001"),
            (to, "CHOOSE_PARITY_CALL", 2, ""),
            (from, "CHOOSE_PARITY_RESPONSE", 2, ""),
        ]
    );
}

// ---------------------------------------------------------------------------------------------------
// Notifications are best effort

#[tokio::test(start_paused = true)]
async fn failed_notifications_are_recorded_but_not_fatal() {
    let log = Log::default();
    let deaf = even()
        .moves([Move::Play(choice("even?")), Move::Play(choice("even"))])
        .game_errors(Notice::Fail(Code::Unavailable))
        .game_overs(Notice::Silent);
    let players = FakePlayers::new(deaf, odd(), &log);
    let mut chance = RecordingChance::new([6], &log);

    let (report, took) = play(&players, &mut chance).await;

    assert_eq!(took, secs(2 + 5), "a retry delay, then the game-over timeout");
    assert_eq!(report.final_state, MatchState::Finished);
    assert_eq!(report.result.winner_player_id, "P01");
    let failures: Vec<_> = exchanges(&report, "P01")
        .into_iter()
        .filter(|(direction, _, _, code)| *direction == Direction::FromPlayer && !code.is_empty())
        .collect();
    assert_eq!(
        failures,
        [
            (Direction::FromPlayer, "GAME_ERROR", 1, "E009"),
            (Direction::FromPlayer, "GAME_OVER", 1, "E001"),
        ]
    );
}

// ---------------------------------------------------------------------------------------------------
// Other games and impossible ones

#[tokio::test(start_paused = true)]
async fn a_tic_tac_toe_match_runs_turn_by_turn_through_the_same_runner() {
    let log = Log::default();
    let first_legal = || Script::playing(Struct::default()).moves([Move::FirstLegal]);
    let players = FakePlayers::new(first_legal(), first_legal(), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, took) = play_game("tic_tac_toe", &players, &mut chance).await;

    assert_eq!(took, Duration::ZERO);
    // One seat at a time, each request only after the previous move was answered: X takes 0, 2, 4, 6.
    let turns: Vec<_> = log
        .events()
        .into_iter()
        .filter_map(|(_, event)| match event {
            Event::MoveRequested(seat, request) => Some(format!("ask {seat} step {}", request.step)),
            Event::MoveAnswered(seat) => Some(format!("got {seat}")),
            _ => None,
        })
        .collect();
    let mut expected = Vec::new();
    for (turn, seat) in [Seat::A, Seat::B].into_iter().cycle().take(7).enumerate() {
        expected.push(format!("ask {seat} step {}", turn / 2 + 1));
        expected.push(format!("got {seat}"));
    }
    assert_eq!(turns, expected);
    assert!(log.draws().is_empty(), "tic-tac-toe draws nothing");
    assert_eq!(report.final_state, MatchState::Finished);
    assert_eq!(transitions(&report), PLAYED);
    assert_eq!(report.result.status(), ResultStatus::Win);
    assert_eq!(report.result.winner_player_id, "P01");
    assert_eq!(report.result.reason, "P01 (X) completed the line 2-4-6");
    let kinds: Vec<_> = exchanges(&report, "P02")
        .into_iter()
        .map(|(_, kind, _, _)| kind)
        .collect();
    assert_eq!(kinds.iter().filter(|kind| **kind == "GAME_MOVE_CALL").count(), 3);
    assert_eq!(
        kinds.iter().filter(|kind| **kind == "GAME_MOVE_RESPONSE").count(),
        3
    );
    assert_game_over_sent_to_both(&log, &report);
}

#[tokio::test(start_paused = true)]
async fn an_unknown_game_type_is_aborted_as_a_double_forfeit_without_invitations() {
    let log = Log::default();
    let players = FakePlayers::new(even(), odd(), &log);
    let mut chance = RecordingChance::new([], &log);

    let (report, _) = play_game("chess", &players, &mut chance).await;

    assert!(log.invites(Seat::A).is_empty() && log.invites(Seat::B).is_empty());
    assert_eq!(report.final_state, MatchState::Aborted);
    assert_eq!(report.result.status(), ResultStatus::DoubleForfeit);
    assert_eq!(scores(&report), [("P01", 0), ("P02", 0)]);
    assert!(
        report
            .result
            .reason
            .starts_with("unsupported game type \"chess\"")
            && report.result.reason.contains("E019"),
        "{}",
        report.result.reason
    );
    assert_eq!(
        transitions(&report),
        [
            (v2::MatchState::Unspecified, v2::MatchState::WaitingForPlayers),
            (v2::MatchState::WaitingForPlayers, v2::MatchState::Aborted),
        ]
    );
    assert_game_over_sent_to_both(&log, &report);
}
