//! A reported transcript's bytes, any bytes, stored as JSON written straight from them
//! (`league_proto::json::transcript_to_json_text`, the manager's path): the text is the derived
//! serializer's for the message prost decodes them to, and bytes prost refuses are refused. Any panic
//! or difference is a bug.

#![no_main]

use league_proto::json::{record_to_json_text, transcript_to_json_text};
use league_proto::v2::MatchTranscript;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let mut messages = 0_usize;
    let written = transcript_to_json_text(data, |_| messages += 1);
    match MatchTranscript::decode(data) {
        Err(_) => assert!(written.is_err(), "prost refuses what was written: {written:?}"),
        Ok(decoded) => match record_to_json_text(&decoded) {
            Ok(json) => {
                let written = written.expect("what prost decodes and serde writes is written");
                assert_eq!(written.json, json);
                assert_eq!(written.first_at, decoded.entries.first().and_then(|entry| entry.at));
                assert_eq!(written.last_at, decoded.entries.last().and_then(|entry| entry.at));
                let recorded = decoded
                    .entries
                    .iter()
                    .filter(|entry| {
                        matches!(entry.entry, Some(league_proto::v2::transcript_entry::Entry::Message(_)))
                    })
                    .count();
                assert_eq!(messages, recorded);
            }
            Err(_) => assert!(written.is_err(), "serde refuses what was written: {written:?}"),
        },
    }
});
