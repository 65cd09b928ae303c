//! The gateway: the league's only public endpoint and the only place JSON exists (league.v2 itself is the league-v2 crate). league.v2 JSON-RPC
//! (every dialect real agents use) and MCP come in on `/mcp` and become gRPC calls to the manager; the
//! league's calls to external players leave through the `PlayerService` bridge as JSON-RPC calls.

pub mod app;
pub mod bridge;
pub mod config;
pub mod connections;
pub mod http;
pub mod inbound;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod warning_buffer;

pub use app::GatewayApp;
pub use config::GatewayConfig;
