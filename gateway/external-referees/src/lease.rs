//! A match claimed for an external referee, pushed or pulled alike: remembered with its players, its lease
//! renewed every fifth of its duration (`Timing::renewal_interval`) until the report arrives (here, or —
//! the renewal says so — through another replica) or the referee has had the whole time the match may
//! take; or given back at once when the referee would not take it.
//!
//! A referee that took a match and called none of its players within the join timeout (at least
//! [`MIN_SILENCE`]) gives it back: the match goes back to the queue uncharged, for any referee, instead of
//! waiting out the whole match budget. Its first call to a player, taken by whichever replica, is noted
//! at the manager ([`Referees::player_called`]), and the release leaves a match so noted alone, so a
//! referee whose calls reach another replica keeps its match (ADR 0042).
use std::sync::Arc;
use std::time::Duration;

use league_domain::{Assignment, RefereeId, Timing};
use league_manager_link::league_status::to_league_error;
use league_proto::ErrorCode;
use league_proto::v2::{LeaseRef, ReleaseLeasesRequest, RenewLeasesRequest};
use league_runtime::ShutdownSignal;
use league_v2::league_error::{LeagueError, LeagueResult};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{MAX_CACHED, MatchKey, RefereedMatch, Referees, lock};

/// The least time a referee is given to call a player of a match it took, whatever the league's join
/// timeout: an agent's own threads may start a match later than a millisecond timing of a test allows.
const MIN_SILENCE: Duration = Duration::from_secs(2);

/// How keeping a match's lease ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kept {
    /// Reported, lost, over budget, or the gateway is stopping.
    Ended,
    /// The referee called none of its players in time: the match went back to the queue.
    GivenBack,
}

/// A claimed match this replica keeps the lease of.
#[derive(Debug)]
pub(super) struct Held {
    referee_id: RefereeId,
    /// The match, as this replica's caches know it.
    key: MatchKey,
    /// The lease as the manager's requests name it.
    lease: LeaseRef,
    timing: Timing,
    reported: Arc<Notify>,
}

impl Referees {
    /// Remembers a match just claimed for `referee_id`, so its calls to players and its report are
    /// recognised here at once.
    pub(super) fn hold(&self, referee_id: &RefereeId, assignment: &Assignment) -> Held {
        let scheduled = &assignment.scheduled;
        let timing = assignment.timing;
        let found = RefereedMatch::assigned(assignment, referee_id);
        let key = found.key();
        self.remember_match(found);
        let reported = Arc::new(Notify::new());
        lock(&self.reported).insert(key.clone(), reported.clone());
        Held {
            referee_id: referee_id.clone(),
            key,
            lease: LeaseRef {
                match_id: scheduled.match_id.clone(),
                lease_id: assignment.lease.lease_id.clone(),
                league_id: scheduled.league_id.clone(),
            },
            timing,
            reported,
        }
    }

    /// Keeps the lease while the referee plays, then forgets the match.
    pub(super) async fn keep(&self, held: Held, shutdown: ShutdownSignal) -> Kept {
        let kept = self.keep_lease(&held, shutdown).await;
        lock(&self.reported).remove(&held.key);
        let (league_id, match_id) = held.key;
        lock(&self.called).remove(&(league_id, match_id, held.referee_id));
        kept
    }

    /// The referee is calling a player of `found`: the first such call through this replica is noted at
    /// the manager (with a renewal of its current lease), so that no replica gives the match back as
    /// untouched. A referee that no longer holds the match gets E015 and the player hears nothing.
    pub(super) async fn player_called(
        &self,
        found: &RefereedMatch,
        referee_id: &RefereeId,
    ) -> LeagueResult<()> {
        let key = (found.league_id.clone(), found.match_id, referee_id.clone());
        {
            let mut called = lock(&self.called);
            if called.len() >= MAX_CACHED {
                called.clear();
            }
            if !called.insert(key.clone()) {
                return Ok(());
            }
        }
        let request = self.manager_link.for_referee(
            referee_id,
            RenewLeasesRequest {
                leases: vec![LeaseRef {
                    match_id: found.match_id.to_string(),
                    // The lease the referee holds now: this replica may not be the one that claimed.
                    lease_id: String::new(),
                    league_id: found.league_id.to_string(),
                }],
                players_called: true,
            },
        );
        let noted = match self.manager_link.manager.clone().renew_leases(request).await {
            Ok(response) => response.get_ref().renewals.iter().all(|r| r.renewed),
            Err(status) => {
                lock(&self.called).remove(&key);
                return Err(to_league_error(status));
            }
        };
        if noted {
            self.call_taken(referee_id);
            return Ok(());
        }
        lock(&self.called).remove(&key);
        lock(&self.matches).remove(&found.key());
        Err(LeagueError::new(
            ErrorCode::LeaseNotHeld,
            format!("{referee_id} does not hold match {}", found.match_id),
        ))
    }

