//! Reliability: every service is a separate process of the real `league` binary
//! (manager, referees, player hosts, each with its own `LEAGUE_*` environment, found through its
//! `LEAGUE_READY` line), and each scenario breaks something in the middle of a league — kill -9, SIGTERM,
//! a second manager, a Postgres restart, more referees — then checks the design's invariants against
//! the database once the league is over.
//!
//! - `referee_crash`: kill -9 one of three referees mid-league.
//! - `manager_restart`: kill -9 the manager mid-delivery and start it again.
//! - `two_managers`: two managers on one database, referees and players split between them.
//! - `postgres_restart`: a private Postgres cluster restarted mid-league.
//! - `scale_referees`: referees scaled from 1 to 4 while a league runs.
//! - `referee_sigterm`: SIGTERM to a referee mid-match (it finishes, or releases after its grace).
//! - `one_service_restart`: the player host, then a referee, killed and started again alone on new ports.
//! - `serve_restart`: `league serve` killed with SIGKILL mid-league and started again the same way.
//! - `serve_supervised`: the player host of a `league serve` killed with kill -9 mid-league: serve starts
//!   it again, and the league completes with the same agents.
//! - `chaos`: a referee, the player host, the manager and the gateway killed and restarted on the same
//!   addresses mid-league, with external Python agents playing: nobody is charged a match.
//!
//! "Mid-league" is always a point observed in the database (a finished match, a completed round, a
//! match running on a given referee), never a sleep. The scenarios run one at a time (they measure and
//! race real processes on a small machine); each has its own database, and its services' logs go to a
//! directory that is kept when the test fails (its path is in the failure message).
//!
//! Run with `cargo test -p league-launcher --test reliability`; `RUST_LOG=debug` makes the logs chattier.

// The league suite's invariant checks (the test kit's): the ones that need only the database and
// GetStandings are used here (the bots live in another process, so their memory is not).
use league_testkit::invariants;

mod harness;

mod chaos;
mod manager_restart;
mod one_service_restart;
mod postgres_restart;
mod referee_crash;
mod referee_sigterm;
mod scale_referees;
mod serve_manager_sigterm;
mod serve_restart;
mod serve_supervised;
mod two_managers;
