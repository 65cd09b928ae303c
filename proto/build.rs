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

/// The records the manager stores as proto3 JSON beside their bytes on every report (src/json.rs):
/// serialized by code derived from the contracts, not through reflection. The fields whose proto3 JSON is
/// not serde's own are named below. TranscriptEntry, whose oneof proto3 JSON writes as a field of the
/// entry itself, has its serializer written out in src/json/records.rs.
const RECORDS: &[&str] = &[
    ".league.v2.MatchResult",
    ".league.v2.PlayerScore",
    ".league.v2.MatchTranscript",
    ".league.v2.StateTransition",
    ".league.v2.MessageRecord",
];

const RECORD_FIELDS: &[(&str, &str)] = &[
    (
        ".league.v2.MatchResult.status",
        r#"#[serde(serialize_with = "crate::json::records::result_status")]"#,
    ),
    (
        ".league.v2.StateTransition.from",
        r#"#[serde(serialize_with = "crate::json::records::match_state")]"#,
    ),
    (
        ".league.v2.StateTransition.to",
        r#"#[serde(serialize_with = "crate::json::records::match_state")]"#,
    ),
    (
        ".league.v2.MessageRecord.direction",
        r#"#[serde(serialize_with = "crate::json::records::direction")]"#,
    ),
    (
        ".league.v2.MatchResult.game_metadata",
        r#"#[serde(serialize_with = "crate::json::records::object", skip_serializing_if = "Option::is_none")]"#,
    ),
    (
        ".league.v2.MessageRecord.payload",
        r#"#[serde(serialize_with = "crate::json::records::object", skip_serializing_if = "Option::is_none")]"#,
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
        config = config.type_attribute(record, "#[derive(serde::Serialize)]");
    }
    for (field, attribute) in RECORD_FIELDS {
        config = config.field_attribute(field, attribute);
    }
    config.compile_fds(descriptors)?;
    Ok(())
}
