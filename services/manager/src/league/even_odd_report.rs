//! An Even/Odd result checked before it is recorded: the choices it reports must be the answers its
//! transcript holds (what the players said, as our referees record it), and its outcome must follow from
//! the choices and the drawn number by the game's rule (`league_domain::even_odd`, the rule's one home).
//! A result without Even/Odd's account (`drawn_number`, `choices`) is some other game's: not checked here.

use std::collections::HashMap;

use league_domain::MessageType;
use league_domain::even_odd::{self, Parity};
use league_proto::json::RecordedMessage;
use league_proto::v2::{Direction, MatchResult, ResultStatus};
use prost_types::value::Kind;
use prost_types::{Struct, Value};

/// Each player's last valid choice in a transcript (the answer the game took), by player: shown each
/// message the transcript recorded, in order ([`league_proto::json::transcript_to_json_text`]).
#[derive(Debug, Default)]
pub struct Answers(pub HashMap<String, Parity>);

impl Answers {
    pub fn note(&mut self, record: &RecordedMessage<'_>) {
        if record.direction() != Direction::FromPlayer
            || record.message_type != MessageType::ChooseParityResponse.as_str()
            || !record.error_code.is_empty()
        {
            return;
        }
        if let Some(choice) = record.payload_text("parity_choice").and_then(Parity::parse) {
            self.0.insert(record.player_id.to_owned(), choice);
        }
    }
}

/// Why `result` (of a match between `a` and `b`, whose transcript holds `said`) is no Even/Odd result;
/// `None` when it is one, or is no Even/Odd result at all.
pub fn refusal(result: &MatchResult, said: &HashMap<String, Parity>, a: &str, b: &str) -> Option<String> {
    let metadata = result.game_metadata.as_ref()?;
    let drawn = metadata.fields.get("drawn_number")?;
    let status = ResultStatus::try_from(result.status).unwrap_or(ResultStatus::Unspecified);
    let choices = metadata.fields.get("choices").and_then(|v| match &v.kind {
        Some(Kind::StructValue(choices)) => Some(choices),
        _ => None,
    })?;
    let mut both = [Parity::Even; 2];
    for (seat, player) in [a, b].into_iter().enumerate() {
        let Some(reported) = text(choices, player) else {
            // A forfeit has no choice of the player at fault.
            return matches!(status, ResultStatus::Win | ResultStatus::Draw)
                .then(|| format!("game_metadata.choices has no choice of {player}"));
        };
        let Some(reported) = Parity::parse(reported) else {
            return Some(format!(
                "game_metadata.choices.{player} must be \"even\" or \"odd\", got {reported:?}"
            ));
        };
        if let Some(answered) = said.get(player)
            && *answered != reported
        {
            return Some(format!(
                "game_metadata.choices.{player} is \"{reported}\", but the transcript has {player} answering \"{answered}\""
            ));
        }
        both[seat] = reported;
    }
    if !matches!(status, ResultStatus::Win | ResultStatus::Draw) {
        return None;
    }
    let drawn = match drawn.kind {
        Some(Kind::NumberValue(n)) if n.fract() == 0.0 && n >= 0.0 && even_odd::in_range(n as u32) => {
            n as u32
        }
        _ => {
            return Some(format!(
                "game_metadata.drawn_number must be a whole number from {} to {}",
                even_odd::LOWEST,
                even_odd::HIGHEST
            ));
        }
    };
    let by_rule = even_odd::winner(both, drawn).map(|seat| [a, b][seat]);
    let reported = (status == ResultStatus::Win).then_some(result.winner_player_id.as_str());
    (by_rule != reported).then(|| {
        format!(
            "{a} chose {}, {b} chose {}, the number was {drawn}: by the rule the winner is {}, not {}",
            both[0],
            both[1],
            by_rule.unwrap_or("nobody (a draw)"),
            reported.unwrap_or("nobody (a draw)")
        )
    })
}

