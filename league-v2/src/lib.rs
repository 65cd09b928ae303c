//! league.v2 on the wire, and nothing else: JSON-RPC 2.0 framing, the method-name dialects real agents
//! use, the envelope every message carries, conversions between the league's protobuf records and the
//! JSON agents read, strict and lenient compliance, and the league.v2 error codes as JSON-RPC errors.
//!
//! Pure: no runtime, no network, no state beyond small caches of converted JSON. Whoever reads bytes
//! from a socket (the gateway) hands them here and gets back types that cannot be wrong; the fuzz
//! targets (fuzz/) call it the same way. See README.md for what this crate may depend on.

pub mod addressed;
pub mod compliance;
pub mod convert;
pub mod details_nested;
pub mod dialect;
pub mod envelope;
pub mod ids;
pub mod jsonrpc;
pub mod league_error;
pub mod match_message;
pub mod outbound_token;
pub mod query;
pub mod result;
pub mod sender;
pub mod shared_json;
pub mod timestamp;
