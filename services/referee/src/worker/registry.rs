//! The matches a referee is running now: what `RefereeService` shows, what the lease renewals cover, and
//! how a match whose lease is lost gets stopped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use league_domain::{Assignment, Timing};
use league_proto::v2::{LeaseRef, LeaseRenewal, MatchTranscript, RunningMatch, ScheduledMatch};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::runner::MatchProgress;

/// A match's identity: match ids are unique within a league only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct MatchKey {
    pub(crate) league_id: String,
    pub(crate) match_id: String,
}

/// The registry of running matches. Cheap to clone; clones share it.
#[derive(Debug, Clone, Default)]
pub struct RunningMatches {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    matches: Mutex<HashMap<MatchKey, Running>>,
    /// Wakes the renewal task when a match is added.
    added: Notify,
    /// Tells registrations apart, so a stale one never removes a newer claim of the same match.
    next_id: AtomicU64,
}

#[derive(Debug)]
struct Running {
    id: u64,
    scheduled: ScheduledMatch,
    lease_id: String,
    lease_expires_at: Option<prost_types::Timestamp>,
    lease_duration: Duration,
    started_at: SystemTime,
    progress: MatchProgress,
    abort: Option<AbortHandle>,
    /// Played to the end, its result on the way to the manager: a renewal refused now most likely means
    /// the manager has recorded the result (the match is no longer running), so the report is left to
    /// finish and its answer decides (recorded, or LEASE_NOT_HELD if another referee took the match).
    reporting: bool,
}

/// A match's place in the registry; dropping it (the match's task ended, was aborted, or panicked)
/// removes the match.
#[derive(Debug)]
pub(crate) struct Registration {
    registry: RunningMatches,
    key: MatchKey,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut matches = self.registry.lock();
        if matches
            .get(&self.key)
            .is_some_and(|running| running.id == self.id)
        {
            matches.remove(&self.key);
        }
    }
}

impl Registration {
    pub(crate) fn key(&self) -> &MatchKey {
        &self.key
    }

    /// Marks the match as played to the end, its result being reported (see `Running::reporting`).
    pub(crate) fn reporting(&self) {
        if let Some(running) = self
            .registry
            .lock()
            .get_mut(&self.key)
            .filter(|running| running.id == self.id)
        {
            running.reporting = true;
        }
    }
}

impl RunningMatches {
    pub fn new() -> RunningMatches {
        RunningMatches::default()
    }

    /// Every running match, ordered by league and match id.
    pub fn list(&self) -> Vec<RunningMatch> {
        let matches = self.lock();
        let mut keys: Vec<_> = matches.keys().collect();
        keys.sort();
        keys.into_iter()
            .filter_map(|key| matches.get(key))
            .map(Running::summary)
            .collect()
    }

