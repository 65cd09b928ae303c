//! Whether a match's recorded result follows from its transcript: for even_odd, the outcome the game's
//! rule (`league_domain::even_odd`) gives the choices the players sent and the number drawn; for
//! tic_tac_toe, the moves the players sent replayed on the referee's own engine; for a technical
//! result, that the player at fault has no valid answer in it; for every result, the scores its status
//! is worth (`league_domain::points`).

use league_domain::even_odd::{self, Parity};
use league_domain::{GameType, MessageType, points};
use league_proto::v2::{
    Direction, MatchResult, MessageRecord, ResultStatus, ScheduledMatch, TranscriptEntry, transcript_entry,
};
use league_referee::chance::Chance;
use league_referee::game::{GameEngine, GameResult, Seat};
use league_referee::games::tic_tac_toe::TicTacToe;
use prost_types::value::Kind;

/// How a result was found to follow from its transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// The game's rule gives it from the players' answers (and, for even_odd, the drawn number).
    ByTheRule,
    /// A technical result: the players at fault have no valid answer in the transcript.
    Technical,
    /// tic_tac_toe: the moves sent, replayed, end the game as recorded.
    Replayed,
    /// A forfeit the manager decided (a withdrawal): no referee, no transcript.
    ByTheManager,
}

/// Checks `scheduled`'s result against `entries`; the disagreement, in words, otherwise.
pub fn check(scheduled: &ScheduledMatch, entries: &[TranscriptEntry]) -> Result<Checked, String> {
    let Some(result) = &scheduled.result else {
        return Err("has a transcript but no result".to_owned());
    };
    let players = [scheduled.player_a_id.as_str(), scheduled.player_b_id.as_str()];
    let status = ResultStatus::try_from(result.status).unwrap_or(ResultStatus::Unspecified);
    scores_follow(result, status, players)?;
    if entries.is_empty() {
        let technical = matches!(status, ResultStatus::TechnicalLoss | ResultStatus::DoubleForfeit);
        return match (scheduled.referee_id.as_str(), technical) {
            ("", true) => Ok(Checked::ByTheManager),
            ("", false) => Err(format!(
                "is a {} with no referee and no transcript",
                status_name(status)
            )),
            (referee, _) => Err(format!(
                "was reported by {referee} with no transcript: nothing shows how it was played"
            )),
        };
    }
    let game: GameType = scheduled
        .game_type
        .parse()
        .map_err(|_| format!("is of an unknown game {:?}", scheduled.game_type))?;
    let choices = match game {
        GameType::EvenOdd => players.map(|player| last_choice(entries, player)),
        _ => [None, None],
    };
    match status {
        ResultStatus::Win | ResultStatus::Draw => match game {
            GameType::EvenOdd => decided_by_the_rule(result, status, players, choices),
            GameType::TicTacToe => replayed(result, status, players, entries),
        },
        ResultStatus::TechnicalLoss | ResultStatus::DoubleForfeit => {
            let at_fault = &result.at_fault_player_ids;
            let expected = if status == ResultStatus::DoubleForfeit {
                2
            } else {
                1
            };
            if at_fault.len() != expected || at_fault.iter().any(|p| !players.contains(&p.as_str())) {
                return Err(format!(
                    "is a {} with players at fault {at_fault:?}",
                    status_name(status)
                ));
            }
            if status == ResultStatus::TechnicalLoss {
                let winner = players
                    .iter()
                    .find(|p| **p != at_fault[0])
                    .copied()
                    .unwrap_or_default();
                if result.winner_player_id != winner {
                    return Err(format!(
                        "is a technical loss of {} won by {:?}",
                        at_fault[0], result.winner_player_id
                    ));
                }
            }
            for (player, choice) in players.iter().zip(choices) {
                if let (true, Some(choice)) = (at_fault.iter().any(|p| p == player), choice) {
                    return Err(format!(
                        "charges {player} with a technical loss, but the transcript holds its choice {}",
                        choice
                    ));
                }
            }
            Ok(Checked::Technical)
        }
        ResultStatus::Unspecified => Err("has a result with no status".to_owned()),
    }
}

