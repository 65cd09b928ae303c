//! Outbound: the gateway as the `PlayerService` of every external player, calling each agent in its
//! dialect, and collecting the replies agents send as separate calls.

pub mod answer;
pub mod client;
pub mod event_slots;
pub mod external_agents;
mod match_calls;
pub mod mcp_agent;
pub mod outbound;
pub mod overhead;
pub mod player;
pub mod replies;
mod start_match;

pub use player::{FallbackTimeouts, PlayerBridge};
pub use replies::Replies;
