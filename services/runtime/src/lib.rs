//! The small runtime every League binary shares: configuration, credentials on gRPC calls, telemetry,
//! shutdown, and serving gRPC on a bound listener.

pub mod config;
pub mod credentials;
pub mod grpc;
pub mod shutdown;
pub mod telemetry;

pub use credentials::Credentials;
pub use shutdown::{Shutdown, ShutdownSignal};
