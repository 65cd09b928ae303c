//! The typed reader against reflection's (`from_json` of the text parsed into a `serde_json::Value`,
//! how stored transcripts and results folders were read before): the same message from whatever either
//! writer writes and from the other spellings proto3 JSON allows, an error wherever reflection's read is
//! one, and stricter only where the module says so.

use prost::Message;

use crate::json::samples::Samples;
use crate::json::{
    Alphabetical, StoredRecord, from_json, record_from_json_text, record_to_json_text, to_json,
};
use crate::v2::{MatchTranscript, ScheduledMatch, TranscriptEntry};

/// How the text was read before: parsed into a `Value`, then through reflection.
fn by_reflection<R: StoredRecord + Message + Default>(text: &str) -> Result<R, String> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
    from_json(R::NAME, &json).map_err(|error| error.to_string())
}

fn typed<R: StoredRecord + serde::de::DeserializeOwned>(text: &str) -> Result<R, String> {
    record_from_json_text(text).map_err(|error| error.to_string())
}

/// Read the same by both, and read at all.
fn same<R>(text: &str)
where
    R: StoredRecord + Message + Default + PartialEq + std::fmt::Debug + serde::de::DeserializeOwned,
{
    let read = typed::<R>(text).unwrap_or_else(|error| panic!("{error}: {text}"));
    assert_eq!(Ok(&read), by_reflection::<R>(text).as_ref(), "{text}");
}

/// Refused by both, saying what it is not.
fn refused<R>(text: &str)
where
    R: StoredRecord + Message + Default + std::fmt::Debug + serde::de::DeserializeOwned,
{
    let error = typed::<R>(text).expect_err(text);
    assert!(error.starts_with(&format!("not a {}: ", R::NAME)), "{error}");
    assert!(by_reflection::<R>(text).is_err(), "reflection takes {text}");
}

/// Reflection's JSON as text: keys in alphabetical order, how transcripts were stored before.
fn reflection_text<R: StoredRecord + Message>(record: &R) -> String {
    to_json(R::NAME, record).expect("reflection").to_string()
}

#[test]
fn reads_what_the_writers_write_as_reflection_reads_it() {
    let mut samples = Samples::new(7);
    for _ in 0..300 {
        let transcript = samples.transcript();
        let derived = record_to_json_text(&transcript).expect("derived");
        same::<MatchTranscript>(&derived);
        same::<MatchTranscript>(&reflection_text(&transcript));
        for entry in &transcript.entries {
            let line = serde_json::to_string(&Alphabetical(entry)).expect("alphabetical");
            same::<TranscriptEntry>(&line);
            same::<TranscriptEntry>(&record_to_json_text(entry).expect("derived"));
        }
        let scheduled = samples.scheduled();
        let line = serde_json::to_string(&Alphabetical(&scheduled)).expect("alphabetical");
        same::<ScheduledMatch>(&line);
        same::<ScheduledMatch>(&record_to_json_text(&scheduled).expect("derived"));
    }
}

#[test]
fn reads_the_other_spellings_of_proto3_json_as_reflection_does() {
    let at = "2026-12-06T06:00:57.889Z";
    for text in [
        "{}".to_owned(),
        r#"{"entries":[]}"#.to_owned(),
        r#" { "entries" : [ { } , {"at":null}, {"message":null}, {"state_transition":null} ] } "#.to_owned(),
        r#"{"entries":[{"message":{}},{"state_transition":{}}],"match_id":"R1M1"}"#.to_owned(),
        // Keys in any order; enums by number, named or not; a oneof member given as null beside another.
        r#"{"entries":[{"state_transition":{"to":2,"reason":"r","from":-7},"message":null,"at":"AT"}]}"#
            .replace("AT", at),
        r#"{"entries":[{"message":{"payload":null,"attempt":3,"direction":"DIRECTION_TO_PLAYER"}}]}"#
            .to_owned(),
        // Times in the other forms RFC 3339 allows: offsets, one to nine digits, a leap second.
        r#"{"entries":[{"at":"2026-12-06T06:00:57+01:30"},{"at":"2026-12-06T06:00:57.5-00:45"}]}"#.to_owned(),
        r#"{"entries":[{"at":"1972-06-30T23:59:60Z"},{"at":"0001-01-01T00:00:00.000000001Z"}]}"#.to_owned(),
        r#"{"entries":[{"at":"9999-12-31T23:59:59.999999999Z"},{"at":"2000-02-29T12:00:00.1234Z"}]}"#.to_owned(),
        // As Postgres's jsonb printed a transcript stored before it was kept as text: spaces, keys by
        // length, a number's digits in full.
        r#"{"entries": [{"at": "2026-11-20T10:00:00.000250Z", "message": {"payload": {"n": 1000000000000000000000,
            "drawn_number": 7.0}, "player_id": "P01", "error_code": "", "message_type": "GAME_INVITATION"}}],
            "match_id": "R1M1"}"#
            .to_owned(),
        // Numbers as integers, escapes, a key twice in a `Struct` (the last kept), nulls inside it.
        r#"{"entries":[{"message":{"payload":{"n":7,"m":-3,"e":1e2,"s":"\u00e9\ud83d\ude00\"\\\/","n":8,
            "z":null,"l":[null,true,[],{}],"o":{"p":{"q":18446744073709551615}}}}}]}"#
            .to_owned(),
    ] {
        same::<MatchTranscript>(&text);
    }
}

