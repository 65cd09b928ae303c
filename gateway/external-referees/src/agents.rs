//! How the league speaks to an external referee itself: START_MATCH, and the league's sender in the
//! form the referee takes. Both are the gateway bridge's business — it calls every agent in its dialect
//! and sender form, and learns both — so the worker asks for them through [`RefereeAgents`], which the
//! bridge implements, and knows nothing of dialects.

use futures::future::BoxFuture;
use league_domain::RefereeId;
use serde_json::Value;

/// The bridge, as the worker calls referees through it.
pub trait RefereeAgents: Send + Sync + std::fmt::Debug {
    /// One START_MATCH to `referee_id` (`message` as the league writes it), by every name the referee
    /// may answer to: its answer, or why there is none.
    fn start_match<'a>(
        &'a self,
        referee_id: &'a RefereeId,
        message: &'a Value,
    ) -> BoxFuture<'a, Result<Value, Unanswered>>;

    /// Writes the league's sender in `answer` in the form `referee_id` takes it, when it is known.
    fn address<'a>(&'a self, referee_id: &'a RefereeId, answer: &'a mut Value) -> BoxFuture<'a, ()>;
}

/// Why a START_MATCH has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswered {
    /// The referee answers no name of START_MATCH: it takes its matches by pulling.
    NoSuchMethod,
    /// Refused, failed, or the referee cannot be looked up or reached; `retryable` when the protocol
    /// retries it (E001, E009).
    Failed { retryable: bool, why: String },
}
