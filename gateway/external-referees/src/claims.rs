//! Matches for external referees that take pushes. For every referee registered through a gateway, each
//! replica runs a claimer: it claims matches for the referee (the operator credential acting for it; the
//! manager caps the referee's running matches at its `max_concurrent_matches`, whichever replica
//! claims), pushes each to the referee ([`super::push`]), and keeps the match's lease ([`super::lease`]).
//! A referee that cannot be reached or refuses is given no more matches for a while, and the match goes
//! back to the queue at once for any other referee. A referee that pulls (it asked for its matches, or
//! it knows no name of START_MATCH) has no claimer: its pulls claim ([`super::pull`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use league_domain::{Assignment, RefereeId};
use league_proto::EXTERNAL_LABEL;
use league_proto::v2::{Agent, AgentKind, ClaimMatchesRequest, ListAgentsRequest};
use league_runtime::ShutdownSignal;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::lease::Kept;
use super::push::Pushed;
use super::{Referees, lock};

/// How long one claim waits at the manager for a match (long poll).
const CLAIM_WAIT: Duration = Duration::from_secs(20);
/// How often each replica looks for referees registered through other replicas.
const DISCOVERY_INTERVAL: Duration = Duration::from_secs(5);
/// Pause after a failed claim or a referee that would not start a match; doubles up to the maximum.
const FIRST_PAUSE: Duration = Duration::from_millis(500);
const MAX_PAUSE: Duration = Duration::from_secs(30);

/// One external referee's claimer on this replica.
#[derive(Debug)]
struct Claimer {
    referee_id: RefereeId,
    slots: Arc<Semaphore>,
    /// When claiming may resume, and the pause to use after the next failure.
    paused: Mutex<(Instant, Duration)>,
}

impl Claimer {
    fn pause(&self) {
        let mut paused = lock(&self.paused);
        let pause = paused.1;
        *paused = (Instant::now() + pause, (pause * 2).min(MAX_PAUSE));
    }

    fn resume(&self) {
        *lock(&self.paused) = (Instant::now(), FIRST_PAUSE);
    }

    fn paused_until(&self) -> Instant {
        lock(&self.paused).0
    }
}

impl Referees {
    /// Finds external referees (at start, when one registers here, and every few seconds for those
    /// registered through other replicas) and runs a claimer for each until shutdown.
    pub async fn run_claimers(self: Arc<Self>, shutdown: ShutdownSignal) {
        self.shutdown.set(shutdown.clone()).ok();
        loop {
            let request = self.manager_link.as_operator(ListAgentsRequest {
                kind: AgentKind::Referee as i32,
                label: EXTERNAL_LABEL.to_owned(),
                include_revoked: false,
            });
            match self.manager_link.agents.clone().list_agents(request).await {
                Ok(response) => {
                    for referee in response.into_inner().agents {
                        self.start_claimer(referee, &shutdown);
                    }
                }
                Err(status) => tracing::debug!(%status, "cannot list external referees yet"),
            }
            tokio::select! {
                () = self.discover.notified() => {}
                () = tokio::time::sleep(DISCOVERY_INTERVAL) => {}
                () = shutdown.clone().wait() => return,
            }
        }
    }

    fn start_claimer(self: &Arc<Self>, referee: Agent, shutdown: &ShutdownSignal) {
        // The manager names its referees under the grammar; one it does not is listed, never claimed for.
        let referee_id = match RefereeId::parse(&referee.agent_id) {
            Ok(referee_id) => referee_id,
            Err(error) => {
                tracing::error!(%error, "the manager listed an external referee whose id is no referee id; not claiming for it");
                return;
            }
        };
        if !lock(&self.claimers).insert(referee_id.clone()) {
            return;
        }
        let claimer = Arc::new(Claimer {
            referee_id,
            slots: Arc::new(Semaphore::new(referee.max_concurrent_matches.max(1) as usize)),
            paused: Mutex::new((Instant::now(), FIRST_PAUSE)),
        });
        tracing::info!(referee_id = %claimer.referee_id, "claiming matches for an external referee");
        tokio::spawn(self.clone().claim(claimer, shutdown.clone()));
    }

