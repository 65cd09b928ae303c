//! The referee: game engines and match rules, the match runner, the worker that claims and reports
//! matches, and the `RefereeService` that shows the matches it runs.

pub mod app;
pub mod chance;
pub mod game;
pub mod games;
pub mod match_state;
pub mod metrics;
pub mod payload;
pub mod runner;
pub mod service;
#[cfg(test)]
mod test_support;
pub mod worker;

pub use chance::{Chance, OsChance};
pub use game::{Game, GameEngine, GameOutcome, GameResult, InvalidMove, Seat};
pub use match_state::{IllegalTransition, MatchState};
pub use runner::{GrpcPlayers, MatchProgress, MatchReport, PlayerChannels, Players, run_match};
pub use service::RefereeApi;
pub use worker::{RunningMatches, Worker, WorkerConfig};
