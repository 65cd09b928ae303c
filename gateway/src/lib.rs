//! The gateway: the league's only public endpoint and the only place JSON exists. league.v2 JSON-RPC
//! (every dialect real agents use) and MCP come in on `/mcp` and become gRPC calls to the manager; the
//! league's calls to external players leave through the `PlayerService` bridge as JSON-RPC calls.

pub mod app;
pub mod bridge;
pub mod compliance;
pub mod config;
pub mod connections;
pub mod dialect;
pub mod http;
pub mod inbound;
pub mod jsonrpc;
pub mod league_error;
pub mod limits;
pub mod live;
pub mod mcp;
pub mod metrics;
pub mod referee;
pub mod shared_json;
pub mod wire;

pub use app::GatewayApp;
pub use config::GatewayConfig;
