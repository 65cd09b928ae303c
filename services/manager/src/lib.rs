//! League rules and (later) the manager service: scheduling, standings.

pub mod results;
pub mod schedule;
pub mod standings;
