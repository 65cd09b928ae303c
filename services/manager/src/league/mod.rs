//! The league's behaviour on top of Postgres: registration, starting, the match queue, results, the
//! outbox, the table and queries.

pub mod contact_key;
pub mod endpoint;
pub mod enrollment;
pub mod even_odd_report;
pub mod events;
pub mod history;
pub mod kept_table;
pub mod lease;
pub mod lifecycle;
pub mod queries;
pub mod queue;
pub mod referee_admission;
pub mod registration;
pub mod release;
pub mod report;
pub mod report_queue;
pub mod resume;
pub mod revocation;
pub mod round_completion;
pub mod stall;
pub mod start;
pub mod status;
pub mod table;
pub(crate) mod verdict;
pub mod waiting_claims;
pub mod withdrawal;
