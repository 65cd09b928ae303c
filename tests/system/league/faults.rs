//! Misbehaving bots in small leagues on short real timings: each fault must end exactly as the
//! specification says — in the recorded result, in the transcript (attempts 1..max_attempts on the
//! failing exchange) and in what the bots were told — and every invariant must still hold.

use league_player::{GameErrorRecord, Outcome};
use league_proto::v2::{Direction, MatchState, MatchTranscript, ResultStatus};

use super::support::{Finished, RunningLeague, Setup, check_all, finish, start_league};
use league_testkit::invariants::{Facts, MatchRow, messages, states};

const INVITATION: &str = "GAME_INVITATION";
const JOIN_ACK: &str = "GAME_JOIN_ACK";
const MOVE_CALL: &str = "CHOOSE_PARITY_CALL";
const MOVE_RESPONSE: &str = "CHOOSE_PARITY_RESPONSE";
const GAME_ERROR: &str = "GAME_ERROR";

/// Plays a fault league to its end; every invariant is checked before the test's own assertions.
async fn play(strategies: &'static str) -> (RunningLeague, Finished, Facts) {
    let mut league = start_league(Setup::faults(strategies)).await;
    let finished = finish(&mut league).await;
    let facts = check_all(&league, &finished).await;
    (league, finished, facts)
}

/// `player`'s row of the final standings: (played, wins, draws, losses, technical losses, points).
fn standing(finished: &Finished, player: &str) -> (u32, u32, u32, u32, u32, u32) {
    let row = finished
        .standings
        .standings
        .iter()
        .find(|row| row.player_id == player)
        .unwrap_or_else(|| panic!("{player} in the standings"));
    (
        row.played,
        row.wins,
        row.draws,
        row.losses,
        row.technical_losses,
        row.points,
    )
}

fn max_attempts(league: &RunningLeague) -> u32 {
    league.setup.timing.max_attempts
}

/// `(attempt, error_code)` of every `message_type` record of `player` going `direction`, in order.
fn exchanges(
    transcript: &MatchTranscript,
    player: &str,
    direction: Direction,
    message_type: &str,
) -> Vec<(u32, String)> {
    messages(transcript)
        .into_iter()
        .filter(|m| m.player_id == player && m.direction() == direction && m.message_type == message_type)
        .map(|m| (m.attempt, m.error_code.clone()))
        .collect()
}

/// Attempts 1..=count, each with `code` ("" for none).
fn attempts(count: u32, code: &str) -> Vec<(u32, String)> {
    (1..=count).map(|attempt| (attempt, code.to_owned())).collect()
}

/// `m` is a technical loss of `loser`: the opponent wins 3–0, `loser` alone at fault, the match aborted.
fn assert_technical_loss(m: &MatchRow, loser: &str) {
    let winner = m.opponent_of(loser);
    assert_eq!(
        m.result_status.as_deref(),
        Some("technical_loss"),
        "{}",
        m.match_id
    );
    assert_eq!(m.winner_player_id.as_deref(), Some(winner), "{}", m.match_id);
    assert_eq!(m.at_fault(), [loser], "{}", m.match_id);
    let result = m.result();
    assert_eq!(result.status(), ResultStatus::TechnicalLoss);
    for score in &result.scores {
        let expected = if score.player_id == winner { 3 } else { 0 };
        assert_eq!(score.points, expected, "{}: {}", m.match_id, score.player_id);
    }
    assert_eq!(
        states(&m.transcript()).last(),
        Some(&MatchState::Aborted),
        "{}",
        m.match_id
    );
}

/// In `m`, `player` was sent `request` at attempts 1..=max, each answered by a `reply` record carrying
/// `reply_code`, and each followed by a GAME_ERROR with `error_code`.
fn assert_failed_every_attempt(
    m: &MatchRow,
    player: &str,
    (request, reply): (&str, &str),
    reply_code: &str,
    error_code: &str,
    max: u32,
) {
    let transcript = m.transcript();
    let id = &m.match_id;
    assert_eq!(
        exchanges(&transcript, player, Direction::ToPlayer, request),
        attempts(max, ""),
        "{id}: {request} to {player}"
    );
    assert_eq!(
        exchanges(&transcript, player, Direction::FromPlayer, reply),
        attempts(max, reply_code),
        "{id}: {reply} from {player}"
    );
    assert_eq!(
        exchanges(&transcript, player, Direction::ToPlayer, GAME_ERROR),
        attempts(max, error_code),
        "{id}: GAME_ERROR to {player}"
    );
}