    async fn claim(self: Arc<Self>, claimer: Arc<Claimer>, shutdown: ShutdownSignal) {
        loop {
            if !self.pushes_to(&claimer.referee_id) {
                return;
            }
            let permit = tokio::select! {
                permit = claimer.slots.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
                () = shutdown.clone().wait() => return,
            };
            // A referee giving back match after match for one refusal is claimed nothing meanwhile.
            let resume_at = match self.benched(&claimer.referee_id) {
                Some((_, until)) => until.into(),
                None => claimer.paused_until(),
            };
            if resume_at > Instant::now() {
                tokio::select! {
                    () = tokio::time::sleep_until(resume_at) => {}
                    () = shutdown.clone().wait() => return,
                }
            }
            let free = 1 + claimer.slots.available_permits() as u32;
            let mut request = self.manager_link.for_referee(
                &claimer.referee_id,
                ClaimMatchesRequest {
                    max_matches: free,
                    wait: prost_types::Duration::try_from(CLAIM_WAIT).ok(),
                },
            );
            request.set_timeout(CLAIM_WAIT + Duration::from_secs(10));
            let mut manager = self.manager_link.manager.clone();
            let claimed = tokio::select! {
                claimed = manager.claim_matches(request) => claimed,
                () = shutdown.clone().wait() => return,
            };
            let assignments = match claimed {
                Ok(response) => response.into_inner().assignments,
                // Revoked by the operator (or gone with its database): nothing to claim for, ever.
                Err(status)
                    if league_proto::error_code::code_of(&status)
                        == Some(league_proto::ErrorCode::RefereeNotRegistered) =>
                {
                    tracing::info!(referee_id = %claimer.referee_id, %status, "external referee no longer registered: its claims stop");
                    return;
                }
                Err(status) => {
                    tracing::warn!(referee_id = %claimer.referee_id, %status, "claim for an external referee failed");
                    claimer.pause();
                    continue;
                }
            };
            let mut first = Some(permit);
            for assignment in assignments.into_iter().filter_map(super::parse) {
                // The manager never hands out more than `free`, so a slot is there for each.
                let Some(slot) = first
                    .take()
                    .or_else(|| claimer.slots.clone().try_acquire_owned().ok())
                else {
                    break;
                };
                tokio::spawn(
                    self.clone()
                        .start_match(claimer.clone(), assignment, slot, shutdown.clone()),
                );
            }
        }
    }

    /// Pushes the match and keeps the lease while the referee plays; the slot is free again after.
    async fn start_match(
        self: Arc<Self>,
        claimer: Arc<Claimer>,
        assignment: Assignment,
        _slot: OwnedSemaphorePermit,
        shutdown: ShutdownSignal,
    ) {
        let held = self.hold(&claimer.referee_id, &assignment);
        // The lease is renewed while START_MATCH is on its way (retries take longer than a lease).
        let pushed = tokio::select! {
            pushed = self.push(&claimer.referee_id, &assignment) => pushed,
            never = self.renew_while_pushing(&held) => match never {},
        };
        if pushed == Pushed::NoSuchMethod {
            tracing::info!(referee_id = %claimer.referee_id,
                "the referee answers no name of START_MATCH: it gets its matches by pulling");
            self.pulls(&claimer.referee_id);
        }
        // A pulling referee may already have been handed this match by a pull (a pull lists every match
        // the referee holds): it keeps it, and the report closes the lease as for any match.
        if pushed == Pushed::Taken || !self.pushes_to(&claimer.referee_id) {
            claimer.resume();
            if self.keep(held, shutdown).await == Kept::GivenBack {
                // It took the match and did nothing with it: give it no other for a while.
                claimer.pause();
            }
        } else {
            claimer.pause();
            self.give_back(held).await;
        }
    }

    /// Whether matches are pushed to `referee_id` (no: it pulls).
    fn pushes_to(&self, referee_id: &RefereeId) -> bool {
        !lock(&self.pulling).contains(referee_id)
    }

    /// `referee_id` takes its matches by pulling: its claimer here stops.
    pub(super) fn pulls(&self, referee_id: &RefereeId) {
        lock(&self.pulling).insert(referee_id.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_referee_that_fails_again_waits_twice_as_long_up_to_the_most() {
        let claimer = Claimer {
            referee_id: RefereeId::parse("REF01").expect("a referee id"),
            slots: Arc::new(Semaphore::new(1)),
            paused: Mutex::new((Instant::now(), FIRST_PAUSE)),
        };
        assert_eq!(claimer.paused_until(), Instant::now(), "claims at once at first");
        let mut waits = Vec::new();
        for _ in 0..8 {
            claimer.pause();
            waits.push(claimer.paused_until() - Instant::now());
        }
        let millis = [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000];
        assert_eq!(waits, millis.map(Duration::from_millis));
        // One match taken: claims again at once, and the next failure starts over.
        claimer.resume();
        assert_eq!(claimer.paused_until(), Instant::now());
        claimer.pause();
        assert_eq!(claimer.paused_until() - Instant::now(), FIRST_PAUSE);
    }
}
