//! The text written from a transcript's bytes is the derived serializer's text of the message they
//! decode to ([`crate::json::record_to_json_text`]), for transcripts as prost writes them and for every
//! other spelling protobuf allows; what prost refuses, or proto3 JSON cannot write, is an error.

use prost::Message;
use prost::encoding::{self, WireType};
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Timestamp, Value};

use super::*;
use crate::json::record_to_json_text;
use crate::v2::transcript_entry::Entry;
use crate::v2::{MessageRecord, StateTransition, TranscriptEntry};

/// The text from `bytes` and from the message they decode to are the same, and so are the times.
fn same_as_decoded(bytes: &[u8]) -> TranscriptText {
    let decoded = MatchTranscript::decode(bytes).expect("a transcript");
    let text = transcript_to_json_text(bytes, |_| {}).expect("written");
    assert_eq!(
        text.json,
        record_to_json_text(&decoded).expect("derived"),
        "{decoded:?}"
    );
    let at = |entry: Option<&TranscriptEntry>| entry.and_then(|entry| entry.at);
    assert_eq!(text.first_at, at(decoded.entries.first()));
    assert_eq!(text.last_at, at(decoded.entries.last()));
    text
}

/// Whether `bytes` are read in one pass (as prost writes them) rather than decoded first.
fn read_in_one_pass(bytes: &[u8]) -> bool {
    match Writer::transcript(bytes, &mut Vec::new()) {
        Ok(_) => true,
        Err(Stop::NotCanonical) => false,
        Err(Stop::Invalid(error)) => panic!("invalid: {error}"),
    }
}

fn value(kind: Kind) -> Value {
    Value { kind: Some(kind) }
}

fn object(fields: &[(&str, Value)]) -> Struct {
    Struct {
        fields: fields
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect(),
    }
}

fn at(seconds: i64, nanos: i32) -> Option<Timestamp> {
    Some(Timestamp { seconds, nanos })
}

fn message(direction: i32, player_id: &str, message_type: &str, payload: Option<Struct>) -> TranscriptEntry {
    TranscriptEntry {
        at: at(1_800_000_000, 250_000_000),
        entry: Some(Entry::Message(MessageRecord {
            direction,
            player_id: player_id.into(),
            message_type: message_type.into(),
            attempt: 1,
            payload,
            error_code: String::new(),
        })),
    }
}

/// Every kind of entry and value, the edges of times, enums the contracts do not name.
fn every_kind() -> MatchTranscript {
    let list = ListValue {
        values: vec![
            value(Kind::NumberValue(8.0)),
            value(Kind::NumberValue(-0.25)),
            value(Kind::NumberValue(1e21)),
            value(Kind::NumberValue(f64::MIN_POSITIVE)),
            value(Kind::StringValue(
                "even \"quoted\" \\ \u{e9} \u{1f600} \u{7f}".into(),
            )),
            value(Kind::BoolValue(true)),
            value(Kind::BoolValue(false)),
            value(Kind::NullValue(0)),
            value(Kind::NullValue(7)),
            Value { kind: None },
            value(Kind::ListValue(ListValue::default())),
            value(Kind::StructValue(Struct::default())),
        ],
    };
    let payload = object(&[
        ("", value(Kind::StringValue(String::new()))),
        ("list", value(Kind::ListValue(list))),
        (
            "nested",
            value(Kind::StructValue(object(&[("n", value(Kind::NumberValue(0.0)))]))),
        ),
        ("parity_choice", value(Kind::StringValue("even".into()))),
        ("z\u{e9}", Value { kind: None }),
    ]);
    MatchTranscript {
        match_id: "R1M1 \"x\"".into(),
        entries: vec![
            TranscriptEntry {
                at: at(1_800_000_000, 0),
                entry: Some(Entry::StateTransition(StateTransition {
                    from: MatchState::WaitingForPlayers as i32,
                    to: MatchState::CollectingChoices as i32,
                    reason: "both players joined\n".into(),
                })),
            },
            message(
                Direction::FromPlayer as i32,
                "P01",
                "CHOOSE_PARITY_RESPONSE",
                Some(payload),
            ),
            message(9, "P02", "", Some(Struct::default())),
            message(-3, "", "GAME_OVER", None),
            TranscriptEntry {
                at: at(-62_135_596_800, 123_456),
                entry: Some(Entry::StateTransition(StateTransition {
                    from: -1,
                    ..StateTransition::default()
                })),
            },
            TranscriptEntry {
                at: at(253_402_300_798, 1_999_999_999),
                entry: None,
            },
            TranscriptEntry::default(),
            TranscriptEntry {
                at: None,
                entry: Some(Entry::Message(MessageRecord {
                    attempt: u32::MAX,
                    error_code: "E001".into(),
                    ..MessageRecord::default()
                })),
            },
        ],
    }
}