/// An even_odd win or draw: both choices in the transcript, the drawn number in the result, and the
/// outcome the rule gives them.
fn decided_by_the_rule(
    result: &MatchResult,
    status: ResultStatus,
    players: [&str; 2],
    choices: [Option<Parity>; 2],
) -> Result<Checked, String> {
    let [Some(choice_a), Some(choice_b)] = choices else {
        let missing = players[usize::from(choices[0].is_some())];
        return Err(format!(
            "is a {} but the transcript holds no valid choice of {missing}",
            status_name(status)
        ));
    };
    let metadata = result.game_metadata.as_ref();
    let field = |name: &str| {
        metadata
            .and_then(|m| m.fields.get(name))
            .and_then(|v| v.kind.as_ref())
    };
    let drawn = match field("drawn_number") {
        Some(Kind::NumberValue(n)) if n.fract() == 0.0 && *n >= 0.0 && even_odd::in_range(*n as u32) => {
            *n as u32
        }
        _ => {
            return Err(format!(
                "has no drawn number from {} to {} in its result",
                even_odd::LOWEST,
                even_odd::HIGHEST
            ));
        }
    };
    let follows = match even_odd::winner([choice_a, choice_b], drawn) {
        None => "a draw".to_owned(),
        Some(seat) => format!("a win of {}", players[seat]),
    };
    let recorded = recorded_as(result, status);
    if follows != recorded {
        return Err(format!(
            "is recorded as {recorded}, but {} chose {}, {} chose {} and the number drawn was {drawn}: {follows}",
            players[0], choice_a, players[1], choice_b
        ));
    }
    // The game's own account of the choices must be the ones the players sent.
    for (player, choice) in players.iter().zip([choice_a, choice_b]) {
        let recorded = match field("choices") {
            Some(Kind::StructValue(recorded)) => recorded.fields.get(*player).and_then(|v| match &v.kind {
                Some(Kind::StringValue(text)) => Some(text.as_str()),
                _ => None,
            }),
            _ => None,
        };
        if recorded != Some(choice.as_str()) {
            return Err(format!(
                "records {player}'s choice as {}, but {player} sent {}",
                recorded.unwrap_or("nothing"),
                choice
            ));
        }
    }
    Ok(Checked::ByTheRule)
}

/// A tic_tac_toe win or draw: the moves the players sent, in order, each taken when its player was
/// to move and the referee's engine accepts it (a refused move is recorded too), end the game as
/// recorded.
fn replayed(
    result: &MatchResult,
    status: ResultStatus,
    players: [&str; 2],
    entries: &[TranscriptEntry],
) -> Result<Checked, String> {
    let mut game = TicTacToe::new(players.map(str::to_owned));
    for message in sent(entries, MessageType::GameMoveResponse) {
        let Some(seat) = Seat::BOTH
            .into_iter()
            .find(|seat| players[seat.index()] == message.player_id)
        else {
            continue;
        };
        let Some(payload) = &message.payload else { continue };
        if game.is_terminal() || !game.awaiting().contains(&seat) {
            continue;
        }
        if let Ok(position) = game.validate(seat, payload) {
            game.apply(seat, position);
        }
    }
    let Some(outcome) = game.outcome(&mut NoChance) else {
        return Err(format!(
            "is a {}, but the moves in its transcript do not end the game",
            status_name(status)
        ));
    };
    let follows = match outcome.result {
        GameResult::Draw => "a draw".to_owned(),
        GameResult::Win { winner } => format!("a win of {}", players[winner.index()]),
    };
    let recorded = recorded_as(result, status);
    if follows != recorded {
        return Err(format!(
            "is recorded as {recorded}, but the moves in its transcript give {follows}"
        ));
    }
    Ok(Checked::Replayed)
}

/// tic_tac_toe draws nothing.
struct NoChance;

impl Chance for NoChance {
    fn number_between(&mut self, low: u32, _high: u32) -> u32 {
        low
    }

    fn source(&self) -> &'static str {
        "none"
    }
}

/// The messages of `message_type` the players sent that arrived (no failure recorded), in order.
fn sent(entries: &[TranscriptEntry], message_type: MessageType) -> impl Iterator<Item = &MessageRecord> {
    entries.iter().filter_map(move |entry| match &entry.entry {
        Some(transcript_entry::Entry::Message(message))
            if message.direction == Direction::FromPlayer as i32
                && message.message_type == message_type.as_str()
                && message.error_code.is_empty() =>
        {
            Some(message)
        }
        _ => None,
    })
}

/// `a draw` or `a win of P01`, as recorded.
fn recorded_as(result: &MatchResult, status: ResultStatus) -> String {
    match status {
        ResultStatus::Draw => "a draw".to_owned(),
        _ => format!("a win of {}", result.winner_player_id),
    }
}

