//! Runs one match from invitation to GAME_OVER: pure async logic over the [`Players`]
//! trait, every wait on `tokio::time` (so tests run on paused time).
//!
//! 1. WAITING_FOR_PLAYERS: both players are invited at once. Each invitation is bounded by the join
//!    timeout; a miss (see [`miss`](self) for what counts and what is retried) is followed by a GAME_ERROR
//!    and, after the retry delay, another invitation, up to `max_attempts`. A declined invitation loses at
//!    once. One player failing is a technical loss, both a double forfeit → ABORTED.
//! 2. COLLECTING_CHOICES: every seat the game awaits is asked at once (both for even_odd, so both
//!    requests are in flight together; one at a time for a turn-based game), each with its own step
//!    context only, so no player sees another's choice before GAME_OVER. A refused move uses an attempt
//!    like a timeout does. A seat failing its step → technical loss (both in the same step → double
//!    forfeit) → ABORTED.
//! 3. DRAWING_NUMBER: only now does the game draw (`outcome(chance)`) → EVALUATING → FINISHED.
//! 4. GAME_OVER goes to both players at once, whatever the result, bounded by the game-over timeout;
//!    failures are recorded, not fatal.
//!
//! An outage of the league's own services in between (the gateway or a player host down) is no miss:
//! the call is made again until the service is back, and a match it outlasts is [`Interrupted`] without a
//! result (see [`outage`]).
//!
//! A game type without an engine cannot happen in practice (the manager only hands a referee the game
//! types it registered for); should it, the match is ABORTED at once as a double forfeit with the reason
//! "unsupported game type …" and no invitation is sent — but GAME_OVER is, so both players learn it.

mod calls;
pub mod endpoint_calls;
pub(crate) mod miss;
pub mod outage;
pub mod players;
mod results;
pub mod spans;
pub mod transcript;

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use futures::future::{join, join_all};
use league_domain::{Assignment, MessageType, Timing, move_messages, points};
use league_proto::ErrorCode;
use league_proto::v2::{
    Direction, InviteToMatchRequest, MatchContext, MatchResult, MatchTranscript, NotifyGameErrorRequest,
    NotifyGameOverRequest, PlayerRecord, PlayerScore, RequestMoveRequest, ResultStatus, Role,
};
use prost_types::Struct;
use rand::TryRngCore;
use rand::rngs::OsRng;
use tonic::Status;
use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::chance::Chance;
use crate::game::{Game, GameOutcome, GameResult, Seat};
use crate::games::new_game;
use crate::match_state::MatchState;
use crate::metrics;
use crate::payload::{boolean, nested, number, object, string};
use miss::{Miss, failure_reason};
pub use outage::Interrupted;
pub use players::{GrpcPlayers, PlayerChannels, Players};
pub use spans::match_span;
pub use transcript::MatchProgress;

/// A phase of the match (see [`spans`]), failing when a player misses an exchange in it.
macro_rules! phase_span {
    ($name:literal) => {
        tracing::info_span!(
            $name,
            otel.status_code = tracing::field::Empty,
            otel.status_description = tracing::field::Empty
        )
    };
}

/// What GAME_ERROR tells a player happens if the exchange fails for good.
pub const CONSEQUENCE: &str = "TECHNICAL_LOSS";
/// GAME_ERROR `action_required` when the invitation will be sent again.
pub const ACTION_ANSWER_INVITATION: &str = "ANSWER_INVITATION";
/// GAME_ERROR `action_required` when the move will be requested again.
pub const ACTION_RESEND_MOVE: &str = "RESEND_MOVE";
/// GAME_ERROR `action_required` when no attempt follows.
pub const ACTION_NONE: &str = "NONE";

/// Everything a finished match leaves behind: the result to report, the transcript, the last state
/// (FINISHED or ABORTED).
#[derive(Debug, Clone, PartialEq)]
pub struct MatchReport {
    pub result: MatchResult,
    pub transcript: MatchTranscript,
    pub final_state: MatchState,
}

