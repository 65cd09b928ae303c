//! The referee's worker: claims matches from the manager under a lease, runs each in its own task,
//! reports the result, and keeps the leases of running matches alive.
//!
//! - Claiming: `ClaimMatches{max_matches: capacity, wait}` (a long poll) whenever a slot is free; the
//!   manager hands out no more than the slots it counts free (capacity minus the leases the referee
//!   holds), so the matches running at once stay within `capacity` but for a match whose result is
//!   recorded and whose task has not yet ended.
//! - Reporting: the result with the transcript, kept and retried until the manager takes it (see
//!   [`report`]), sent with the other reports ready at the same moment in one `ReportMatchResults`
//!   (see [`report_batches`]); E015 LEASE_NOT_HELD means another referee owns the match now, so the
//!   result is dropped. A match interrupted by an outage of the league's own services has no result:
//!   its lease is given back at once, so that it is played again (see [`crate::runner::outage`]).
//! - Leases: one `RenewLeases` for every running match each fifth of the shortest lease; a match whose
//!   renewal comes back `renewed = false` is aborted at once and never reported (its new holder runs it).
//!   Once a match is played to the end and its result is being reported, a refused renewal stops
//!   nothing: the manager has most likely recorded the result already (the match is no longer running),
//!   and the report's own answer says what happened.
//! - Shutdown (SIGTERM): claiming stops at once. A claim already in flight is still answered (within
//!   the claim wait) and whatever it hands out is released straight back. Running matches get the
//!   shutdown grace to finish and report, their leases still renewed; the ones still running after it are
//!   stopped and released with `ReleaseLeases`, so another referee claims them at once instead of after
//!   their leases expire. Then [`Worker::run`] returns: no match stays leased to a referee that is gone.

mod encoded_report;
mod registry;
mod report;
mod report_batches;

use std::pin::Pin;
use std::time::{Duration, SystemTime};

use league_domain::{Assignment, Timing};
use league_proto::error_code;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{
    ClaimMatchesRequest, LeaseRef, MatchAssignment, MatchResult, RenewLeasesRequest, ReportMatchResultRequest,
};
use league_runtime::grpc::GrpcChannel;
use league_runtime::{Credentials, Revoked, ShutdownSignal};
use serde::Deserialize;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tracing::Instrument;
use tracing::field::Empty;

use encoded_report::EncodedReport;
pub use registry::RunningMatches;
use report_batches::{ReportQueue, Reports};

use crate::chance::OsChance;
use crate::runner::{GrpcPlayers, MatchProgress, PlayerChannels, match_span, play_match};

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
    /// Pause after the first failed report (or release) attempt; doubles after each.
    #[serde(with = "humantime_serde")]
    pub report_backoff: Duration,
    /// The longest pause between two report attempts. A report is retried until the manager takes it.
    #[serde(with = "humantime_serde")]
    pub report_max_backoff: Duration,
    /// The lease length assumed when an assignment gives neither `timing.lease_duration` nor a usable
    /// `lease_expires_at`; by default the league's (league_domain::Timing).
    #[serde(with = "humantime_serde")]
    pub default_lease_duration: Duration,
    /// After shutdown begins, how long running matches may take to finish before they are released.
    #[serde(with = "humantime_serde")]
    pub shutdown_grace: Duration,
}

