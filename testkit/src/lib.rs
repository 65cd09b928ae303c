//! The test kit: what the tests of every crate share, so each piece of test plumbing has one home.
//! It is a dev-dependency of every crate, and a dependency of the launcher's `bench` feature (the
//! bench's external agents are [`fake_agent::FakeAgents`]); nothing here ships in a binary.

pub mod database;
pub mod event_host;
pub mod fake_agent;
pub mod fake_service;
pub mod fixtures;
pub mod http;
pub mod invariants;
pub mod league_run;
pub mod manager;
pub mod observe;
pub mod tls;

pub use database::TestDatabase;
pub use event_host::EventHost;
pub use fake_agent::{Behaviour, FakeAgents, Registered};
pub use league_run::LeagueRun;
// Here for every crate's tests; its home is the runtime, whose own tests need it too.
pub use league_runtime::alone;
pub use manager::{TestManager, spawn_manager};
pub use observe::{observe, wait_for};

// For `fake_service!`: the service traits it implements are tonic's.
#[doc(hidden)]
pub use tonic;
