//! A referee whose calls to players are refused, and the matches it gives back for it. Without this, a
//! referee whose every call is refused (a pulling referee of the field that sends no token, say) takes a
//! match, gives it back untouched after the join timeout, takes it again, forever, and nothing says why.
//! So the refusal's cause is kept per referee (this replica's, as its claims are); each match it gives
//! back untouched while a refusal stands counts against that cause, and after [`BENCH_AFTER`] for the
//! same cause no match is claimed for it (pushed or pulled) for [`BENCH_PAUSE`] at a time, which leaves
//! the queue's matches to the other referees. A call of its that is taken ends it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use league_domain::RefereeId;

use super::{Referees, lock};

/// The matches given back for one cause after which a referee is claimed nothing for a while.
pub const BENCH_AFTER: u32 = 3;
/// How long a benched referee is claimed nothing, each time.
const BENCH_PAUSE: Duration = Duration::from_secs(30);

/// The refusal standing against one referee.
#[derive(Debug)]
struct Refused {
    /// Why its calls are refused (the refusal's words).
    cause: String,
    /// Matches it gave back untouched since its calls were refused for `cause`.
    given_back: u32,
    /// Until when it is claimed nothing.
    benched_until: Option<Instant>,
}

/// Refusals standing, by referee.
#[derive(Debug, Default)]
pub(super) struct Refusals(Mutex<HashMap<RefereeId, Refused>>);

/// What stands against a referee after one more refusal: its cause and the matches given back for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub cause: String,
    pub given_back: u32,
}

impl Referees {
    /// A call of `referee_id`'s to a player was refused for `cause`; what stands against it now.
    pub fn call_refused(&self, referee_id: &RefereeId, cause: &str) -> Standing {
        let mut refusals = lock(&self.refusals.0);
        let refused = refusals.entry(referee_id.clone()).or_insert_with(|| Refused {
            cause: cause.to_owned(),
            given_back: 0,
            benched_until: None,
        });
        if refused.cause != cause {
            // Another cause: the count so far was about something it has fixed.
            *refused = Refused {
                cause: cause.to_owned(),
                given_back: 0,
                benched_until: None,
            };
        }
        Standing {
            cause: refused.cause.clone(),
            given_back: refused.given_back,
        }
    }

    /// A call of `referee_id`'s was taken: no refusal stands against it.
    pub(super) fn call_taken(&self, referee_id: &RefereeId) {
        lock(&self.refusals.0).remove(referee_id);
    }

    /// `referee_id` gave a match back untouched: counted against the refusal standing, if any.
    pub(super) fn given_back_refused(&self, referee_id: &RefereeId) {
        if let Some(refused) = lock(&self.refusals.0).get_mut(referee_id) {
            refused.given_back += 1;
            if refused.given_back >= BENCH_AFTER {
                refused.benched_until = Some(Instant::now() + BENCH_PAUSE);
            }
        }
    }

    /// Why `referee_id` is claimed no match now, and until when: it gave back [`BENCH_AFTER`] matches
    /// or more because its calls to players were refused for one cause.
    pub(super) fn benched(&self, referee_id: &RefereeId) -> Option<(String, Instant)> {
        let refusals = lock(&self.refusals.0);
        let refused = refusals.get(referee_id)?;
        let until = refused.benched_until.filter(|until| *until > Instant::now())?;
        Some((
            format!(
                "{referee_id} gave back {} matches untouched, its calls to players refused each time: {}; \
                 no match is claimed for it for {}s at a time until a call of its is taken",
                refused.given_back,
                refused.cause,
                BENCH_PAUSE.as_secs()
            ),
            until,
        ))
    }
}
