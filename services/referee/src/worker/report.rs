//! Telling the manager how a match ended: its result, kept until the manager takes it, or, for a match
//! that could not be played to the end, its lease given back.
//!
//! A match already played must not be played again because the manager was away for a while (restarting,
//! its database restarting, a network hiccup). So a transient failure (UNAVAILABLE and the like, or a
//! retryable league code) is retried with an exponential backoff, capped, with jitter, and without a
//! limit on attempts: for as long as the lease (which the worker keeps renewing meanwhile) and beyond it.
//! The manager accepts a report under an expired lease that nobody claimed again; what ends the retries
//! is the manager's answer, not a count:
//!
//! - recorded (or a duplicate of what it already recorded): done;
//! - E015 LEASE_NOT_HELD: the lease went to another referee, which plays the match again; the result is
//!   dropped (a refused renewal does not stop this task: while a result is reported, it most likely
//!   means the manager recorded it already, so the report's answer decides);
//! - any other refusal: logged and dropped — sending the same request again cannot change the answer;
//! - shutdown: the worker stops the task once its grace has passed.

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{LeaseRef, ReleaseLeasesRequest};
use league_proto::{ErrorCode, error_code};
use league_runtime::Credentials;
use league_runtime::grpc::GrpcChannel;
use tonic::Status;

use super::WorkerConfig;
use super::encoded_report::EncodedReport;
use super::report_batches::Reports;
use crate::metrics;
use crate::runner::{miss, spans};

/// The most a release takes, retries included: on shutdown, the default grace (25 s) plus this stays
/// under the 30 s an orchestrator waits before SIGKILL.
const RELEASE_WITHIN: Duration = Duration::from_secs(3);

/// The backoff between report attempts: from `report_backoff`, doubling, up to `report_max_backoff`,
/// with jitter so that referees reporting after the same outage do not all arrive at once.
pub(super) fn backoff(config: &WorkerConfig) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(config.report_backoff)
        .with_max_delay(config.report_max_backoff.max(config.report_backoff))
        .with_jitter()
        .without_max_times()
}

/// Whether a failed report is worth sending again.
fn worth_retrying(status: &Status) -> bool {
    error_code::code_of(status) != Some(ErrorCode::LeaseNotHeld) && miss::is_transient(status)
}

/// Reports `report` (the match `match_id`'s, encoded: crate::worker::encoded_report) until the manager
/// takes it or refuses it for good, with the other reports ready at the same moment
/// (crate::worker::report_batches). Every attempt sends the same bytes.
pub(super) async fn report_result(
    reports: Reports,
    config: &WorkerConfig,
    match_id: String,
    report: EncodedReport,
) {
    let send = || {
        let reports = reports.clone();
        let report = report.clone();
        async move { reports.report(report).await }
    };
    let outcome = send
        .retry(backoff(config))
        .when(worth_retrying)
        .notify(|status: &Status, after| {
            metrics::report_retried();
            spans::record_error(&tracing::Span::current(), status.message());
            tracing::warn!(%match_id, %status, ?after, "reporting the result failed; keeping it and retrying");
        })
        .await;
    match outcome {
        Ok(response) => {
            let duplicate = response.duplicate;
            tracing::info!(%match_id, duplicate, "result reported");
        }
        Err(status) if error_code::code_of(&status) == Some(ErrorCode::LeaseNotHeld) => {
            spans::record_error(&tracing::Span::current(), status.message());
            tracing::warn!(%match_id, %status, "lease lost before the report: another referee owns the match now");
        }
        Err(status) => {
            spans::record_error(&tracing::Span::current(), status.message());
            tracing::error!(%match_id, %status, "the manager refused the result; dropping it");
        }
    }
}

/// Gives `leases` back to the manager, so their matches are ready for another referee at once. Retried
/// briefly on transient failures, for at most [`RELEASE_WITHIN`]; if it still fails, the leases simply
/// expire.
pub(super) async fn release(
    manager: &ManagerServiceClient<GrpcChannel>,
    credentials: &Credentials,
    config: &WorkerConfig,
    leases: Vec<LeaseRef>,
) {
    if leases.is_empty() {
        return;
    }
    let asked = leases.len();
    let send = || {
        let mut manager = manager.clone();
        let mut request = credentials.request(ReleaseLeasesRequest {
            leases: leases.clone(),
            ..ReleaseLeasesRequest::default()
        });
        request.set_timeout(config.call_timeout.min(RELEASE_WITHIN));
        async move { manager.release_leases(request).await }
    };
    let releasing = send
        .retry(backoff(config).with_max_times(2))
        .when(miss::is_transient)
        .notify(|status: &Status, after| {
            tracing::warn!(%status, ?after, "releasing leases failed; retrying");
        });
    match tokio::time::timeout(RELEASE_WITHIN, releasing).await {
        Ok(Ok(response)) => {
            let released = response.into_inner().released;
            for lease in &released {
                tracing::info!(league_id = %lease.league_id, match_id = %lease.match_id, "lease released");
            }
            if released.len() < asked {
                tracing::info!(
                    asked,
                    released = released.len(),
                    "some leases were no longer ours (finished or taken over)"
                );
            }
        }
        Ok(Err(status)) => {
            tracing::warn!(%status, leases = asked, "releasing leases failed; they will expire instead");
        }
        Err(_) => tracing::warn!(
            leases = asked,
            "releasing leases timed out; they will expire instead"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_failures_are_retried_a_lost_lease_and_refusals_are_not() {
        assert!(worth_retrying(&Status::unavailable("manager restarting")));
        assert!(worth_retrying(&error_code::status(
            ErrorCode::ConnectionError,
            "database restarting"
        )));
        assert!(!worth_retrying(&error_code::status(
            ErrorCode::LeaseNotHeld,
            "REF02 holds it"
        )));
        assert!(!worth_retrying(&error_code::status(
            ErrorCode::InvalidMessageFormat,
            "scores disagree"
        )));
    }

    #[test]
    fn the_backoff_never_runs_out() {
        let config = WorkerConfig::default();
        let mut delays = backon::BackoffBuilder::build(backoff(&config));
        for _ in 0..1000 {
            let delay = delays.next().expect("no limit on attempts");
            assert!(delay <= config.report_max_backoff * 2, "{delay:?}");
        }
    }
}