#[test]
fn a_transcript_as_prost_writes_it_is_read_in_one_pass_into_the_derived_text() {
    let transcript = every_kind();
    let bytes = transcript.encode_to_vec();
    assert!(read_in_one_pass(&bytes));
    same_as_decoded(&bytes);
    for empty in [
        MatchTranscript::default(),
        MatchTranscript {
            match_id: "R9M9".into(),
            entries: vec![],
        },
    ] {
        let bytes = empty.encode_to_vec();
        assert!(read_in_one_pass(&bytes));
        let text = same_as_decoded(&bytes);
        assert_eq!(text.first_at, None);
    }
}

#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    let every_ascii: String = (0_u8..=0x7f).map(char::from).collect();
    for text in [every_ascii.as_str(), "\u{e9}\u{2028}\u{1f600}", "", "\\\"\\"] {
        let transcript = MatchTranscript {
            match_id: text.into(),
            entries: vec![],
        };
        same_as_decoded(&transcript.encode_to_vec());
    }
}

/// A generator of transcripts (xorshift: the same ones every run).
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn text(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a",
            "P01",
            "\"",
            "\\",
            "\n",
            "\u{1}",
            "\u{e9}",
            "\u{1f600}",
            "even",
            " ",
        ];
        (0..self.below(5))
            .map(|_| PIECES[self.below(10) as usize])
            .collect()
    }

    fn value(&mut self, depth: u32) -> Value {
        let kind = match self.below(if depth > 3 { 5 } else { 7 }) {
            0 => return Value { kind: None },
            1 => Kind::NullValue(self.below(3) as i32),
            2 => Kind::NumberValue(
                (self.below(2_000) as f64 - 1_000.0) / [1.0, 3.0, 1e-9][self.below(3) as usize],
            ),
            3 => Kind::StringValue(self.text()),
            4 => Kind::BoolValue(self.below(2) == 1),
            5 => Kind::StructValue(self.object(depth + 1)),
            _ => Kind::ListValue(ListValue {
                values: (0..self.below(4)).map(|_| self.value(depth + 1)).collect(),
            }),
        };
        value(kind)
    }

    fn object(&mut self, depth: u32) -> Struct {
        Struct {
            fields: (0..self.below(5))
                .map(|_| (self.text(), self.value(depth)))
                .collect(),
        }
    }

    fn entry(&mut self) -> TranscriptEntry {
        let at = (self.below(4) > 0).then(|| Timestamp {
            seconds: self.below(4_000_000_000) as i64,
            nanos: self.below(1_000_000_000) as i32,
        });
        let entry = match self.below(3) {
            0 => None,
            1 => Some(Entry::StateTransition(StateTransition {
                from: self.below(8) as i32,
                to: self.below(8) as i32,
                reason: self.text(),
            })),
            _ => Some(Entry::Message(MessageRecord {
                direction: self.below(4) as i32,
                player_id: self.text(),
                message_type: self.text(),
                attempt: self.below(4) as u32,
                payload: (self.below(3) > 0).then(|| self.object(0)),
                error_code: self.text(),
            })),
        };
        TranscriptEntry { at, entry }
    }
}

#[test]
fn two_thousand_generated_transcripts_are_read_in_one_pass_into_the_derived_text() {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2_000 {
        let transcript = MatchTranscript {
            match_id: random.text(),
            entries: (0..random.below(16)).map(|_| random.entry()).collect(),
        };
        let bytes = transcript.encode_to_vec();
        assert!(read_in_one_pass(&bytes), "{transcript:?}");
        same_as_decoded(&bytes);
    }
}

/// `fields` (each a field's bytes, key and value) one after the other, as a message's bytes.
fn joined(fields: &[Vec<u8>]) -> Vec<u8> {
    fields.concat()
}

fn string_field(tag: u32, text: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    encoding::string::encode(tag, &text.to_owned(), &mut bytes);
    bytes
}