    /// One running match and its transcript so far. An empty `league_id` matches any league.
    pub fn get(&self, league_id: &str, match_id: &str) -> Option<(RunningMatch, MatchTranscript)> {
        let matches = self.lock();
        matches
            .iter()
            .filter(|(key, _)| {
                key.match_id == match_id && (league_id.is_empty() || key.league_id == league_id)
            })
            .min_by_key(|(key, _)| *key)
            .map(|(_, running)| (running.summary(), running.progress.transcript(match_id)))
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a claimed match; it stays until the returned registration is dropped or its lease is lost.
    pub(crate) fn register(
        &self,
        assignment: &Assignment,
        lease_duration: Duration,
        progress: MatchProgress,
    ) -> Registration {
        let scheduled = assignment.scheduled.clone();
        let key = MatchKey {
            league_id: scheduled.league_id.clone(),
            match_id: scheduled.match_id.clone(),
        };
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let running = Running {
            id,
            scheduled,
            lease_id: assignment.lease.lease_id.clone(),
            lease_expires_at: assignment.lease.expires_at.map(prost_types::Timestamp::from),
            lease_duration,
            started_at: SystemTime::now(),
            progress,
            abort: None,
            reporting: false,
        };
        if let Some(replaced) = self.lock().insert(key.clone(), running) {
            // Claimed again after its lease was lost while the old task was still running: stop that one.
            if let Some(abort) = replaced.abort {
                abort.abort();
            }
        }
        self.inner.added.notify_one();
        Registration {
            registry: self.clone(),
            key,
            id,
        }
    }

    /// Gives the registry the means to stop the match's task. If the match is already gone (its lease was
    /// lost in between), the task is stopped at once.
    pub(crate) fn set_abort(&self, key: &MatchKey, abort: AbortHandle) {
        match self.lock().get_mut(key) {
            Some(running) => running.abort = Some(abort),
            None => abort.abort(),
        }
    }

    /// Waits until a match is added (returns at once if one was added since the last wait).
    pub(crate) async fn added(&self) {
        self.inner.added.notified().await;
    }

    /// How often to renew: a fifth of the shortest lease (`Timing::renewal_interval`); `None` with
    /// nothing running.
    pub(crate) fn renewal_interval(&self) -> Option<Duration> {
        self.lock()
            .values()
            .map(|running| Timing::renewal_interval(running.lease_duration))
            .min()
    }

    /// The leases of every running match, in a stable order.
    pub(crate) fn leases(&self) -> Vec<LeaseRef> {
        let matches = self.lock();
        let mut leases: Vec<_> = matches
            .iter()
            .map(|(key, running)| LeaseRef {
                match_id: key.match_id.clone(),
                lease_id: running.lease_id.clone(),
                league_id: key.league_id.clone(),
            })
            .collect();
        leases.sort_by(|a, b| (&a.league_id, &a.match_id).cmp(&(&b.league_id, &b.match_id)));
        leases
    }

    /// Applies the manager's answer to a renewal of `sent`: new expiries, and the matches whose lease
    /// was lost are stopped and removed, except those whose result is being reported. Returns the keys
    /// of the stopped matches.
    ///
    /// Each renewal is paired with the lease it answers by league and match id.
    pub(crate) fn apply_renewals(&self, sent: &[LeaseRef], renewals: &[LeaseRenewal]) -> Vec<MatchKey> {
        let mut stopped = Vec::new();
        let mut matches = self.lock();
        for renewal in renewals {
            let lease = sent
                .iter()
                .find(|lease| lease.match_id == renewal.match_id && lease.league_id == renewal.league_id);
            let Some(lease) = lease else {
                tracing::warn!(match_id = %renewal.match_id, "renewal for a lease we did not send");
                continue;
            };
            let key = MatchKey {
                league_id: lease.league_id.clone(),
                match_id: lease.match_id.clone(),
            };
            let Some(running) = matches
                .get_mut(&key)
                .filter(|running| running.lease_id == lease.lease_id)
            else {
                continue; // Finished meanwhile.
            };
            if renewal.renewed {
                running.lease_expires_at = renewal.lease_expires_at.or(running.lease_expires_at);
            } else if running.reporting {
                tracing::debug!(league_id = %key.league_id, match_id = %key.match_id,
                    "lease not renewed while its result is reported: the report's answer decides");
            } else if let Some(lost) = matches.remove(&key) {
                tracing::warn!(
                    league_id = %key.league_id,
                    match_id = %key.match_id,
                    "lease lost: another referee owns the match now; stopping it"
                );
                if let Some(abort) = lost.abort {
                    abort.abort();
                }
                stopped.push(key);
            }
        }
        stopped
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<MatchKey, Running>> {
        self.inner.matches.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Running {
    fn summary(&self) -> RunningMatch {
        RunningMatch {
            r#match: Some(self.scheduled.clone()),
            state: league_proto::v2::MatchState::from(self.progress.state()).into(),
            started_at: Some(self.started_at.into()),
            lease_expires_at: self.lease_expires_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assignment(league_id: &str, match_id: &str, lease_id: &str) -> Assignment {
        crate::test_support::assignment(league_id, match_id, lease_id, "")
    }

    fn renewal(match_id: &str, renewed: bool) -> LeaseRenewal {
        LeaseRenewal {
            match_id: match_id.into(),
            league_id: "l1".into(),
            renewed,
            lease_expires_at: None,
        }
    }

    #[test]
    fn a_registration_removes_its_match_when_dropped() {
        let running = RunningMatches::new();
        let registration = running.register(
            &assignment("l1", "R1M1", "lease-1"),
            Duration::from_secs(30),
            MatchProgress::new(),
        );
        assert_eq!(running.len(), 1);
        assert_eq!(running.renewal_interval(), Some(Duration::from_secs(6)));
        let (summary, transcript) = running.get("", "R1M1").expect("running");
        assert_eq!(summary.r#match.map(|m| m.league_id), Some("l1".to_owned()));
        assert_eq!(transcript.match_id, "R1M1");
        assert!(running.get("l2", "R1M1").is_none());
        drop(registration);
        assert!(running.is_empty());
        assert_eq!(running.renewal_interval(), None);
    }

    #[test]
    fn a_stale_registration_does_not_remove_a_newer_claim() {
        let running = RunningMatches::new();
        let old = running.register(
            &assignment("l1", "R1M1", "lease-1"),
            Duration::from_secs(30),
            MatchProgress::new(),
        );
        let _new = running.register(
            &assignment("l1", "R1M1", "lease-2"),
            Duration::from_secs(30),
            MatchProgress::new(),
        );
        drop(old);
        assert_eq!(
            running.leases().first().map(|lease| lease.lease_id.clone()),
            Some("lease-2".to_owned())
        );
    }

    #[tokio::test]
    async fn a_lost_lease_stops_and_removes_its_match() {
        let running = RunningMatches::new();
        let _kept = running.register(
            &assignment("l1", "R1M1", "a"),
            Duration::from_secs(3),
            MatchProgress::new(),
        );
        let lost = running.register(
            &assignment("l1", "R1M2", "b"),
            Duration::from_secs(3),
            MatchProgress::new(),
        );
        let task = tokio::spawn(std::future::pending::<()>());
        running.set_abort(lost.key(), task.abort_handle());
        let sent = running.leases();
        // Out of order on purpose: renewals are paired by league and match id.
        let stopped = running.apply_renewals(&sent, &[renewal("R1M2", false), renewal("R1M1", true)]);
        assert_eq!(
            stopped
                .iter()
                .map(|key| key.match_id.as_str())
                .collect::<Vec<_>>(),
            ["R1M2"]
        );
        assert!(task.await.expect_err("aborted").is_cancelled());
        assert_eq!(running.list().len(), 1);
        // Setting an abort handle for a match already gone stops that task at once.
        let late = tokio::spawn(std::future::pending::<()>());
        running.set_abort(lost.key(), late.abort_handle());
        assert!(late.await.expect_err("aborted").is_cancelled());
    }

    #[tokio::test]
    async fn a_refused_renewal_leaves_a_match_whose_result_is_being_reported() {
        let running = RunningMatches::new();
        let reporting = running.register(
            &assignment("l1", "R1M1", "a"),
            Duration::from_secs(3),
            MatchProgress::new(),
        );
        let task = tokio::spawn(std::future::pending::<()>());
        running.set_abort(reporting.key(), task.abort_handle());
        reporting.reporting();
        let sent = running.leases();
        // The manager recorded the result a moment before the renewal: the match is no longer running.
        let stopped = running.apply_renewals(&sent, &[renewal("R1M1", false)]);
        assert!(stopped.is_empty());
        assert_eq!(
            running.list().len(),
            1,
            "still listed until its report is answered"
        );
        assert!(!task.is_finished(), "the report goes on");
        drop(reporting);
        assert!(running.is_empty());
        task.abort();
    }
}