/// In `m`, `player` was asked `request` once and answered at once.
fn assert_answered_first_time(m: &MatchRow, player: &str, (request, reply): (&str, &str)) {
    let transcript = m.transcript();
    let id = &m.match_id;
    assert_eq!(
        exchanges(&transcript, player, Direction::ToPlayer, request),
        attempts(1, ""),
        "{id}"
    );
    assert_eq!(
        exchanges(&transcript, player, Direction::FromPlayer, reply),
        attempts(1, ""),
        "{id}"
    );
}

/// In `m`, `player` was sent no GAME_ERROR.
fn assert_not_told(m: &MatchRow, player: &str) {
    let errors = exchanges(&m.transcript(), player, Direction::ToPlayer, GAME_ERROR);
    assert!(
        errors.is_empty(),
        "{}: GAME_ERRORs to {player}: {errors:?}",
        m.match_id
    );
}

/// The GAME_ERRORs `player` received about `match_id`.
fn told(league: &RunningLeague, player: &str, match_id: &str) -> Vec<GameErrorRecord> {
    league
        .host
        .game_errors(player)
        .expect("a hosted bot")
        .into_iter()
        .filter(|error| error.match_id == match_id)
        .collect()
}

/// `player` received `max` GAME_ERRORs about `match_id`, each with `code`, counted 1..=max, asking for
/// `retry_action` until the last, which asks for nothing: a technical loss follows.
fn assert_told_every_attempt(
    league: &RunningLeague,
    player: &str,
    match_id: &str,
    code: &str,
    retry_action: &str,
) {
    let max = max_attempts(league);
    let errors = told(league, player, match_id);
    let summary: Vec<(&str, u32, u32, &str, &str)> = errors
        .iter()
        .map(|e| {
            (
                e.code.as_str(),
                e.retry_count,
                e.max_retries,
                e.action_required.as_str(),
                e.consequence.as_str(),
            )
        })
        .collect();
    let expected: Vec<(&str, u32, u32, &str, &str)> = (1..=max)
        .map(|attempt| {
            let action = if attempt < max { retry_action } else { "NONE" };
            (code, attempt, max, action, "TECHNICAL_LOSS")
        })
        .collect();
    assert_eq!(
        summary, expected,
        "GAME_ERRORs {player} received about {match_id}"
    );
}

/// `player`'s memory of `m`: the given status and outcome, and whether it was held at fault.
fn assert_remembered(
    league: &RunningLeague,
    player: &str,
    m: &MatchRow,
    status: ResultStatus,
    outcome: Outcome,
    at_fault: bool,
) {
    let history = league.host.history(player).expect("a hosted bot");
    let game = history
        .iter()
        .find(|game| game.match_id.is_some_and(|id| id == m.match_id))
        .unwrap_or_else(|| panic!("{player} remembers {}", m.match_id));
    assert_eq!(
        (game.status, game.outcome, game.at_fault),
        (status, outcome, at_fault),
        "{player} in {}",
        m.match_id
    );
}

/// Nobody but `faulty` received a GAME_ERROR.
fn assert_only_told(league: &RunningLeague, faulty: &[String]) {
    for bot in &league.bots {
        if !faulty.contains(&bot.player_id) {
            let errors = league.host.game_errors(&bot.player_id).expect("a hosted bot");
            assert!(errors.is_empty(), "{} was told {errors:?}", bot.player_id);
        }
    }
}

