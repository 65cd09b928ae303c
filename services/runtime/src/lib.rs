//! The small runtime every League binary shares: configuration, credentials on gRPC calls, telemetry
//! (logs, traces, metrics, the admin server with health and readiness), shutdown, and serving and
//! calling gRPC, the one TLS client, and fair shares of a budget among client addresses.

pub mod admin;
#[cfg(any(test, feature = "testing"))]
pub mod alone;
pub mod config;
pub mod credentials;
pub mod fair_share;
pub mod grpc;
pub mod metrics;
pub mod revoked;
pub mod saved;
pub mod secret_file;
pub mod shutdown;
pub mod telemetry;
pub mod threads;
pub mod tls;

pub use credentials::Credentials;
pub use revoked::Revoked;
pub use saved::SavedIdentities;
pub use shutdown::{Shutdown, ShutdownSignal};
