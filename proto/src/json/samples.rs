//! Varied records for the tests, from a seed: every kind of entry, every kind of `Struct` value nested,
//! enums the contracts do not name, times across years 1–9999 with each fraction width, strings with
//! escapes, control characters and unicode, fields left unset.

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Timestamp, Value};

use crate::v2::transcript_entry::Entry;
use crate::v2::{
    MatchResult, MatchTranscript, MessageRecord, PlayerScore, ScheduledMatch, StateTransition,
    TranscriptEntry,
};

/// Pieces of text: quotes, backslashes, every kind of escape serde_json writes, what it leaves alone.
const TEXTS: &[&str] = &[
    "",
    "P01",
    "CHOOSE_PARITY_RESPONSE",
    "even \"quoted\"",
    "back\\slash/",
    "\n\r\t\u{8}\u{c}",
    "\u{0}\u{1f}\u{7f}",
    "caf\u{e9} \u{1f600} \u{2028}",
    "</script>",
];

/// A xorshift generator: the same records for the same seed.
#[derive(Debug)]
pub(crate) struct Samples(u64);

impl Samples {
    pub(crate) fn new(seed: u64) -> Self {
        Samples(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, in_four: u64) -> bool {
        self.below(4) < in_four
    }

    pub(crate) fn text(&mut self) -> String {
        let pieces = self.below(3);
        (0..pieces)
            .map(|_| TEXTS[self.below(TEXTS.len() as u64) as usize])
            .collect()
    }

    /// Mostly a number the contracts name (0..=`last`), sometimes one they do not.
    fn enumeration(&mut self, last: i32) -> i32 {
        match self.below(8) {
            0 => [last + 1, 42, -1, i32::MIN, i32::MAX][self.below(5) as usize],
            _ => self.below(last as u64 + 1) as i32,
        }
    }

    fn time(&mut self) -> Option<Timestamp> {
        if !self.chance(3) {
            return None;
        }
        let (first, last) = (-62_135_596_800_i64, 253_402_300_799_i64);
        let seconds = first + (self.below((last - first) as u64 + 1) as i64);
        let nanos = self.below(1_000_000_000) as i32;
        let nanos = match self.below(4) {
            0 => 0,
            1 => nanos / 1_000_000 * 1_000_000,
            2 => nanos / 1_000 * 1_000,
            _ => nanos,
        };
        Some(Timestamp { seconds, nanos })
    }

    fn number(&mut self) -> f64 {
        let numbers = [
            0.0,
            -0.0,
            8.0,
            -0.25,
            1e21,
            1e-7,
            f64::MIN_POSITIVE,
            f64::MAX,
            0.1 + 0.2,
        ];
        match self.below(3) {
            0 => (self.next() >> 11) as f64 / (1_u64 << 20) as f64 - 4096.0,
            _ => numbers[self.below(numbers.len() as u64) as usize],
        }
    }

    /// A `Struct` holding values nested up to `depth` more levels.
    pub(crate) fn object(&mut self, depth: u32) -> Struct {
        let fields = (0..self.below(5))
            .map(|_| (self.text(), self.value(depth)))
            .collect();
        Struct { fields }
    }

    fn value(&mut self, depth: u32) -> Value {
        let kind = match self.below(if depth == 0 { 6 } else { 8 }) {
            0 => None,
            1 => Some(Kind::NullValue(self.below(2) as i32 * 3)),
            2 => Some(Kind::NumberValue(self.number())),
            3 => Some(Kind::StringValue(self.text())),
            4 => Some(Kind::BoolValue(self.chance(2))),
            5 => Some(Kind::NumberValue(self.below(100) as f64)),
            6 => Some(Kind::ListValue(ListValue {
                values: (0..self.below(4)).map(|_| self.value(depth - 1)).collect(),
            })),
            _ => Some(Kind::StructValue(self.object(depth - 1))),
        };
        Value { kind }
    }

    pub(crate) fn entry(&mut self) -> TranscriptEntry {
        let entry = match self.below(5) {
            0 => None,
            1 | 2 => Some(Entry::StateTransition(StateTransition {
                from: self.enumeration(6),
                to: self.enumeration(6),
                reason: self.text(),
            })),
            _ => Some(Entry::Message(MessageRecord {
                direction: self.enumeration(2),
                player_id: self.text(),
                message_type: self.text(),
                attempt: [0, 1, 3, u32::MAX][self.below(4) as usize],
                payload: self.chance(3).then(|| self.object(3)),
                error_code: self.text(),
            })),
        };
        TranscriptEntry {
            at: self.time(),
            entry,
        }
    }

    pub(crate) fn transcript(&mut self) -> MatchTranscript {
        MatchTranscript {
            match_id: self.text(),
            entries: (0..self.below(20)).map(|_| self.entry()).collect(),
        }
    }

    pub(crate) fn scheduled(&mut self) -> ScheduledMatch {
        let result = self.chance(3).then(|| MatchResult {
            match_id: self.text(),
            status: self.enumeration(4),
            winner_player_id: self.text(),
            scores: (0..self.below(3))
                .map(|_| PlayerScore {
                    player_id: self.text(),
                    points: [0, 1, 3, u32::MAX][self.below(4) as usize],
                })
                .collect(),
            reason: self.text(),
            at_fault_player_ids: (0..self.below(3)).map(|_| self.text()).collect(),
            game_metadata: self.chance(3).then(|| self.object(3)),
        });
        ScheduledMatch {
            league_id: self.text(),
            round_id: [0, 1, 199, u32::MAX][self.below(4) as usize],
            match_id: self.text(),
            game_type: self.text(),
            player_a_id: self.text(),
            player_b_id: self.text(),
            status: self.enumeration(5),
            referee_id: self.text(),
            result,
            started_at: self.time(),
            finished_at: self.time(),
            technical_loss_cause: self.text(),
        }
    }
}
