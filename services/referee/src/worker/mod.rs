//! The referee's worker: claims matches from the manager under a lease, runs each in its own task,
//! reports the result, and keeps the leases of running matches alive.
//!
//! - Claiming: `ClaimMatches{max_matches: free slots, wait}` (a long poll) whenever a slot is free; never
//!   more than `capacity` matches at once.
//! - Reporting: `ReportMatchResult` with the transcript, retried with a doubling backoff on transient
//!   failures (UNAVAILABLE and the like); E015 LEASE_NOT_HELD means another referee owns the match now,
//!   so the result is dropped; any other refusal is logged and dropped.
//! - Leases: one `RenewLeases` for every running match each third of the shortest lease; a match whose
//!   renewal comes back `renewed = false` is aborted at once and never reported (its new holder runs it).
//! - Shutdown: claiming stops (a claim in flight is abandoned: its leases expire and the matches go to
//!   another referee); running matches finish — they are bounded by their timeouts — and are reported,
//!   with their leases still renewed; then [`Worker::run`] returns.

mod registry;

use std::time::{Duration, SystemTime};

use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{ClaimMatchesRequest, MatchAssignment, RenewLeasesRequest, ReportMatchResultRequest};
use league_proto::{ErrorCode, error_code};
use league_runtime::{Credentials, ShutdownSignal};
use serde::Deserialize;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tonic::transport::Channel;

pub use registry::RunningMatches;

use crate::chance::OsChance;
use crate::runner::{GrpcPlayers, MatchProgress, MatchReport, PlayerChannels, miss, run_match_with_progress};
use crate::timing::Timing;

/// How a worker claims, reports and renews. Deserializable (durations in humantime, e.g. `"1s"`); every
/// field has a default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WorkerConfig {
    /// Matches run at once (at least 1).
    pub capacity: u32,
    /// The game types this referee registered for. An assignment of another type is run anyway if an
    /// engine exists (and logged): the manager should not have sent it.
    pub game_types: Vec<String>,
    /// How long a claim waits for a ready match (the manager's long poll).
    #[serde(with = "humantime_serde")]
    pub claim_wait: Duration,
    /// Bound on a manager call, on top of the claim wait for claims.
    #[serde(with = "humantime_serde")]
    pub call_timeout: Duration,
    /// Attempts to report one result.
    pub report_attempts: u32,
    /// Pause after the first failed report attempt; doubles after each.
    #[serde(with = "humantime_serde")]
    pub report_backoff: Duration,
    /// The lease length assumed when an assignment gives neither `timing.lease_duration` nor a usable
    /// `lease_expires_at`.
    #[serde(with = "humantime_serde")]
    pub default_lease_duration: Duration,
}

impl Default for WorkerConfig {
    fn default() -> WorkerConfig {
        WorkerConfig {
            capacity: 1,
            game_types: Vec::new(),
            claim_wait: Duration::from_secs(1),
            call_timeout: Duration::from_secs(10),
            report_attempts: 5,
            report_backoff: Duration::from_millis(500),
            default_lease_duration: Duration::from_secs(30),
        }
    }
}

impl WorkerConfig {
    /// The defaults, with `capacity` and `game_types`.
    pub fn new(capacity: u32, game_types: impl IntoIterator<Item = impl Into<String>>) -> WorkerConfig {
        WorkerConfig {
            capacity,
            game_types: game_types.into_iter().map(Into::into).collect(),
            ..WorkerConfig::default()
        }
    }
}

/// One referee's match loop. See the module documentation.
#[derive(Debug)]
pub struct Worker {
    manager: ManagerServiceClient<Channel>,
    credentials: Credentials,
    config: WorkerConfig,
    channels: PlayerChannels,
    running: RunningMatches,
}

impl Worker {
    pub fn new(
        manager: ManagerServiceClient<Channel>,
        credentials: Credentials,
        config: WorkerConfig,
    ) -> Worker {
        Worker {
            manager,
            credentials,
            config,
            channels: PlayerChannels::new(),
            running: RunningMatches::new(),
        }
    }

    /// The registry of running matches, for `RefereeService`.
    pub fn running_matches(&self) -> RunningMatches {
        self.running.clone()
    }