fn bytes_field(tag: u32, inner: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    encoding::encode_key(tag, WireType::LengthDelimited, &mut bytes);
    encoding::encode_varint(inner.len() as u64, &mut bytes);
    bytes.extend_from_slice(inner);
    bytes
}

fn varint_field(tag: u32, number: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    encoding::encode_key(tag, WireType::Varint, &mut bytes);
    encoding::encode_varint(number, &mut bytes);
    bytes
}

fn map_entry(key: &str, value: &Value) -> Vec<u8> {
    bytes_field(
        1,
        &joined(&[string_field(1, key), bytes_field(2, &value.encode_to_vec())]),
    )
}

/// A transcript of one message entry whose record's bytes are `record`.
fn with_record(record: &[u8]) -> Vec<u8> {
    bytes_field(2, &bytes_field(3, record))
}

#[test]
fn every_other_spelling_protobuf_allows_is_the_text_of_what_it_decodes_to() {
    let even = value(Kind::StringValue("even".into()));
    let odd = value(Kind::StringValue("odd".into()));
    let spellings = [
        // Fields out of order; a singular field twice (the last is kept).
        with_record(&joined(&[
            string_field(3, "B"),
            string_field(2, "P01"),
            varint_field(1, 2),
        ])),
        with_record(&joined(&[string_field(2, "P01"), string_field(2, "P02")])),
        // Fields the contracts do not name, of every wire type.
        with_record(&joined(&[
            varint_field(1, 2),
            varint_field(99, 5),
            string_field(100, "x"),
        ])),
        joined(&[string_field(1, "R1M1"), bytes_field(2, &[]), varint_field(7, 1)]),
        joined(&[bytes_field(2, &[]), string_field(1, "late match id")]),
        joined(&[bytes_field(
            2,
            &joined(&[varint_field(9, 1), {
                let mut fixed32 = Vec::new();
                encoding::fixed32::encode(10, &7, &mut fixed32);
                fixed32
            }]),
        )]),
        // A Struct's keys out of order, and twice (the last is kept).
        with_record(&bytes_field(
            5,
            &joined(&[map_entry("b", &even), map_entry("a", &odd)]),
        )),
        with_record(&bytes_field(
            5,
            &joined(&[map_entry("k", &even), map_entry("k", &odd)]),
        )),
        // A map entry's value before its key.
        with_record(&bytes_field(
            5,
            &bytes_field(
                1,
                &joined(&[bytes_field(2, &even.encode_to_vec()), string_field(1, "k")]),
            ),
        )),
        // Both members of a oneof (the last is kept): an entry's, a Value's.
        bytes_field(2, &joined(&[bytes_field(2, &[]), bytes_field(3, &[])])),
        with_record(&bytes_field(
            5,
            &bytes_field(
                1,
                &joined(&[
                    string_field(1, "k"),
                    bytes_field(2, &{ joined(&[string_field(3, "text"), varint_field(4, 1)]) }),
                ]),
            ),
        )),
        // A time's fields out of order, and a payload given twice (the two are merged).
        bytes_field(
            2,
            &bytes_field(1, &joined(&[varint_field(2, 5), varint_field(1, 1_800_000_000)])),
        ),
        with_record(&joined(&[
            bytes_field(5, &map_entry("a", &even)),
            bytes_field(5, &map_entry("b", &odd)),
        ])),
    ];
    for bytes in spellings {
        assert!(!read_in_one_pass(&bytes), "{bytes:?}");
        same_as_decoded(&bytes);
    }
}

#[test]
fn a_field_out_of_range_that_a_later_one_replaces_is_the_text_of_what_it_decodes_to() {
    // An entry's time given twice: prost merges the two, the later seconds over the year-10000 ones
    // (found by the fuzz target `transcript`).
    let year_10000 = varint_field(1, 253_402_300_800);
    let bytes = bytes_field(
        2,
        &joined(&[
            bytes_field(1, &joined(&[year_10000.clone(), varint_field(2, 5)])),
            bytes_field(1, &varint_field(1, 1_800_000_000)),
        ]),
    );
    assert_eq!(
        same_as_decoded(&bytes).first_at,
        at(1_800_000_000, 5),
        "merged as prost merges"
    );
    // Given once, or last, it is still refused.
    let refused = |bytes: &[u8]| transcript_to_json_text(bytes, |_| {}).expect_err("refused").0;
    let last = bytes_field(
        2,
        &joined(&[
            bytes_field(1, &varint_field(1, 1_800_000_000)),
            bytes_field(1, &year_10000),
        ]),
    );
    assert!(refused(&last).contains("timestamp out of range"));
}