/// Runs the match of `assignment` between `players`, drawing from `chance`, as referee `referee_id`.
/// [`Interrupted`] when the league's own services stayed down longer than the match can wait.
pub async fn run_match(
    assignment: &Assignment,
    players: &impl Players,
    chance: &mut dyn Chance,
    referee_id: &str,
) -> Result<MatchReport, Interrupted> {
    run_match_with_progress(assignment, players, chance, referee_id, &MatchProgress::new()).await
}

/// [`run_match`], writing the match's state and transcript into `progress` as it goes, so others can
/// watch it (the worker's registry of running matches). Its phases are spans inside the current one,
/// onto which it records the conversation and the outcome (the worker's `match` span, see [`spans`]).
pub async fn run_match_with_progress(
    assignment: &Assignment,
    players: &impl Players,
    chance: &mut dyn Chance,
    referee_id: &str,
    progress: &MatchProgress,
) -> Result<MatchReport, Interrupted> {
    let result = play_match(assignment, players, chance, referee_id, progress).await?;
    Ok(MatchReport {
        transcript: progress.transcript(&assignment.scheduled.match_id),
        final_state: progress.state(),
        result,
    })
}

/// [`run_match_with_progress`] without copying the transcript out of `progress` at the end: the
/// worker encodes its report straight from `progress`, where watchers keep reading it while the match
/// is reported (crate::worker's `encoded_report`). Returns the result.
pub async fn play_match(
    assignment: &Assignment,
    players: &impl Players,
    chance: &mut dyn Chance,
    referee_id: &str,
    progress: &MatchProgress,
) -> Result<MatchResult, Interrupted> {
    let runner = Runner::new(assignment, players, referee_id, progress);
    let match_span = Span::current();
    match_span.record("conversation_id", runner.context.conversation_id.as_str());
    let result = match runner.decide(chance).await {
        Ok(result) => result,
        Err(interrupted) => {
            tracing::warn!(
                match_id = %runner.context.match_id,
                reason = %interrupted.reason,
                "match interrupted by an outage of the league's services: no result, nobody charged"
            );
            spans::record_error(&match_span, &interrupted.reason);
            metrics::match_interrupted();
            return Err(interrupted);
        }
    };
    tracing::info!(
        match_id = %runner.context.match_id,
        status = result.status().as_str_name(),
        winner = %result.winner_player_id,
        reason = %result.reason,
        "match decided"
    );
    spans::record_outcome(&match_span, &result);
    metrics::match_completed(spans::outcome_name(&result));
    // The report waits for both GAME_OVERs to be taken (or to time out). Reported earlier, the result
    // could complete the round, and a player could get ROUND_COMPLETED or its next GAME_INVITATION
    // before this match's GAME_OVER: strict agents refuse an invitation while they think a match is
    // still on. It also keeps a refused GAME_OVER in the reported transcript.
    runner
        .game_over(&result)
        .instrument(phase_span!("game_over"))
        .await;
    Ok(result)
}

/// Which exchange a miss belongs to.
#[derive(Debug, Clone, Copy)]
enum Exchange {
    Invitation,
    Move,
}

impl Exchange {
    fn name(self) -> &'static str {
        match self {
            Exchange::Invitation => "invitation",
            Exchange::Move => "move request",
        }
    }

    fn retry_action(self) -> &'static str {
        match self {
            Exchange::Invitation => ACTION_ANSWER_INVITATION,
            Exchange::Move => ACTION_RESEND_MOVE,
        }
    }
}

/// A seat that failed an exchange for good.
#[derive(Debug)]
struct SeatFailure {
    seat: Seat,
    reason: String,
    /// Why, as metrics name it (`timeout`, `declined`, …).
    cause: &'static str,
}