    /// The channels to player hosts, shared by every match this worker runs.
    pub fn player_channels(&self) -> PlayerChannels {
        self.channels.clone()
    }

    /// Claims and runs matches until `shutdown`, then lets the running ones finish and report.
    pub async fn run(self, shutdown: ShutdownSignal) {
        let capacity = usize::try_from(self.config.capacity.max(1)).unwrap_or(1);
        tracing::info!(referee_id = %self.credentials.agent_id, capacity, "referee worker started");
        // Aborted when this future is dropped, too: a worker that dies must stop renewing, or its
        // matches would stay leased forever instead of going back to the queue.
        let _renewals = AbortOnDrop(tokio::spawn(renew_leases(
            self.manager.clone(),
            self.credentials.clone(),
            self.running.clone(),
            self.config.call_timeout,
        )));
        let mut tasks = JoinSet::new();
        while !shutdown.is_triggered() {
            while let Some(ended) = tasks.try_join_next() {
                log_task_end(ended);
            }
            if tasks.len() >= capacity {
                tokio::select! {
                    ended = tasks.join_next() => {
                        if let Some(ended) = ended {
                            log_task_end(ended);
                        }
                        continue;
                    }
                    () = shutdown.clone().wait() => break,
                }
            }
            let free = capacity - tasks.len();
            let asked_at = Instant::now();
            let claimed = tokio::select! {
                claimed = self.claim(free) => claimed,
                () = shutdown.clone().wait() => break,
            };
            let assignments = match claimed {
                Ok(assignments) => assignments,
                Err(status) => {
                    tracing::warn!(%status, "claiming matches failed");
                    Vec::new()
                }
            };
            if assignments.is_empty() {
                // However quickly the manager answered, do not ask again before a claim wait has passed.
                tokio::select! {
                    () = tokio::time::sleep_until(asked_at + self.config.claim_wait) => {}
                    () = shutdown.clone().wait() => break,
                }
            }
            for assignment in assignments {
                if tasks.len() >= capacity {
                    tracing::error!(
                        match_id = ?assignment.r#match.as_ref().map(|m| &m.match_id),
                        "the manager assigned more matches than asked for; leaving this one to expire"
                    );
                    continue;
                }
                self.start(&mut tasks, assignment);
            }
        }
        tracing::info!(
            running = tasks.len(),
            "referee worker stopping: finishing running matches"
        );
        while let Some(ended) = tasks.join_next().await {
            log_task_end(ended);
        }
        tracing::info!("referee worker stopped");
    }

    async fn claim(&self, free: usize) -> Result<Vec<MatchAssignment>, tonic::Status> {
        let wait = self.config.claim_wait;
        let mut request = self.credentials.request(ClaimMatchesRequest {
            max_matches: u32::try_from(free).unwrap_or(u32::MAX),
            wait: prost_types::Duration::try_from(wait).ok(),
        });
        request.set_timeout(wait + self.config.call_timeout);
        let response = self.manager.clone().claim_matches(request).await?;
        Ok(response.into_inner().assignments)
    }

    /// Runs `assignment` in a task of `tasks`, registered as running until the task ends.
    fn start(&self, tasks: &mut JoinSet<()>, assignment: MatchAssignment) {
        let scheduled = assignment.r#match.clone().unwrap_or_default();
        if !self.config.game_types.is_empty() && !self.config.game_types.contains(&scheduled.game_type) {
            tracing::warn!(
                match_id = %scheduled.match_id,
                game_type = %scheduled.game_type,
                "assigned a game type this referee did not register for"
            );
        }
        tracing::info!(league_id = %scheduled.league_id, match_id = %scheduled.match_id, "match claimed");
        let progress = MatchProgress::new();
        let lease_duration = self.lease_duration(&assignment);
        let registration = self
            .running
            .register(&assignment, lease_duration, progress.clone());
        let key = registration.key().clone();
        let players = GrpcPlayers::for_assignment(&self.channels, &assignment);
        let manager = self.manager.clone();
        let credentials = self.credentials.clone();
        let config = self.config.clone();
        let abort = tasks.spawn(async move {
            let _registration = registration;
            let mut chance = OsChance;
            let report = run_match_with_progress(
                &assignment,
                &players,
                &mut chance,
                &credentials.agent_id,
                &progress,
            )
            .await;
            report_result(manager, &credentials, &config, &assignment, report).await;
        });
        self.running.set_abort(&key, abort);
    }

