//! Outbound: the gateway as the `PlayerService` of every external player, calling each agent in its
//! dialect, and collecting the replies agents send as separate calls.

pub(crate) mod answer;
mod called;
pub mod client;
pub(crate) mod event_slots;
pub mod external_agents;
mod match_calls;
pub(crate) mod mcp_agent;
pub mod mcp_detect;
pub mod outbound;
pub(crate) mod overhead;
pub(crate) mod player;
pub(crate) mod replies;
mod start_match;

pub use player::{FallbackTimeouts, PlayerBridge};
pub use replies::Replies;
