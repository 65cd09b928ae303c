//! league.v2 gRPC contracts: the generated messages, clients and servers of proto/league/v2, the
//! descriptor set for reflection, and the error-code table every service shares.

pub mod error_code;
pub mod json;

pub use error_code::ErrorCode;

/// Generated from proto/league/v2/*.proto (package `league.v2`).
#[allow(clippy::all, missing_debug_implementations)]
pub mod v2 {
    tonic::include_proto!("league.v2");
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