    /// The assignment's lease length: from its timing, else from its expiry, else the configured default.
    fn lease_duration(&self, assignment: &MatchAssignment) -> Duration {
        Timing::from_proto(assignment.timing.as_ref())
            .lease_duration
            .or_else(|| {
                let expires = SystemTime::try_from(assignment.lease_expires_at?).ok()?;
                expires
                    .duration_since(SystemTime::now())
                    .ok()
                    .filter(|left| !left.is_zero())
            })
            .unwrap_or(self.config.default_lease_duration)
    }
}

/// Reports a match's result, retrying transient failures with a doubling backoff.
async fn report_result(
    mut manager: ManagerServiceClient<Channel>,
    credentials: &Credentials,
    config: &WorkerConfig,
    assignment: &MatchAssignment,
    report: MatchReport,
) {
    let scheduled = assignment.r#match.clone().unwrap_or_default();
    let match_id = scheduled.match_id;
    let message = ReportMatchResultRequest {
        league_id: scheduled.league_id,
        match_id: match_id.clone(),
        lease_id: assignment.lease_id.clone(),
        result: Some(report.result),
        transcript: Some(report.transcript),
    };
    let attempts = config.report_attempts.max(1);
    let mut backoff = config.report_backoff;
    for attempt in 1..=attempts {
        let mut request = credentials.request(message.clone());
        request.set_timeout(config.call_timeout);
        let status = match manager.report_match_result(request).await {
            Ok(response) => {
                let duplicate = response.into_inner().duplicate;
                tracing::info!(%match_id, duplicate, "result reported");
                return;
            }
            Err(status) => status,
        };
        if error_code::code_of(&status) == Some(ErrorCode::LeaseNotHeld) {
            tracing::warn!(%match_id, %status, "lease lost before the report: another referee owns the match now");
            return;
        }
        if !miss::is_transient(&status) || attempt == attempts {
            tracing::error!(%match_id, attempt, %status, "reporting the result failed; giving up");
            return;
        }
        tracing::warn!(%match_id, attempt, %status, ?backoff, "reporting the result failed; retrying");
        tokio::time::sleep(backoff).await;
        backoff = backoff.saturating_mul(2);
    }
}

/// Renews the leases of every running match each third of the shortest lease; stops the matches whose
/// lease was lost. Runs until aborted.
async fn renew_leases(
    mut manager: ManagerServiceClient<Channel>,
    credentials: Credentials,
    running: RunningMatches,
    call_timeout: Duration,
) {
    let mut last = Instant::now();
    loop {
        let Some(interval) = running.renewal_interval() else {
            running.added().await;
            last = Instant::now();
            continue;
        };
        tokio::select! {
            () = tokio::time::sleep_until(last + interval) => {}
            // A new match may have a shorter lease: work the interval out again.
            () = running.added() => continue,
        }
        last = Instant::now();
        let leases = running.leases();
        if leases.is_empty() {
            continue;
        }
        let mut request = credentials.request(RenewLeasesRequest {
            leases: leases.clone(),
        });
        request.set_timeout(call_timeout.min(interval));
        match manager.renew_leases(request).await {
            Ok(response) => {
                let renewals = response.into_inner().renewals;
                let stopped = running.apply_renewals(&leases, &renewals);
                tracing::debug!(
                    renewed = leases.len() - stopped.len(),
                    stopped = stopped.len(),
                    "leases renewed"
                );
            }
            Err(status) => tracing::warn!(%status, "renewing leases failed; retrying at the next interval"),
        }
    }
}

fn log_task_end(ended: Result<(), tokio::task::JoinError>) {
    match ended {
        Ok(()) => {}
        Err(error) if error.is_cancelled() => tracing::debug!("match task stopped (lease lost)"),
        Err(error) => tracing::error!(%error, "match task panicked"),
    }
}

/// Aborts the task when dropped.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