fn text<'a>(object: &'a Struct, field: &str) -> Option<&'a str> {
    match object.fields.get(field).map(|value: &Value| &value.kind) {
        Some(Some(Kind::StringValue(text))) => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use league_proto::v2::transcript_entry::Entry;
    use league_proto::v2::{MatchTranscript, MessageRecord, TranscriptEntry};
    use prost::Message;

    fn string(text: &str) -> Value {
        Value {
            kind: Some(Kind::StringValue(text.into())),
        }
    }

    fn object(fields: &[(&str, Value)]) -> Struct {
        Struct {
            fields: fields.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect(),
        }
    }

    fn result(status: ResultStatus, winner: &str, drawn: f64, a: &str, b: &str) -> MatchResult {
        let choices = object(&[("P01", string(a)), ("P02", string(b))]);
        MatchResult {
            status: status as i32,
            winner_player_id: winner.into(),
            game_metadata: Some(object(&[
                (
                    "drawn_number",
                    Value {
                        kind: Some(Kind::NumberValue(drawn)),
                    },
                ),
                (
                    "choices",
                    Value {
                        kind: Some(Kind::StructValue(choices)),
                    },
                ),
            ])),
            ..MatchResult::default()
        }
    }

    fn said(a: Parity, b: Parity) -> HashMap<String, Parity> {
        HashMap::from([("P01".to_owned(), a), ("P02".to_owned(), b)])
    }

    #[test]
    fn results_by_the_rule_pass() {
        let said = said(Parity::Even, Parity::Odd);
        assert_eq!(
            refusal(
                &result(ResultStatus::Win, "P01", 4.0, "even", "odd"),
                &said,
                "P01",
                "P02"
            ),
            None
        );
        assert_eq!(
            refusal(
                &result(ResultStatus::Win, "P02", 9.0, "even", "odd"),
                &said,
                "P01",
                "P02"
            ),
            None
        );
        let same = HashMap::new();
        assert_eq!(
            refusal(
                &result(ResultStatus::Draw, "", 9.0, "odd", "odd"),
                &same,
                "P01",
                "P02"
            ),
            None
        );
        assert_eq!(
            refusal(&MatchResult::default(), &same, "P01", "P02"),
            None,
            "no Even/Odd account"
        );
    }

    #[test]
    fn results_against_the_rule_or_the_transcript_are_refused() {
        let said = said(Parity::Even, Parity::Odd);
        for (bad, field) in [
            (
                result(ResultStatus::Win, "P02", 4.0, "even", "odd"),
                "the winner is P01",
            ),
            (
                result(ResultStatus::Draw, "", 4.0, "even", "odd"),
                "the winner is P01",
            ),
            (result(ResultStatus::Win, "P01", 4.0, "odd", "odd"), "choices.P01"),
            (
                result(ResultStatus::Win, "P01", 12.0, "even", "odd"),
                "drawn_number",
            ),
        ] {
            let why = refusal(&bad, &said, "P01", "P02").expect("refused");
            assert!(why.contains(field), "{field}: {why}");
        }
    }

    #[test]
    fn the_transcript_gives_each_players_last_valid_answer() {
        let record = |player: &str, choice: &str, code: &str| TranscriptEntry {
            at: None,
            entry: Some(Entry::Message(MessageRecord {
                direction: Direction::FromPlayer as i32,
                player_id: player.into(),
                message_type: "CHOOSE_PARITY_RESPONSE".into(),
                attempt: 1,
                payload: Some(object(&[("parity_choice", string(choice))])),
                error_code: code.into(),
            })),
        };
        let transcript = MatchTranscript {
            entries: vec![
                record("P01", "maybe", ""),
                record("P01", "odd", ""),
                record("P02", "even", "E001"),
            ],
            ..MatchTranscript::default()
        };
        let mut answers = Answers::default();
        league_proto::json::transcript_to_json_text(&transcript.encode_to_vec(), |record| {
            answers.note(record)
        })
        .expect("a transcript");
        assert_eq!(answers.0, HashMap::from([("P01".to_owned(), Parity::Odd)]));
    }
}
