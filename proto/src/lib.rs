//! league.v2 gRPC contracts: the generated messages, clients and servers of proto/league/v2, the
//! descriptor set for reflection, the error-code table every service shares, and the protocol revision.
//! The clients, servers and gRPC statuses come with the `grpc` feature (default); without it, the
//! messages and the error-code table alone, with no tonic in the tree (what league-v2 needs).

pub mod error_code;
pub mod json;
pub mod protocol_version;

pub use error_code::ErrorCode;
pub use protocol_version::ProtocolVersion;

/// The `AgentMeta` label that marks an agent reached through the gateway (value `"true"`): the league
/// calls it at its contact endpoint, so that endpoint is held to the endpoint policy.
pub const EXTERNAL_LABEL: &str = "league.external";

/// Generated from proto/league/v2/*.proto (package `league.v2`).
#[allow(clippy::all, missing_debug_implementations)]
pub mod v2 {
    include!(concat!(env!("OUT_DIR"), "/league.v2.rs"));
}

/// The encoded `FileDescriptorSet` of every league.v2 proto, for the gRPC reflection service.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/league_descriptor.bin"));

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn descriptor_set_holds_every_service() {
        let set =
            prost_types::FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("descriptor set decodes");
        let services: Vec<_> = set
            .file
            .iter()
            .filter(|file| file.package() == "league.v2")
            .flat_map(|file| file.service.iter().map(|service| service.name().to_owned()))
            .collect();
        for expected in ["ManagerService", "PlayerService", "RefereeService"] {
            assert!(
                services.iter().any(|name| name == expected),
                "{expected} missing: {services:?}"
            );
        }
    }
}