impl Default for WorkerConfig {
    fn default() -> WorkerConfig {
        WorkerConfig {
            capacity: 1,
            game_types: Vec::new(),
            claim_wait: Duration::from_secs(1),
            call_timeout: Duration::from_secs(10),
            report_backoff: Duration::from_millis(500),
            report_max_backoff: Duration::from_secs(5),
            default_lease_duration: Timing::default().lease_duration,
            shutdown_grace: Duration::from_secs(25),
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
    manager: ManagerServiceClient<GrpcChannel>,
    /// The channel to the manager, which the worker's report sender calls on.
    manager_channel: GrpcChannel,
    reports: Reports,
    /// What the report sender takes the reports from, until [`Worker::run`] starts it.
    report_queue: Option<ReportQueue>,
    credentials: Credentials,
    config: WorkerConfig,
    channels: PlayerChannels,
    running: RunningMatches,
}

impl Worker {
    /// A worker calling the manager on `manager`.
    pub fn new(manager: GrpcChannel, credentials: Credentials, config: WorkerConfig) -> Worker {
        let (reports, report_queue) = Reports::new();
        Worker {
            reports,
            report_queue: Some(report_queue),
            manager: ManagerServiceClient::new(manager.clone()),
            manager_channel: manager,
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

    /// Claims and runs matches until `shutdown`, then lets the running ones finish and report within the
    /// shutdown grace, and releases the ones that did not. A referee the operator revoked stops at its
    /// next claim (ADR 0082): the manager has handed its matches on already, so they are stopped at
    /// once, and the worker ends in [`Revoked`].
    pub async fn run(mut self, shutdown: ShutdownSignal) -> Result<(), Revoked> {
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
        // Lives as long as the worker: the matches still reporting at shutdown report within the grace.
        let _report_sender = self.report_queue.take().map(|queue| {
            AbortOnDrop(tokio::spawn(report_batches::send(
                queue,
                self.manager_channel.clone(),
                self.credentials.clone(),
                self.config.call_timeout,
            )))
        });
        let mut tasks = JoinSet::new();
        // A claim still waiting for its answer when shutdown began.
        let mut in_flight = None;
        let mut revoked = false;
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
            // Asks for every slot, not only the ones free now: a claim often waits (a long poll) from
            // the moment a round's first match ends until the next round is released, and by then the
            // round's other matches have ended too. The manager caps the claim at the slots it counts
            // free when it looks (the referee's capacity minus the leases it holds), so the claim
            // answered at the release takes what the referee can run then, instead of the one slot that
            // was free when it asked.
            let asked = capacity;
            let asked_at = Instant::now();
            let mut claim = Box::pin(self.claim(asked));
            let claimed = tokio::select! {
                claimed = &mut claim => Some(claimed),
                () = shutdown.clone().wait() => None,
            };
            let Some(claimed) = claimed else {
                in_flight = Some(claim);
                break;
            };
            let assignments = match claimed {
                Ok(assignments) => assignments,
                Err(status) if error_code::is_revoked(&status) => {
                    tracing::error!(%status, "revoked by the operator: this referee stops");
                    tasks.abort_all();
                    revoked = true;
                    break;
                }
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
            for (index, assignment) in assignments.into_iter().filter_map(parse).enumerate() {
                if index >= asked {
                    tracing::error!(
                        match_id = %assignment.match_id(),
                        "the manager assigned more matches than asked for; leaving this one to expire"
                    );
                    continue;
                }
                // Started even when it takes the running matches past capacity: the manager counted its
                // slot free because a match's result is recorded while the match's task is still
                // taking the report's answer. The overlap lasts that long.
                self.start(&mut tasks, assignment);
            }
        }
        self.stop(tasks, in_flight).await;
        tracing::info!("referee worker stopped");
        if revoked {
            return Err(Revoked {
                agent_id: self.credentials.agent_id.clone(),
            });
        }
        Ok(())
    }

    /// Takes the answer of `in_flight` and gives back what it handed out, and lets `tasks` finish within
    /// the shutdown grace, releasing the ones that did not.
    async fn stop<F>(&self, mut tasks: JoinSet<()>, in_flight: Option<Pin<Box<F>>>)
    where
        F: Future<Output = Result<Vec<MatchAssignment>, tonic::Status>>,
    {
        let grace = self.config.shutdown_grace;
        tracing::info!(
            running = tasks.len(),
            ?grace,
            "referee worker stopping: finishing running matches"
        );
        // Both at once, so that the grace counts from the shutdown.
        let give_back_claim = async {
            // Dropping a claim in flight could leave matches the manager has just leased to us with
            // nobody running them until their leases expire: take its answer (it comes within the claim
            // wait) and give every match in it straight back.
            if let Some(claim) = in_flight
                && let Ok(assignments) = claim.await
            {
                let leases = assignments
                    .into_iter()
                    .filter_map(parse)
                    .map(|a| lease_of(&a))
                    .collect();
                self.release(leases).await;
            }
        };
        let finish_running = async {
            let finished = tokio::time::timeout(grace, async {
                while let Some(ended) = tasks.join_next().await {
                    log_task_end(ended);
                }
            })
            .await;
            if finished.is_err() {
                // Taken before the tasks stop: a stopped match leaves the registry.
                let leases = self.running.leases();
                tracing::warn!(
                    running = leases.len(),
                    ?grace,
                    "matches still running after the shutdown grace: stopping and releasing them"
                );
                tasks.abort_all();
                while let Some(ended) = tasks.join_next().await {
                    log_task_end(ended);
                }
                self.release(leases).await;
            }
        };
        tokio::join!(give_back_claim, finish_running);
    }

    /// Gives `leases` back to the manager (see [`report::release`]).
    async fn release(&self, leases: Vec<LeaseRef>) {
        report::release(&self.manager, &self.credentials, &self.config, leases).await;
    }

    async fn claim(&self, max: usize) -> Result<Vec<MatchAssignment>, tonic::Status> {
        let wait = self.config.claim_wait;
        let mut request = self.credentials.request(ClaimMatchesRequest {
            max_matches: u32::try_from(max).unwrap_or(u32::MAX),
            wait: prost_types::Duration::try_from(wait).ok(),
        });
        request.set_timeout(wait + self.config.call_timeout);
        let response = self.manager.clone().claim_matches(request).await?;
        Ok(response.into_inner().assignments)
    }

    /// Runs `assignment` in a task of `tasks`, registered as running until the task ends.
    fn start(&self, tasks: &mut JoinSet<()>, assignment: Assignment) {
        let scheduled = &assignment.scheduled;
        if !self.config.game_types.is_empty() && !self.config.game_types.contains(&scheduled.game_type) {
            tracing::warn!(
                match_id = %scheduled.match_id,
                game_type = %scheduled.game_type,
                "assigned a game type this referee did not register for"
            );
        }
        let progress = MatchProgress::new();
        let lease_duration = self.lease_duration(&assignment);
        let registration = self
            .running
            .register(&assignment, lease_duration, progress.clone());
        let key = registration.key().clone();
        let players = GrpcPlayers::for_assignment(&self.channels, &assignment);
        let manager = self.manager.clone();
        let reports = self.reports.clone();
        let credentials = self.credentials.clone();
        let config = self.config.clone();
        // The root of this match's trace: everything below, here and in the services it calls, is in it.
        let span = match_span(&assignment, &credentials.agent_id);
        span.in_scope(|| tracing::info!("match claimed"));
        let abort = tasks.spawn(
            async move {
                let mut chance = OsChance;
                let played = play_match(
                    &assignment,
                    &players,
                    &mut chance,
                    &credentials.agent_id,
                    &progress,
                )
                .await;
                let result = match played {
                    Ok(result) => result,
                    Err(_interrupted) => {
                        // No result and nobody charged: the match goes back to the queue at once.
                        report::release(&manager, &credentials, &config, vec![lease_of(&assignment)]).await;
                        return;
                    }
                };
                registration.reporting();
                let request = report_request(&assignment, result);
                let match_id = request.match_id.clone();
                let encoded = EncodedReport::new(request, &progress);
                report::report_result(reports, &config, match_id, encoded)
                    .instrument(tracing::info_span!(
                        "report",
                        otel.status_code = Empty,
                        otel.status_description = Empty
                    ))
                    .await;
            }
            .instrument(span),
        );
        self.running.set_abort(&key, abort);
    }

    /// The assignment's lease length: from its timing, else from its expiry, else the configured default.
    fn lease_duration(&self, assignment: &Assignment) -> Duration {
        assignment
            .lease
            .duration
            .or_else(|| {
                assignment
                    .lease
                    .expires_at?
                    .duration_since(SystemTime::now())
                    .ok()
                    .filter(|left| !left.is_zero())
            })
            .unwrap_or(self.config.default_lease_duration)
    }
}

/// The report of `assignment`'s match with its `result`, its transcript still to be added
/// (crate::worker::encoded_report).
fn report_request(assignment: &Assignment, result: MatchResult) -> ReportMatchResultRequest {
    let lease = lease_of(assignment);
    ReportMatchResultRequest {
        league_id: lease.league_id,
        match_id: lease.match_id,
        lease_id: lease.lease_id,
        result: Some(result),
        transcript: None,
    }
}

/// The lease an assignment was handed out under.
fn lease_of(assignment: &Assignment) -> LeaseRef {
    LeaseRef {
        match_id: assignment.match_id().to_string(),
        lease_id: assignment.lease.lease_id.clone(),
        league_id: assignment.league_id().to_string(),
    }
}

/// The assignment the manager sent, parsed; one that cannot be run is logged and left to expire (the
/// manager never sends one: this guards against a manager of another version).
fn parse(assignment: MatchAssignment) -> Option<Assignment> {
    Assignment::try_from(assignment)
        .inspect_err(|error| tracing::error!(%error, "cannot run this assignment; leaving it to expire"))
        .ok()
}

/// Renews the leases of every running match each fifth of the shortest lease; stops the matches whose
/// lease was lost. Runs until aborted.
async fn renew_leases(
    mut manager: ManagerServiceClient<GrpcChannel>,
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
            ..RenewLeasesRequest::default()
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
