//! Claims waiting in this manager for matches, so that the transaction releasing a round can hand its
//! matches to them directly (crate::league::round_completion). Without it, the release only wakes
//! them: each then runs its own claim statement, with its own commit, after the release has committed,
//! and the round's first match starts that much later (the *hand-over* and *start* of a round
//! boundary, docs/benchmarks.md).
//!
//! A waiting claim is taken out of the registry by the releasing transaction and answered once that
//! transaction has committed ([`Handed::answer`]). Should the transaction fail, or hand it nothing, the
//! claim's answer channel is dropped and the claim looks for ready matches again, as after a wake-up.
//! A claim that went away before its answer (the referee's call was cancelled) has its matches
//! released at once, so they go back to the queue instead of waiting for their leases to expire. Only
//! this manager's claims are here: claims waiting in another manager are woken by the release's NOTIFY
//! and claim the matches left ready.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use league_domain::RefereeId;
use league_proto::v2::{LeaseRef, MatchAssignment};
use sqlx::PgPool;
use tokio::sync::oneshot;

use crate::league::lease::Lease;
use crate::league::release;

/// The claims waiting in this manager. A cheap handle: clones share the registry.
#[derive(Debug, Clone, Default)]
pub struct WaitingClaims {
    waiting: Arc<Mutex<Vec<WaitingClaim>>>,
    next_id: Arc<AtomicU64>,
}

/// A claim taken by a releasing transaction: who asks, for how many matches at most, and where its
/// answer goes.
#[derive(Debug)]
pub struct WaitingClaim {
    id: u64,
    pub referee_id: RefereeId,
    pub max: u32,
    answer: oneshot::Sender<Vec<MatchAssignment>>,
}

/// A claim's place in the registry, held while it waits; dropping it withdraws the claim if no
/// transaction has taken it.
#[derive(Debug)]
pub struct Waiting {
    claims: WaitingClaims,
    id: u64,
    pub answer: oneshot::Receiver<Vec<MatchAssignment>>,
}

impl WaitingClaims {
    /// Registers a claim of `referee_id` for up to `max` matches.
    pub fn wait(&self, referee_id: &RefereeId, max: u32) -> Waiting {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, receiver) = oneshot::channel();
        self.lock().push(WaitingClaim {
            id,
            referee_id: referee_id.clone(),
            max,
            answer,
        });
        Waiting {
            claims: self.clone(),
            id,
            answer: receiver,
        }
    }

    /// Takes every waiting claim, oldest first.
    pub fn take_all(&self) -> Vec<WaitingClaim> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<WaitingClaim>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Waiting {
    /// Whether a releasing transaction has taken this claim: its answer is then on the way (matches, or
    /// the channel dropped if the transaction failed or handed it none).
    pub fn is_taken(&self) -> bool {
        !self.claims.lock().iter().any(|claim| claim.id == self.id)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.claims.lock().retain(|claim| claim.id != self.id);
    }
}

/// The matches a releasing transaction handed to one waiting claim, to be answered once it commits.
#[derive(Debug)]
pub struct Handed {
    pub claim: WaitingClaim,
    pub assignments: Vec<MatchAssignment>,
}

impl Handed {
    /// Answers the claim; call only after the handing transaction committed. A claim that went away
    /// gets its matches released (in a task of its own: the caller is on the round's critical path).
    pub fn answer(self, pool: &PgPool) {
        let referee_id = self.claim.referee_id;
        let Err(assignments) = self.claim.answer.send(self.assignments) else {
            return;
        };
        let leases: Vec<LeaseRef> = assignments
            .iter()
            .filter_map(|assignment| {
                let scheduled = assignment.r#match.as_ref()?;
                Some(LeaseRef {
                    league_id: scheduled.league_id.clone(),
                    match_id: scheduled.match_id.clone(),
                    lease_id: assignment.lease_id.clone(),
                })
            })
            .collect();
        let pool = pool.clone();
        tokio::spawn(async move {
            let released = match Lease::parse_all(&leases) {
                Ok(leases) => release::release(&pool, &referee_id, &leases, false, false).await,
                Err(error) => Err(error),
            };
            match released {
                Ok(released) => tracing::info!(
                    %referee_id,
                    released = released.len(),
                    "a waiting claim went away before its matches were handed to it: released them"
                ),
                Err(error) => tracing::warn!(
                    %referee_id,
                    %error,
                    "could not release the matches of a claim that went away; they are claimable again when their leases expire"
                ),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_withdraws_itself_unless_taken() {
        let claims = WaitingClaims::default();
        let referee = |id| RefereeId::parse(id).expect("a referee id");
        let first = claims.wait(&referee("REF01"), 4);
        let second = claims.wait(&referee("REF02"), 8);
        drop(first);
        assert!(!second.is_taken());
        let taken = claims.take_all();
        assert_eq!(taken.len(), 1);
        assert_eq!((taken[0].referee_id.as_str(), taken[0].max), ("REF02", 8));
        assert!(second.is_taken());
        drop(second);
        assert!(claims.take_all().is_empty());
    }
}
