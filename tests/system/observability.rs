//! Observability of a league played by the real `league` binaries (manager, referees, player host and
//! gateway as separate processes): one trace per match across the services — through the gateway to an
//! external agent too — `/metrics` that adds up to the league that was played, no auth token in any
//! output even at trace level, and a manager whose gRPC health follows its database. See
//! docs/observability.md.
//!
//! Run with `cargo test -p league-launcher --test system observability::`; each test gets its own
//! database.

mod collector;
mod external;
mod harness;
mod health;
mod metrics;
mod secrets;
mod traces;
