//! Observability of a league played by the real `league` binaries (manager, referees, player host as
//! separate processes): one trace per match across the services, `/metrics` that adds up to the league
//! that was played, and no auth token in any output even at trace level. See docs/observability.md.
//!
//! Run with `cargo test -p league-launcher --test observability`; each test gets its own database.

mod collector;
mod harness;
mod metrics;
mod secrets;
mod traces;
