//! What every part of the league must agree on, written once: a match's timings and their defaults,
//! the games a league can play, what its ids may be (league, player, referee, match), the league.v2
//! message types, the Even/Odd rule, the points a result is worth, and a match assignment as a referee may rely on it.
//!
//! `league-proto` is the wire; this crate is the league's knowledge about it. The services keep their
//! own logic (how a referee runs a match, how the manager ranks a table, how the gateway speaks to
//! agents) and take these facts from here (docs/adr/0021-domain-crate.md).

pub mod agent_id;
pub mod assignment;
pub mod even_odd;
pub mod game_type;
pub mod id;
pub mod league_id;
pub mod match_id;
pub mod message_type;
pub mod payload;
pub mod points;
pub mod tic_tac_toe;
pub mod timing;

pub use agent_id::{AgentId, PlayerId, RefereeId};
pub use assignment::{Assignment, IncompleteAssignment, Lease};
pub use game_type::{GameType, UnknownGame};
pub use id::{IdKind, InvalidId};
pub use league_id::LeagueId;
pub use match_id::MatchId;
pub use message_type::{MessageType, move_messages};
pub use timing::Timing;