/// Why an exchange ended without its answer.
#[derive(Debug)]
enum Stop {
    /// The seat failed the exchange for good.
    Seat(SeatFailure),
    /// The league's own services stayed down.
    Interrupted(Interrupted),
}

impl From<Interrupted> for Stop {
    fn from(interrupted: Interrupted) -> Stop {
        Stop::Interrupted(interrupted)
    }
}

/// The seats' failures of one step, or the interruption if either was interrupted.
fn seat_failures(stops: [Option<Stop>; 2]) -> Result<[Option<SeatFailure>; 2], Interrupted> {
    let mut failures = [None, None];
    for (index, stop) in stops.into_iter().enumerate() {
        match stop {
            None => {}
            Some(Stop::Seat(failure)) => failures[index] = Some(failure),
            Some(Stop::Interrupted(interrupted)) => return Err(interrupted),
        }
    }
    Ok(failures)
}

/// One match being run.
struct Runner<'a, P> {
    players: &'a P,
    progress: &'a MatchProgress,
    timing: Timing,
    /// How long the match waits out an outage of the league's services (see [`outage`]).
    patience: Duration,
    context: MatchContext,
    /// By seat index.
    ids: [String; 2],
    standings: [PlayerRecord; 2],
    /// The move call and response names (CHOOSE_PARITY_* for even_odd).
    move_messages: (MessageType, MessageType),
}