/// A silent player never answers the invitation: E001 at every attempt, a GAME_ERROR each time, then a
/// technical loss; it still takes every notification (the league-event check covers that).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_player_loses_each_match_after_max_attempts_of_e001() {
    let (league, finished, facts) = play("silent,always_even,always_odd").await;
    let silent = league.bot("silent");
    let max = max_attempts(&league);
    let mine = facts.matches_of(&silent);
    assert_eq!(mine.len(), 2);
    for m in mine {
        assert_technical_loss(m, &silent);
        assert_failed_every_attempt(m, &silent, (INVITATION, JOIN_ACK), "E001", "E001", max);
        assert_answered_first_time(m, m.opponent_of(&silent), (INVITATION, JOIN_ACK));
        assert_not_told(m, m.opponent_of(&silent));
        assert!(exchanges(&m.transcript(), &silent, Direction::ToPlayer, MOVE_CALL).is_empty());
        assert_told_every_attempt(&league, &silent, &m.match_id, "E001", "ANSWER_INVITATION");
        assert_remembered(
            &league,
            &silent,
            m,
            ResultStatus::TechnicalLoss,
            Outcome::Loss,
            true,
        );
        assert_remembered(
            &league,
            m.opponent_of(&silent),
            m,
            ResultStatus::TechnicalLoss,
            Outcome::Win,
            false,
        );
    }
    assert_eq!(standing(&finished, &silent), (2, 0, 0, 2, 2, 0));
    assert_only_told(&league, &[silent]);
    league.cleanup().await;
}

/// A declined invitation loses at once: no retry, no GAME_ERROR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_that_declines_loses_at_once_without_retries() {
    let (league, _, facts) = play("declines,random,adaptive").await;
    let declines = league.bot("declines");
    let mine = facts.matches_of(&declines);
    assert_eq!(mine.len(), 2);
    for m in mine {
        assert_technical_loss(m, &declines);
        let transcript = m.transcript();
        assert_eq!(
            exchanges(&transcript, &declines, Direction::ToPlayer, INVITATION),
            attempts(1, "")
        );
        assert_eq!(
            exchanges(&transcript, &declines, Direction::FromPlayer, JOIN_ACK),
            attempts(1, "")
        );
        let ack = messages(&transcript)
            .into_iter()
            .find(|r| r.player_id == declines && r.message_type == JOIN_ACK)
            .and_then(|r| r.payload.clone())
            .expect("the join ack is recorded");
        assert_eq!(
            ack.fields.get("accept").and_then(|v| v.kind.clone()),
            Some(prost_types::value::Kind::BoolValue(false)),
            "{}: declined",
            m.match_id
        );
        assert!(
            messages(&transcript)
                .iter()
                .all(|r| r.message_type != GAME_ERROR && r.message_type != MOVE_CALL),
            "{}: neither a GAME_ERROR nor a move request after a refusal",
            m.match_id
        );
        assert!(told(&league, &declines, &m.match_id).is_empty());
        assert_remembered(
            &league,
            &declines,
            m,
            ResultStatus::TechnicalLoss,
            Outcome::Loss,
            true,
        );
    }
    assert_only_told(&league, &[]);
    league.cleanup().await;
}

/// An invalid parity choice uses an attempt like a timeout: E004 GAME_ERRORs up to max_attempts, then a
/// technical loss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_moves_lose_after_max_attempts_of_e004() {
    let (league, _, facts) = play("invalid,random,alternating").await;
    let invalid = league.bot("invalid");
    let max = max_attempts(&league);
    let mine = facts.matches_of(&invalid);
    assert_eq!(mine.len(), 2);
    for m in mine {
        assert_technical_loss(m, &invalid);
        // The refused moves are recorded as received; the GAME_ERROR that follows each says why.
        assert_failed_every_attempt(m, &invalid, (MOVE_CALL, MOVE_RESPONSE), "", "E004", max);
        assert_answered_first_time(m, m.opponent_of(&invalid), (MOVE_CALL, MOVE_RESPONSE));
        assert_not_told(m, m.opponent_of(&invalid));
        assert_told_every_attempt(&league, &invalid, &m.match_id, "E004", "RESEND_MOVE");
        assert_remembered(
            &league,
            &invalid,
            m,
            ResultStatus::TechnicalLoss,
            Outcome::Loss,
            true,
        );
    }
    assert_only_told(&league, &[invalid]);
    league.cleanup().await;
}

