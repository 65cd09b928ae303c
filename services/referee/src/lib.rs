//! The referee: game engines and match rules (the match runner and gRPC service come with the services).

pub mod chance;
pub mod game;
pub mod games;
pub mod match_state;
pub mod payload;

pub use chance::{Chance, OsChance};
pub use game::{Game, GameEngine, GameOutcome, GameResult, InvalidMove, Seat};
pub use match_state::{IllegalTransition, MatchState};
