//! Compiles proto/league/v2/*.proto with protox (pure Rust: no system protoc) and generates the prost
//! messages and, with the `grpc` feature, the tonic clients/servers. The descriptor set is written next to them for gRPC reflection.

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "league/v2/agents.proto",
    "league/v2/common.proto",
    "league/v2/manager.proto",
    "league/v2/player.proto",
    "league/v2/referee.proto",
];

/// The records the manager stores as proto3 JSON beside their bytes on every report (src/json/mod.rs),
/// and the match a results folder's transcript file opens with: written and read back by code derived from
/// the contracts, not through reflection. The fields whose proto3 JSON is not serde's own are named
/// below. TranscriptEntry, whose oneof proto3 JSON writes as a field of the entry itself, has its
/// serializer and deserializer written out in src/json/records.rs and src/json/read.rs.
const RECORDS: &[&str] = &[
    ".league.v2.MatchResult",
    ".league.v2.PlayerScore",
    ".league.v2.MatchTranscript",
    ".league.v2.StateTransition",
    ".league.v2.MessageRecord",
    ".league.v2.ScheduledMatch",
];

/// What every record derives: a field left out reads as its default and a field the contracts do not
/// name is refused, as proto3 JSON reads them.
const RECORD_ATTRIBUTES: &str =
    "#[derive(serde::Serialize, serde::Deserialize)]\n#[serde(default, deny_unknown_fields)]";

/// A field written by `crate::json::records::$write` and read by `crate::json::read::$read`.
macro_rules! field {
    ($write:literal, $read:literal) => {
        concat!(
            r#"#[serde(serialize_with = "crate::json::records::"#,
            $write,
            r#"", deserialize_with = "crate::json::read::"#,
            $read,
            r#"")]"#
        )
    };
}

/// A message field, written only when set, as `crate::json::records::$write` writes it.
macro_rules! optional {
    ($write:literal, $read:literal) => {
        concat!(
            field!($write, $read),
            r#"#[serde(skip_serializing_if = "Option::is_none")]"#
        )
    };
}

const RECORD_FIELDS: &[(&str, &str)] = &[
    (
        ".league.v2.MatchResult.status",
        field!("result_status", "result_status"),
    ),
    (
        ".league.v2.StateTransition.from",
        field!("match_state", "match_state"),
    ),
    (
        ".league.v2.StateTransition.to",
        field!("match_state", "match_state"),
    ),
    (
        ".league.v2.MessageRecord.direction",
        field!("direction", "direction"),
    ),
    (
        ".league.v2.ScheduledMatch.status",
        field!("match_status", "match_status"),
    ),
    (
        ".league.v2.MatchResult.game_metadata",
        optional!("object", "game_metadata"),
    ),
    (".league.v2.MessageRecord.payload", optional!("object", "payload")),
    (".league.v2.ScheduledMatch.started_at", optional!("time", "time")),
    (".league.v2.ScheduledMatch.finished_at", optional!("time", "time")),
    (
        ".league.v2.ScheduledMatch.result",
        r#"#[serde(deserialize_with = "crate::json::read::result", skip_serializing_if = "Option::is_none")]"#,
    ),
    (
        ".league.v2.MatchResult.scores",
        r#"#[serde(deserialize_with = "crate::json::read::scores")]"#,
    ),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    let descriptors = protox::compile(PROTOS, ["."])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out_dir.join("league_descriptor.bin"),
        prost::Message::encode_to_vec(&descriptors),
    )?;
    // The clients and servers only with the `grpc` feature: without it the generated code names no tonic.
    let grpc = std::env::var_os("CARGO_FEATURE_GRPC").is_some();
    let mut config = tonic_prost_build::configure()
        .build_client(grpc)
        .build_server(grpc)
        .emit_rerun_if_changed(false);
    for record in RECORDS {
        config = config.type_attribute(record, RECORD_ATTRIBUTES);
    }
    for (field, attribute) in RECORD_FIELDS {
        config = config.field_attribute(field, attribute);
    }
    config.compile_fds(descriptors)?;
    Ok(())
}
