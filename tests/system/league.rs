//! Whole leagues in one process: a manager on a fresh Postgres database, referees and a player host of
//! bots, all on 127.0.0.1:0 over real gRPC. Every full league ends with the design's invariants checked
//! against the database and the bots' memory (`league_testkit::invariants`); the fault and crash tests
//! also check the exact outcome each misbehaviour must have.
//!
//! Run with `cargo test -p league-launcher --test system league::`; each test gets its own database, so
//! they run in parallel. `RUST_LOG=info` shows the services' logs.

mod crash;
mod faults;
mod full_leagues;
mod support;