#[test]
fn refuses_what_reflection_refuses() {
    let message = |fields: &str| format!(r#"{{"entries":[{{"message":{{{fields}}}}}]}}"#);
    let time = |at: &str| format!(r#"{{"entries":[{{"at":{at}}}]}}"#);
    for text in [
        String::new(),
        // Messages as arrays of their fields, as derived deserializers alone would take them.
        "[]".to_owned(),
        r#"["R1M1",[]]"#.to_owned(),
        r#"{"entries":[{"state_transition":[1,2,"both joined"]}]}"#.to_owned(),
        r#"{"entries":[{"message":[]}]}"#.to_owned(),
        "null".to_owned(),
        r#"{"entries":[]} x"#.to_owned(),
        r#"{"match_id":"R1M1","extra":1}"#.to_owned(),
        r#"{"entries":{}}"#.to_owned(),
        r#"{"entries":[{"note":1}]}"#.to_owned(),
        r#"{"entries":[[]]}"#.to_owned(),
        r#"{"match_id":5}"#.to_owned(),
        r#"{"entries":[{"message":{},"state_transition":{}}]}"#.to_owned(),
        r#"{"entries":[{"state_transition":{"from":"MATCH_STATE_SOMEWHERE"}}]}"#.to_owned(),
        message(r#""x":1"#),
        message(r#""direction":"DIRECTION_SIDEWAYS""#),
        message(r#""direction":"direction_to_player""#),
        message(r#""direction":2147483648"#),
        message(r#""direction":1.5"#),
        message(r#""direction":true"#),
        message(r#""attempt":-1"#),
        message(r#""attempt":4294967296"#),
        message(r#""attempt":1.5"#),
        message(r#""payload":[]"#),
        message(r#""payload":"x""#),
        message(r#""payload":{"n":1e400}"#),
        message(r#""player_id":["P01"]"#),
        time("1800000000"),
        time(r#""2026-12-06""#),
        time(r#""2026-12-06t06:00:57Z""#),
        time(r#""2026-12-06 06:00:57Z""#),
        time(r#""2026-12-06T06:00:57""#),
        time(r#""2026-12-06T06:00:57.Z""#),
        time(r#""2026-12-06T06:00:57z""#),
        time(r#""2026-12-06T06:00:57+0100""#),
        time(r#""2026-12-06T06:00Z""#),
        time(r#""2026-13-01T00:00:00Z""#),
        time(r#""2026-02-30T00:00:00Z""#),
        time(r#""2026-12-06T24:00:00Z""#),
        time(r#""0000-12-31T23:59:59Z""#),
        time(r#""10000-01-01T00:00:00Z""#),
        time(r#""9999-12-31T23:59:59-01:00""#),
        time(r#""2026-12-06T06:00:57Zjunk""#),
    ] {
        refused::<MatchTranscript>(&text);
    }
    for text in [
        "[]",
        r#"{"result":[]}"#,
        r#"{"result":{"scores":[["P01",3]]}}"#,
        r#"{"result":{"scores":[{"player_id":"P01","points":3,"rank":1}]}}"#,
        r#"{"result":{"status":"RESULT_STATUS_ABORTED"}}"#,
        r#"{"result":{"game_metadata":[]}}"#,
        r#"{"status":"MATCH_STATUS_LOST"}"#,
        r#"{"started_at":"2026-12-06"}"#,
        r#"{"round_id":-1}"#,
    ] {
        refused::<ScheduledMatch>(text);
    }
}

/// Where the typed reader is stricter than reflection: spellings no writer of these records uses.
#[test]
fn stricter_than_reflection_only_where_nothing_writes_so() {
    for text in [
        r#"{"match_id":"a","match_id":"b"}"#,
        r#"{"entries":[{"at":"2026-12-06T06:00:57Z","at":"2026-12-06T06:00:58Z"}]}"#,
        r#"{"entries":[{"message":{},"message":{}}]}"#,
        r#"{"entries":[{"message":{"attempt":1,"attempt":2}}]}"#,
        r#"{"match_id":null}"#,
        r#"{"entries":null}"#,
        r#"{"entries":[{"message":{"direction":null}}]}"#,
        r#"{"entries":[{"message":{"attempt":"3"}}]}"#,
        r#"{"matchId":"R1M1"}"#,
    ] {
        assert!(typed::<MatchTranscript>(text).is_err(), "{text}");
        assert!(by_reflection::<MatchTranscript>(text).is_ok(), "{text}");
    }
}

/// `depth` objects or lists, one in another, as a payload's value.
fn nested(depth: usize, list: bool) -> String {
    let (open, close) = if list { ("[", "]") } else { (r#"{"a":"#, "}") };
    format!("{}1{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn nests_as_deep_as_prost_decodes() {
    for list in [false, true] {
        let mut verdicts = vec![];
        for depth in 1..=60 {
            let payload = nested(depth, list);
            let transcript = format!(r#"{{"entries":[{{"message":{{"payload":{{"v":{payload}}}}}}}]}}"#);
            let read = typed::<MatchTranscript>(&transcript);
            assert_eq!(
                read.as_ref().ok(),
                by_reflection::<MatchTranscript>(&transcript).as_ref().ok(),
                "{depth}"
            );
            let result = format!(r#"{{"result":{{"game_metadata":{{"v":{payload}}}}}}}"#);
            assert_eq!(
                typed::<ScheduledMatch>(&result).ok(),
                by_reflection::<ScheduledMatch>(&result).ok(),
                "{depth}"
            );
            verdicts.push(read.is_ok());
        }
        // The limit is met in between.
        assert!(verdicts[0] && !verdicts[59], "{verdicts:?}");
    }
}