/// A transcript whose one payload nests `levels` objects, or lists.
fn nested(levels: usize, lists: bool) -> Vec<u8> {
    let mut deep = value(Kind::StringValue("bottom".into()));
    for _ in 0..levels {
        deep = value(if lists {
            Kind::ListValue(ListValue { values: vec![deep] })
        } else {
            Kind::StructValue(object(&[("k", deep)]))
        });
    }
    let payload = object(&[("deep", deep)]);
    MatchTranscript {
        match_id: "R1M1".into(),
        entries: vec![message(1, "P01", "GAME_INVITATION", Some(payload))],
    }
    .encode_to_vec()
}

#[test]
fn payloads_are_read_in_one_pass_as_deep_as_prost_decodes_them_and_refused_deeper() {
    for lists in [false, true] {
        let mut refused_from = None;
        for levels in 20..60 {
            let bytes = nested(levels, lists);
            let decodes = MatchTranscript::decode(&bytes[..]).is_ok();
            assert_eq!(
                read_in_one_pass(&bytes),
                decodes,
                "{levels} levels, lists {lists}"
            );
            if decodes {
                same_as_decoded(&bytes);
            } else {
                let refused = transcript_to_json_text(&bytes, |_| {}).expect_err("refused");
                assert!(refused.0.contains("does not decode"), "{refused}");
                refused_from.get_or_insert(levels);
            }
        }
        // prost's limit is 100 messages: three a level of objects, two of lists.
        assert_eq!(refused_from, Some(if lists { 48 } else { 32 }));
    }
}

#[test]
fn what_prost_refuses_or_proto3_json_cannot_write_is_an_error() {
    let refused = |bytes: &[u8]| transcript_to_json_text(bytes, |_| {}).expect_err("refused").0;
    // Cut short; not UTF-8; a field of the wrong wire type.
    let whole = every_kind().encode_to_vec();
    assert!(refused(&whole[..whole.len() - 3]).contains("does not decode"));
    assert!(refused(&bytes_field(1, &[0xff, 0xfe])).contains("does not decode"));
    assert!(refused(&varint_field(1, 5)).contains("does not decode"));
    let year_10000 = MatchTranscript {
        entries: vec![TranscriptEntry {
            at: at(253_402_300_800, 0),
            entry: None,
        }],
        ..MatchTranscript::default()
    };
    assert!(record_to_json_text(&year_10000).is_err());
    assert!(refused(&year_10000.encode_to_vec()).contains("timestamp out of range"));
    let not_finite = MatchTranscript {
        entries: vec![message(
            1,
            "P01",
            "X",
            Some(object(&[("n", value(Kind::NumberValue(f64::INFINITY)))])),
        )],
        ..MatchTranscript::default()
    };
    assert!(record_to_json_text(&not_finite).is_err());
    assert!(refused(&not_finite.encode_to_vec()).contains("non-finite"));
}

#[test]
fn each_recorded_message_is_shown_in_order_with_its_payloads_texts() {
    let transcript = every_kind();
    let mut seen = Vec::new();
    transcript_to_json_text(&transcript.encode_to_vec(), |message| {
        seen.push((
            message.direction(),
            message.player_id.to_owned(),
            message.message_type.to_owned(),
            message.error_code.to_owned(),
            message.payload_text("parity_choice").map(str::to_owned),
            message.payload_text("nested").is_some() || message.payload_text("").is_some(),
        ));
    })
    .expect("written");
    let some = |text: &str| Some(text.to_owned());
    assert_eq!(
        seen,
        [
            (
                Direction::FromPlayer,
                some("P01").unwrap_or_default(),
                "CHOOSE_PARITY_RESPONSE".into(),
                String::new(),
                some("even"),
                true
            ),
            (
                Direction::Unspecified,
                "P02".into(),
                String::new(),
                String::new(),
                None,
                false
            ),
            (
                Direction::Unspecified,
                String::new(),
                "GAME_OVER".into(),
                String::new(),
                None,
                false
            ),
            (
                Direction::Unspecified,
                String::new(),
                String::new(),
                "E001".into(),
                None,
                false
            ),
        ]
    );
}
