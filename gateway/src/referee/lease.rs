//! A match claimed for an external referee, pushed or pulled alike: remembered with its players, its lease
//! renewed every third of its duration until the report arrives (here, or — the renewal says so —
//! through another replica) or the referee has had the whole time the match may take; or given back at
//! once when the referee would not take it.

use std::sync::Arc;
use std::time::Duration;

use league_domain::{Assignment, Timing};
use league_proto::v2::{LeaseRef, ReleaseLeasesRequest, RenewLeasesRequest};
use league_runtime::ShutdownSignal;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{RefereedMatch, Referees, lock};

/// A claimed match this replica keeps the lease of.
#[derive(Debug)]
pub struct Held {
    pub referee_id: String,
    pub lease: LeaseRef,
    pub timing: Timing,
    reported: Arc<Notify>,
}

impl Referees {
    /// Remembers a match just claimed for `referee_id`, so its calls to players and its report are
    /// recognised here at once.
    pub(super) fn hold(&self, referee_id: &str, assignment: &Assignment) -> Held {
        let scheduled = &assignment.scheduled;
        let timing = assignment.timing;
        self.remember_match(RefereedMatch {
            league_id: scheduled.league_id.clone(),
            match_id: scheduled.match_id.clone(),
            round_id: scheduled.round_id,
            game_type: scheduled.game_type.clone(),
            player_a: scheduled.player_a_id.clone(),
            player_b: scheduled.player_b_id.clone(),
            referee_id: referee_id.to_owned(),
            running: true,
            timing,
        });
        let reported = Arc::new(Notify::new());
        lock(&self.reported).insert(
            (scheduled.league_id.clone(), scheduled.match_id.clone()),
            reported.clone(),
        );
        Held {
            referee_id: referee_id.to_owned(),
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
    pub(super) async fn keep(&self, held: Held, shutdown: ShutdownSignal) {
        self.keep_lease(&held, shutdown).await;
        lock(&self.reported).remove(&self.key(&held));
    }

    /// The referee would not take the match: it goes back to the queue at once, for any referee.
    pub(super) async fn give_back(&self, held: Held) {
        let request = self.manager_link.for_referee(
            &held.referee_id,
            ReleaseLeasesRequest {
                leases: vec![held.lease.clone()],
            },
        );
        if let Err(status) = self.manager_link.manager.clone().release_leases(request).await {
            tracing::warn!(match_id = %held.lease.match_id, %status, "cannot release the match; its lease will expire");
        }
        let key = self.key(&held);
        lock(&self.matches).remove(&key);
        lock(&self.reported).remove(&key);
    }

    fn key(&self, held: &Held) -> (String, String) {
        (held.lease.league_id.clone(), held.lease.match_id.clone())
    }

    async fn keep_lease(&self, held: &Held, shutdown: ShutdownSignal) {
        let every = (held.timing.lease_duration / 3).max(Duration::from_millis(50));
        let budget = held.timing.match_budget();
        let give_up_at = Instant::now() + budget;
        let (referee_id, lease) = (&held.referee_id, &held.lease);
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = held.reported.notified() => return,
                () = shutdown.clone().wait() => return,
            }
            if Instant::now() >= give_up_at {
                tracing::warn!(%referee_id, match_id = %lease.match_id, ?budget,
                    "the external referee did not report in time; its lease will expire and the match be replayed");
                return;
            }
            let request = self.manager_link.for_referee(
                referee_id,
                RenewLeasesRequest {
                    leases: vec![lease.clone()],
                },
            );
            match self.manager_link.manager.clone().renew_leases(request).await {
                Ok(response) if response.get_ref().renewals.iter().all(|r| r.renewed) => {}
                // Reported (through any replica) or lost: nothing left to keep.
                Ok(_) => return,
                Err(status) => tracing::warn!(match_id = %lease.match_id, %status, "lease renewal failed"),
            }
        }
    }
}