/// A move later than the move timeout is a timeout (E001) at every attempt, then a technical loss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_moves_lose_after_max_attempts_of_e001() {
    // 400 ms is twice the move timeout of the fault timings.
    let (league, _, facts) = play("late:400,random,always_odd").await;
    assert!(league.setup.timing.move_timeout.as_millis() < 400);
    let late = league.bot("late:400");
    let max = max_attempts(&league);
    let mine = facts.matches_of(&late);
    assert_eq!(mine.len(), 2);
    for m in mine {
        assert_technical_loss(m, &late);
        assert_answered_first_time(m, &late, (INVITATION, JOIN_ACK));
        assert_failed_every_attempt(m, &late, (MOVE_CALL, MOVE_RESPONSE), "E001", "E001", max);
        assert_answered_first_time(m, m.opponent_of(&late), (MOVE_CALL, MOVE_RESPONSE));
        assert_not_told(m, m.opponent_of(&late));
        assert_told_every_attempt(&league, &late, &m.match_id, "E001", "RESEND_MOVE");
        assert_remembered(
            &league,
            &late,
            m,
            ResultStatus::TechnicalLoss,
            Outcome::Loss,
            true,
        );
    }
    assert_only_told(&league, &[late]);
    league.cleanup().await;
}

/// A player whose first two move requests fail with E009 recovers at the third of three attempts: its
/// match is played to a normal result, and it was told of exactly those two failures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_player_recovers_within_max_attempts() {
    let (league, _, facts) = play("flaky:2,random,always_even").await;
    assert_eq!(max_attempts(&league), 3);
    let flaky = league.bot("flaky:2");
    let mine = facts.matches_of(&flaky);
    assert_eq!(mine.len(), 2);
    // Its failures are counted over its life: the first match it plays gets both.
    let (first, second) = (mine[0], mine[1]);
    for m in [first, second] {
        assert!(
            matches!(m.result_status.as_deref(), Some("win" | "draw")),
            "{}: played to a normal result, got {:?}",
            m.match_id,
            m.result_status
        );
        assert!(m.at_fault().is_empty());
        assert_eq!(states(&m.transcript()).last(), Some(&MatchState::Finished));
    }
    let transcript = first.transcript();
    assert_eq!(
        exchanges(&transcript, &flaky, Direction::ToPlayer, MOVE_CALL),
        attempts(3, "")
    );
    assert_eq!(
        exchanges(&transcript, &flaky, Direction::FromPlayer, MOVE_RESPONSE),
        [(1, "E009".to_owned()), (2, "E009".to_owned()), (3, String::new())]
    );
    assert_eq!(
        exchanges(&transcript, &flaky, Direction::ToPlayer, GAME_ERROR),
        attempts(2, "E009")
    );
    assert_answered_first_time(second, &flaky, (MOVE_CALL, MOVE_RESPONSE));
    assert_not_told(second, &flaky);

    let errors = league.host.game_errors(&flaky).expect("a hosted bot");
    let summary: Vec<(&str, &str, u32, &str)> = errors
        .iter()
        .map(|e| {
            (
                e.match_id.as_str(),
                e.code.as_str(),
                e.retry_count,
                e.action_required.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (first.match_id.as_str(), "E009", 1, "RESEND_MOVE"),
            (first.match_id.as_str(), "E009", 2, "RESEND_MOVE")
        ]
    );
    assert_only_told(&league, &[flaky]);
    league.cleanup().await;
}

/// Two silent players: a double forfeit, 0–0, both at fault, both told at every attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_silent_players_both_forfeit() {
    let (league, finished, facts) = play("silent,silent").await;
    let silent = league.bots_with("silent");
    let max = max_attempts(&league);
    assert_eq!(facts.matches.len(), 1);
    let m = &facts.matches[0];
    assert_eq!(m.result_status.as_deref(), Some("double_forfeit"));
    assert_eq!(m.winner_player_id, None);
    let mut at_fault = m.at_fault();
    at_fault.sort();
    let mut both = silent.clone();
    both.sort();
    assert_eq!(at_fault, both);
    let result = m.result();
    assert_eq!(result.status(), ResultStatus::DoubleForfeit);
    assert!(result.scores.iter().all(|score| score.points == 0));
    assert_eq!(states(&m.transcript()).last(), Some(&MatchState::Aborted));
    for player in &silent {
        assert_failed_every_attempt(m, player, (INVITATION, JOIN_ACK), "E001", "E001", max);
        assert_told_every_attempt(&league, player, &m.match_id, "E001", "ANSWER_INVITATION");
        assert_remembered(
            &league,
            player,
            m,
            ResultStatus::DoubleForfeit,
            Outcome::Loss,
            true,
        );
        assert_eq!(standing(&finished, player), (1, 0, 0, 1, 1, 0));
    }
    league.cleanup().await;
}