impl<'a, P: Players> Runner<'a, P> {
    fn new(
        assignment: &Assignment,
        players: &'a P,
        referee_id: &str,
        progress: &'a MatchProgress,
    ) -> Runner<'a, P> {
        let scheduled = assignment.scheduled.clone();
        let ids = assignment.player_ids().clone().map(String::from);
        // A player with no record yet (its first match) has played nothing: all zeros.
        let standings = assignment
            .players
            .each_ref()
            .map(|p| p.record.unwrap_or_default());
        Runner {
            players,
            progress,
            timing: assignment.timing,
            patience: outage::patience(assignment.lease.duration),
            move_messages: move_messages(&scheduled.game_type),
            context: MatchContext {
                league_id: scheduled.league_id,
                round_id: scheduled.round_id,
                match_id: scheduled.match_id,
                game_type: scheduled.game_type,
                conversation_id: conversation_id(),
                referee_id: referee_id.to_owned(),
            },
            ids,
            standings,
        }
    }

    fn id(&self, seat: Seat) -> &str {
        &self.ids[seat.index()]
    }

    /// Runs the match up to its result (FINISHED or ABORTED).
    async fn decide(&self, chance: &mut dyn Chance) -> Result<MatchResult, Interrupted> {
        let [a, b] = &self.ids;
        let context = &self.context;
        self.progress.start(format!(
            "referee {} runs {} ({}): {a} vs {b}",
            context.referee_id, context.match_id, context.game_type
        ));
        let Some(game) = new_game(&context.game_type, self.ids.clone()) else {
            let reason = format!(
                "unsupported game type {:?}: this referee has no engine for it ({})",
                context.game_type,
                ErrorCode::UnsupportedGameType
            );
            tracing::error!(match_id = %context.match_id, %reason, "cannot run match");
            return Ok(self.referee_forfeit(reason));
        };

        let (joined_a, joined_b) = join(self.invite(Seat::A), self.invite(Seat::B))
            .instrument(phase_span!("invite"))
            .await;
        if let Some(result) = self.failed(seat_failures([joined_a.err(), joined_b.err()])?) {
            return Ok(result);
        }
        self.transition(MatchState::CollectingChoices, "both players joined".to_owned());

        let game = Mutex::new(game);
        if let Some(result) = self.collect(&game).instrument(phase_span!("collect")).await? {
            return Ok(result);
        }
        let mut game = game.into_inner().unwrap_or_else(PoisonError::into_inner);

        self.transition(MatchState::DrawingNumber, "every move is in".to_owned());
        let draw = tracing::info_span!("draw", drawn_number = Empty, source = chance.source());
        let Some(outcome) = draw.in_scope(|| game.outcome(chance)) else {
            return Ok(self.referee_forfeit(format!(
                "the {} engine gave no outcome for a finished game (referee bug)",
                context.game_type
            )));
        };
        let drawn = match outcome
            .metadata
            .fields
            .get("drawn_number")
            .and_then(|value| value.kind.as_ref())
        {
            Some(prost_types::value::Kind::NumberValue(drawn)) => {
                draw.record("drawn_number", drawn);
                draw.in_scope(|| {
                    tracing::info!(
                        match_id = %context.match_id,
                        drawn_number = drawn,
                        source = chance.source(),
                        "number drawn"
                    );
                });
                format!("drew {drawn} (source: {})", chance.source())
            }
            _ => format!("{} draws no number", context.game_type),
        };
        self.transition(MatchState::Evaluating, drawn);
        let result = self.played(outcome);
        self.transition(MatchState::Finished, result.reason.clone());
        Ok(result)
    }

    /// Asks for moves until the game is over; the result if a seat (or the engine) failed on the way.
    async fn collect(&self, game: &Mutex<Box<dyn Game>>) -> Result<Option<MatchResult>, Interrupted> {
        let mut steps = [0u32; 2];
        while !lock(game).is_terminal() {
            let awaiting = lock(game).awaiting();
            if awaiting.is_empty() {
                return Ok(Some(self.referee_forfeit(format!(
                    "the {} engine awaits no move before the end (referee bug)",
                    self.context.game_type
                ))));
            }
            let asks: Vec<_> = awaiting
                .iter()
                .map(|&seat| {
                    steps[seat.index()] += 1;
                    self.collect_move(game, seat, steps[seat.index()])
                })
                .collect();
            let mut failures = [None, None];
            for (&seat, answered) in awaiting.iter().zip(join_all(asks).await) {
                failures[seat.index()] = answered.err();
            }
            if let Some(result) = self.failed(seat_failures(failures)?) {
                return Ok(Some(result));
            }
        }
        Ok(None)
    }

    fn transition(&self, to: MatchState, reason: String) {
        tracing::debug!(match_id = %self.context.match_id, state = %to, %reason, "match state");
        self.progress.transition(to, reason);
    }

    /// Invites the player in `seat` until it joins, declines or runs out of attempts.
    async fn invite(&self, seat: Seat) -> Result<(), Stop> {
        let timing = self.timing;
        let id = self.id(seat);
        let role = Role::from(seat);
        let opponent = self.id(seat.other()).to_owned();
        let mut misses = Vec::new();
        for attempt in 1..=timing.max_attempts {
            if attempt > 1 {
                tokio::time::sleep(timing.retry_delay).await;
            }
            let request = || InviteToMatchRequest {
                player_id: id.to_owned(),
                context: Some(self.context.clone()),
                role_in_match: role.into(),
                opponent_id: opponent.clone(),
                deadline: Some(deadline(timing.join_timeout)),
            };
            let payload = object([
                ("role_in_match", string(role.as_str_name())),
                ("opponent_id", string(opponent.as_str())),
            ]);
            self.sent(
                seat,
                MessageType::GameInvitation.as_str(),
                attempt,
                Some(payload),
                None,
            );
            let answer = self
                .reach(
                    seat,
                    MessageType::GameJoinAck.as_str(),
                    attempt,
                    timing.join_timeout,
                    || self.players.invite(seat, request()),
                )
                .await?;
            let miss = match answer {
                Ok(ack) => {
                    let payload = object([
                        ("accept", boolean(ack.accept)),
                        ("reason", string(ack.reason.as_str())),
                    ]);
                    self.received(
                        seat,
                        MessageType::GameJoinAck.as_str(),
                        attempt,
                        Some(payload),
                        None,
                    );
                    if ack.accept {
                        return Ok(());
                    }
                    let reason = match ack.reason.as_str() {
                        "" => format!("{id} declined the invitation"),
                        why => format!("{id} declined the invitation: {why}"),
                    };
                    spans::record_error(&Span::current(), &reason);
                    return Err(Stop::Seat(SeatFailure {
                        seat,
                        reason,
                        cause: "declined",
                    }));
                }
                Err(miss) => miss,
            };
            if let Some(failure) = self
                .missed(seat, Exchange::Invitation, attempt, miss, &mut misses)
                .await
            {
                return Err(Stop::Seat(failure));
            }
        }
        Err(Stop::Seat(self.exhausted(seat, Exchange::Invitation, &misses)))
    }

    /// Asks the player in `seat` for its move of `step` until the game takes one or attempts run out.
    async fn collect_move(&self, game: &Mutex<Box<dyn Game>>, seat: Seat, step: u32) -> Result<(), Stop> {
        let timing = self.timing;
        let (call, response) = (self.move_messages.0.as_str(), self.move_messages.1.as_str());
        let mut misses = Vec::new();
        for attempt in 1..=timing.max_attempts {
            if attempt > 1 {
                tokio::time::sleep(timing.retry_delay).await;
            }
            let step_context = lock(game).step_context(seat);
            let payload = object([
                ("step", number(step)),
                ("step_context", nested(step_context.clone())),
            ]);
            let request = || RequestMoveRequest {
                player_id: self.id(seat).to_owned(),
                context: Some(self.context.clone()),
                opponent_id: self.id(seat.other()).to_owned(),
                step,
                attempt,
                deadline: Some(deadline(timing.move_timeout)),
                your_standings: Some(self.standings[seat.index()]),
                step_context: Some(step_context.clone()),
            };
            self.sent(seat, call, attempt, Some(payload), None);
            let answer = self
                .reach(seat, response, attempt, timing.move_timeout, || {
                    self.players.request_move(seat, request())
                })
                .await?;
            let miss = match answer {
                Ok(answer) => {
                    // No payload is an empty move: the game refuses it as invalid, the honest answer.
                    let payload = answer.move_payload.unwrap_or_default();
                    self.received(seat, response, attempt, Some(payload.clone()), None);
                    match lock(game).submit(seat, &payload) {
                        Ok(()) => return Ok(()),
                        Err(invalid) => Miss::invalid(invalid),
                    }
                }
                Err(miss) => miss,
            };
            if let Some(failure) = self
                .missed(seat, Exchange::Move, attempt, miss, &mut misses)
                .await
            {
                return Err(Stop::Seat(failure));
            }
        }
        Err(Stop::Seat(self.exhausted(seat, Exchange::Move, &misses)))
    }

    fn sent(&self, seat: Seat, kind: &str, attempt: u32, payload: Option<Struct>, code: Option<ErrorCode>) {
        let record = transcript::message(Direction::ToPlayer, self.id(seat), kind, attempt, payload, code);
        self.progress.message(record);
    }

    fn received(
        &self,
        seat: Seat,
        kind: &str,
        attempt: u32,
        payload: Option<Struct>,
        code: Option<ErrorCode>,
    ) {
        let record = transcript::message(Direction::FromPlayer, self.id(seat), kind, attempt, payload, code);
        self.progress.message(record);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `after` from now on the wall clock, for a request's `deadline`.
fn deadline(after: Duration) -> prost_types::Timestamp {
    (SystemTime::now() + after).into()
}

/// A fresh id for one match's conversation: 128 random bits in hex.
fn conversation_id() -> String {
    let mut bytes = [0u8; 16];
    if OsRng.try_fill_bytes(&mut bytes).is_err() {
        // Not a secret, only unique: the clock will do if the OS has no randomness to give.
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_nanos())
            .unwrap_or_default();
        bytes = nanos.to_be_bytes();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
