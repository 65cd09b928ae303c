//! The test kit: what the tests of every crate share, so each piece of test plumbing has one home.
//! It is a dev-dependency only; nothing here ships in a binary.

pub mod database;
pub mod invariants;
pub mod league_run;
pub mod manager;

pub use database::TestDatabase;
pub use league_run::LeagueRun;
pub use manager::{TestManager, spawn_manager};
