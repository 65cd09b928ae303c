//! An agent the operator revoked (ADR 0082): it stops, and the process exits with [`REVOKED_EXIT`],
//! which a supervisor takes as "do not start again" — a revoked referee started again would only be
//! refused again, and registering it anew would undo the operator's decision.

/// The exit status of a process whose agent was revoked: 77, `EX_NOPERM` of sysexits.h.
pub const REVOKED_EXIT: u8 = 77;

/// The error a service ends with when its agent was revoked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{agent_id} was revoked by the operator: it stops and does not register again (`league referees` \
     lists it; its identity stays kept, so a start again is refused too)"
)]
pub struct Revoked {
    pub agent_id: String,
}