/// The scores are what the status is worth to each player (3 a win, 1 a draw, 0 a loss).
fn scores_follow(result: &MatchResult, status: ResultStatus, players: [&str; 2]) -> Result<(), String> {
    let worth = |player: &str| match status {
        ResultStatus::Draw => points::DRAW,
        ResultStatus::Win | ResultStatus::TechnicalLoss if result.winner_player_id == player => points::WIN,
        _ => points::LOSS,
    };
    for player in players {
        let scored: Vec<u32> = result
            .scores
            .iter()
            .filter(|score| score.player_id == player)
            .map(|score| score.points)
            .collect();
        if scored != [worth(player)] {
            return Err(format!(
                "is a {} scoring {player} {scored:?}, not {}",
                status_name(status),
                worth(player)
            ));
        }
    }
    Ok(())
}

/// The last valid choice `player` sent (a refused move is recorded too, and a retry may follow it).
fn last_choice(entries: &[TranscriptEntry], player: &str) -> Option<Parity> {
    let answers: Vec<&MessageRecord> = sent(entries, MessageType::ChooseParityResponse)
        .filter(|message| message.player_id == player)
        .collect();
    answers.into_iter().rev().find_map(|message| {
        let choice = message.payload.as_ref()?.fields.get("parity_choice")?;
        match &choice.kind {
            Some(Kind::StringValue(text)) => Parity::parse(text),
            _ => None,
        }
    })
}