    /// Renews the lease every fifth of it until dropped (while START_MATCH is being sent); a renewal
    /// that fails or is refused changes nothing here: what the push does next decides.
    pub(super) async fn renew_while_pushing(&self, held: &Held) -> std::convert::Infallible {
        let every = Timing::renewal_interval(held.timing.lease_duration);
        loop {
            tokio::time::sleep(every).await;
            let request = self.manager_link.for_referee(
                &held.referee_id,
                RenewLeasesRequest {
                    leases: vec![held.lease.clone()],
                    ..RenewLeasesRequest::default()
                },
            );
            if let Err(status) = self.manager_link.manager.clone().renew_leases(request).await {
                tracing::debug!(match_id = %held.lease.match_id, %status, "lease renewal during START_MATCH failed");
            }
        }
    }

    /// The referee would not take the match: it goes back to the queue at once, for any referee.
    pub(super) async fn give_back(&self, held: Held) {
        let request = self.manager_link.for_referee(
            &held.referee_id,
            ReleaseLeasesRequest {
                leases: vec![held.lease.clone()],
                ..ReleaseLeasesRequest::default()
            },
        );
        if let Err(status) = self.manager_link.manager.clone().release_leases(request).await {
            tracing::warn!(match_id = %held.lease.match_id, %status, "cannot release the match; its lease will expire");
        }
        lock(&self.matches).remove(&held.key);
        lock(&self.reported).remove(&held.key);
    }

    async fn keep_lease(&self, held: &Held, shutdown: ShutdownSignal) -> Kept {
        let every = Timing::renewal_interval(held.timing.lease_duration);
        let budget = held.timing.match_budget();
        let give_up_at = Instant::now() + budget;
        // Until the referee is known to have called a player: when to give the match back if it has not.
        let mut silent_until = Some(Instant::now() + held.timing.join_timeout.max(MIN_SILENCE));
        let mut renew_at = Instant::now() + every;
        let (referee_id, lease) = (&held.referee_id, &held.lease);
        loop {
            let wake_at = silent_until.map_or(renew_at, |silent| silent.min(renew_at));
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                () = held.reported.notified() => return Kept::Ended,
                () = shutdown.clone().wait() => return Kept::Ended,
            }
            if let Some(silent) = silent_until
                && Instant::now() >= silent
            {
                silent_until = None;
                if self.given_back_untouched(held).await {
                    return Kept::GivenBack;
                }
            }
            if Instant::now() < renew_at {
                continue;
            }
            renew_at = Instant::now() + every;
            if Instant::now() >= give_up_at {
                tracing::warn!(%referee_id, match_id = %lease.match_id, ?budget,
                    "the external referee did not report in time; its lease will expire and the match be replayed");
                return Kept::Ended;
            }
            let request = self.manager_link.for_referee(
                referee_id,
                RenewLeasesRequest {
                    leases: vec![lease.clone()],
                    ..RenewLeasesRequest::default()
                },
            );
            match self.manager_link.manager.clone().renew_leases(request).await {
                Ok(response) if response.get_ref().renewals.iter().all(|r| r.renewed) => {}
                // Reported (through any replica) or lost: nothing left to keep.
                Ok(_) => return Kept::Ended,
                Err(status) => tracing::warn!(match_id = %lease.match_id, %status, "lease renewal failed"),
            }
        }
    }

    /// The join timeout has passed: unless the referee called a player of the match (through this
    /// replica, or another — the manager knows), the match goes back to the queue. True when it did.
    async fn given_back_untouched(&self, held: &Held) -> bool {
        let (league_id, match_id) = held.key.clone();
        let called_here = lock(&self.called).contains(&(league_id, match_id, held.referee_id.clone()));
        if called_here {
            return false;
        }
        let request = self.manager_link.for_referee(
            &held.referee_id,
            ReleaseLeasesRequest {
                leases: vec![held.lease.clone()],
                unless_players_called: true,
                refused: false,
            },
        );
        match self.manager_link.manager.clone().release_leases(request).await {
            Ok(response) if !response.get_ref().released.is_empty() => {
                tracing::warn!(referee_id = %held.referee_id, match_id = %held.lease.match_id,
                    join_timeout = ?held.timing.join_timeout,
                    "the external referee called no player of its match in time; the match is back in the queue, nobody charged");
                lock(&self.matches).remove(&held.key);
                self.given_back_refused(&held.referee_id);
                true
            }
            // It called a player through another replica (or the match is over, or lost).
            Ok(_) => false,
            Err(status) => {
                tracing::warn!(match_id = %held.lease.match_id, %status, "cannot give back an untouched match");
                false
            }
        }
    }
}
#[cfg(test)]
mod tests;
