//! Compiles proto/league/v2/*.proto with protox (pure Rust: no system protoc) and generates the prost
//! messages and tonic clients/servers. The descriptor set is written next to them for gRPC reflection.

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "league/v2/agents.proto",
    "league/v2/common.proto",
    "league/v2/manager.proto",
    "league/v2/player.proto",
    "league/v2/referee.proto",
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
    tonic_prost_build::configure()
        .emit_rerun_if_changed(false)
        .compile_fds(descriptors)?;
    Ok(())
}