fn status_name(status: ResultStatus) -> &'static str {
    match status {
        ResultStatus::Win => "win",
        ResultStatus::Draw => "draw",
        ResultStatus::TechnicalLoss => "technical loss",
        ResultStatus::DoubleForfeit => "double forfeit",
        ResultStatus::Unspecified => "result without a status",
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::{MessageRecord, PlayerScore};
    use prost_types::{Struct, Value};

    use super::*;

    fn text(value: &str) -> Value {
        Value {
            kind: Some(Kind::StringValue(value.into())),
        }
    }

    fn choice(player: &str, parity: &str, error_code: &str) -> TranscriptEntry {
        TranscriptEntry {
            at: None,
            entry: Some(transcript_entry::Entry::Message(MessageRecord {
                direction: Direction::FromPlayer as i32,
                player_id: player.into(),
                message_type: "CHOOSE_PARITY_RESPONSE".into(),
                attempt: 1,
                payload: Some(Struct {
                    fields: [("parity_choice".to_owned(), text(parity))].into(),
                }),
                error_code: error_code.into(),
            })),
        }
    }

    /// P01 against P02 with `status`, `winner`, the drawn number and the choices the result records.
    fn played(
        status: ResultStatus,
        winner: &str,
        at_fault: &[&str],
        drawn: f64,
        recorded: [&str; 2],
    ) -> ScheduledMatch {
        let worth = |player: &str| match status {
            ResultStatus::Draw => 1,
            _ if player == winner => 3,
            _ => 0,
        };
        let choices = Struct {
            fields: [
                ("P01".to_owned(), text(recorded[0])),
                ("P02".to_owned(), text(recorded[1])),
            ]
            .into(),
        };
        ScheduledMatch {
            match_id: "R1M1".into(),
            game_type: "even_odd".into(),
            player_a_id: "P01".into(),
            player_b_id: "P02".into(),
            referee_id: "REF01".into(),
            result: Some(MatchResult {
                status: status as i32,
                winner_player_id: winner.into(),
                at_fault_player_ids: at_fault.iter().map(|p| (*p).to_owned()).collect(),
                scores: ["P01", "P02"]
                    .map(|p| PlayerScore {
                        player_id: p.into(),
                        points: worth(p),
                    })
                    .to_vec(),
                game_metadata: Some(Struct {
                    fields: [
                        (
                            "drawn_number".to_owned(),
                            Value {
                                kind: Some(Kind::NumberValue(drawn)),
                            },
                        ),
                        (
                            "choices".to_owned(),
                            Value {
                                kind: Some(Kind::StructValue(choices)),
                            },
                        ),
                    ]
                    .into(),
                }),
                ..MatchResult::default()
            }),
            ..ScheduledMatch::default()
        }
    }

    #[test]
    fn a_result_follows_from_the_choices_and_the_number_or_is_named() {
        let win = played(ResultStatus::Win, "P01", &[], 4.0, ["even", "odd"]);
        let sent = [choice("P01", "even", ""), choice("P02", "odd", "")];
        assert_eq!(check(&win, &sent), Ok(Checked::ByTheRule));
        // One choice changed in the transcript: both chose even, a draw, not P01's win.
        let changed = [choice("P01", "even", ""), choice("P02", "even", "")];
        let refused = check(&win, &changed).expect_err("the outcome does not follow");
        assert!(
            refused.contains("is recorded as a win of P01, but P01 chose even, P02 chose even and the number drawn was 4: a draw"),
            "{refused}"
        );
        // The choice as the result records it must be the one sent.
        let draw = played(ResultStatus::Draw, "", &[], 7.0, ["odd", "even"]);
        let both_odd = [choice("P01", "odd", ""), choice("P02", "odd", "")];
        let refused = check(&draw, &both_odd).expect_err("recorded otherwise");
        assert!(
            refused.contains("records P02's choice as even, but P02 sent odd"),
            "{refused}"
        );
        // A timed-out answer is no choice; a later valid one is.
        let late = [choice("P01", "even", "E001"), choice("P02", "odd", "")];
        assert!(
            check(&win, &late)
                .expect_err("no choice")
                .contains("no valid choice of P01")
        );
        let retried = [
            choice("P01", "EVEN", ""),
            choice("P01", "even", ""),
            choice("P02", "odd", ""),
        ];
        assert_eq!(check(&win, &retried), Ok(Checked::ByTheRule));
    }

    #[test]
    fn technical_results_and_scores_are_checked_too() {
        let timed_out = played(ResultStatus::TechnicalLoss, "P02", &["P01"], 4.0, ["", ""]);
        let sent = [choice("P01", "even", "E001"), choice("P02", "odd", "")];
        assert_eq!(check(&timed_out, &sent), Ok(Checked::Technical));
        let answered = [choice("P01", "even", ""), choice("P02", "odd", "")];
        assert!(
            check(&timed_out, &answered)
                .expect_err("P01 answered")
                .contains("charges P01 with a technical loss, but the transcript holds its choice even")
        );
        let mut scored = played(ResultStatus::Win, "P01", &[], 4.0, ["even", "odd"]);
        scored.result.as_mut().unwrap().scores[0].points = 1;
        assert!(
            check(&scored, &answered)
                .expect_err("3 for a win")
                .contains("scoring P01 [1], not 3")
        );
        // No transcript: a referee's report is refused, the manager's forfeit taken.
        let win = played(ResultStatus::Win, "P01", &[], 4.0, ["even", "odd"]);
        assert!(
            check(&win, &[])
                .expect_err("nothing shows it")
                .contains("reported by REF01 with no transcript")
        );
        let mut withdrawn = timed_out.clone();
        withdrawn.referee_id.clear();
        assert_eq!(check(&withdrawn, &[]), Ok(Checked::ByTheManager));
    }

    fn moved(player: &str, position: f64) -> TranscriptEntry {
        TranscriptEntry {
            at: None,
            entry: Some(transcript_entry::Entry::Message(MessageRecord {
                direction: Direction::FromPlayer as i32,
                player_id: player.into(),
                message_type: "GAME_MOVE_RESPONSE".into(),
                attempt: 1,
                payload: Some(Struct {
                    fields: [(
                        "position".to_owned(),
                        Value {
                            kind: Some(Kind::NumberValue(position)),
                        },
                    )]
                    .into(),
                }),
                error_code: String::new(),
            })),
        }
    }

    #[test]
    fn tic_tac_toe_moves_are_replayed_on_the_referees_engine() {
        let mut won = played(ResultStatus::Win, "P01", &[], 0.0, ["", ""]);
        won.game_type = "tic_tac_toe".into();
        // X: 0, 1, 2 (the top row); O: 3, then a refused move on a taken cell, then 4.
        let moves = [
            moved("P01", 0.0),
            moved("P02", 3.0),
            moved("P01", 1.0),
            moved("P02", 0.0),
            moved("P02", 4.0),
            moved("P01", 2.0),
        ];
        assert_eq!(check(&won, &moves), Ok(Checked::Replayed));
        let mut lost = played(ResultStatus::Win, "P02", &[], 0.0, ["", ""]);
        lost.game_type = "tic_tac_toe".into();
        let refused = check(&lost, &moves).expect_err("X won");
        assert!(
            refused
                .contains("is recorded as a win of P02, but the moves in its transcript give a win of P01"),
            "{refused}"
        );
        let unfinished = check(&won, &moves[..5]).expect_err("not over");
        assert!(unfinished.contains("do not end the game"), "{unfinished}");
    }
}
