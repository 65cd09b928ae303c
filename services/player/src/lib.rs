//! The player host: one process serving many bot players behind a single `PlayerService`.
//!
//! Each bot is registered with the manager under its own player id and plays by its own [`Behaviour`]:
//! a strategy ([`StrategyKind::ALL`]) or, for exercising the referee's fault handling, a deliberate
//! fault ([`fault::Fault::NAMES`]); [`behaviour::names`] lists them all.

pub mod app;
pub mod behaviour;
pub mod bot;
pub mod bot_name;
pub mod fault;
pub mod host;
pub mod llm;
pub mod llm_moves;
pub mod memory;
pub mod parity;
mod payload;
pub mod registration;
pub mod strategy;

pub use behaviour::{Behaviour, ParseBehaviourError};
pub use fault::Fault;
pub use host::{BotInfo, PlayerHost};
pub use llm_moves::{Decider, LlmMoves};
pub use memory::{EventKind, GameErrorRecord, GameRecord, Memory, Outcome};
pub use parity::Parity;
pub use registration::{BotSpec, RegisteredBot, register_bots};
pub use strategy::StrategyKind;
