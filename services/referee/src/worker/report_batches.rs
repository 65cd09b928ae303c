//! A worker's reports, many to a request: `ReportMatchResults` carries the reports that are ready at
//! the same moment, each with the trace context of the match it reports (the manager serves each under
//! the span its own `ReportMatchResult` would have had, and answers each in its place).
//!
//! Why: one request a match was the last exchange a match made on its own. At 1,000 players a referee
//! reports a few thousand results a second, and each request cost both ends its HTTP/2 stream, headers,
//! authentication, a task and the wake-ups to carry them, for a message of a few kilobytes
//! (docs/adr/0097-reports-many-to-a-request.md).
//!
//! How: a match's task queues its report and waits for its answer ([`Reports::report`]); the sender
//! task takes whatever is queued, up to [`league_runtime::grpc::MAX_REPORTS`], sends it as one request,
//! and hands each answer back, with up to [`IN_FLIGHT`] requests out at once. While they are out, the
//! reports that become ready queue for the next, so a busy referee sends fewer, larger requests, and an
//! idle one sends each report at once. Nothing waits for a batch to fill. Each report keeps its own
//! retries (crate::worker::report): a failed request fails every report it carried, and each is sent
//! again on its own schedule. A manager that does not know `ReportMatchResults` (UNIMPLEMENTED, one that
//! predates it) gets each report as its own `ReportMatchResult` from then on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use league_proto::v2::report_answer::Answer;
use league_proto::v2::{ReportMatchResultResponse, ReportMatchResultsResponse};
use league_runtime::Credentials;
use league_runtime::grpc::{GrpcChannel, MAX_REPORTS, REPORT_MATCH_RESULTS, status_of};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tonic::client::Grpc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::{Code, GrpcMethod, Status};
use tonic_prost::ProstCodec;

use super::encoded_report::{EncodedReport, ReportClient};

/// What a report is answered with: what `ReportMatchResult` would have answered.
type Answered = Result<ReportMatchResultResponse, Status>;

/// A report waiting for the next request.
struct Queued {
    report: EncodedReport,
    traceparent: String,
    tracestate: String,
    answer: oneshot::Sender<Answered>,
}

/// Where a worker's match tasks hand their reports. Cheap to clone. Unbounded, yet it never holds more
/// than one report a match task still reporting: each queues its report and waits for the answer
/// before it queues it again (a retry).
#[derive(Debug, Clone)]
pub(super) struct Reports {
    queue: mpsc::UnboundedSender<Queued>,
}

/// The other end of [`Reports`]: what the sender task takes the queued reports from.
#[derive(Debug)]
pub(super) struct ReportQueue(mpsc::UnboundedReceiver<Queued>);

impl std::fmt::Debug for Queued {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Queued").finish_non_exhaustive()
    }
}

impl Reports {
    pub(super) fn new() -> (Reports, ReportQueue) {
        let (queue, queued) = mpsc::unbounded_channel();
        (Reports { queue }, ReportQueue(queued))
    }

    /// Sends `report` (made in the current span, the match's `report`) with the others ready now, and
    /// returns its answer. UNAVAILABLE when the sender task has stopped (the worker is stopping).
    pub(super) async fn report(&self, report: EncodedReport) -> Answered {
        let (traceparent, tracestate) = league_runtime::grpc::trace_context();
        let (answer, answered) = oneshot::channel();
        let queued = Queued {
            report,
            traceparent,
            tracestate,
            answer,
        };
        let stopped = || Status::unavailable("the referee's report sender has stopped");
        self.queue.send(queued).map_err(|_| stopped())?;
        answered.await.map_err(|_| stopped())?
    }
}

/// Sends the reports queued on `queue` until every [`Reports`] is dropped: the sender task of a worker,
/// calling the manager on `channel` as `credentials`, each request bounded by `call_timeout`.
pub(super) async fn send(
    ReportQueue(mut queue): ReportQueue,
    channel: GrpcChannel,
    credentials: Credentials,
    call_timeout: Duration,
) {
    let sender = Sender {
        batches: Grpc::new(channel.clone()),
        single: ReportClient::new(channel),
        credentials,
        call_timeout,
        batched: Arc::new(AtomicBool::new(true)),
    };
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut queued = Vec::new();
    loop {
        // A free place first, then whatever has queued by then: a request goes out as soon as it can.
        let Ok(place) = Arc::clone(&in_flight).acquire_owned().await else {
            return;
        };
        if queue.recv_many(&mut queued, MAX_REPORTS).await == 0 {
            return;
        }
        let reports = std::mem::take(&mut queued);
        let sender = sender.clone();
        tokio::spawn(async move {
            sender.send(reports).await;
            drop(place);
        });
    }
}

/// The most `ReportMatchResults` requests a worker has out at once. With one, each referee's reports
/// reached the manager as a burst of their own just after its previous one was answered, and the
/// manager's result writer recorded more, smaller batches (33 results a statement against 43.5 one
/// report a call, `pg_stat_statements` at 500 players); with four, the CPU a match at 500 players was
/// 0.355 ms against 0.387 one report a call (one run each). At 1,000 players one and four measured alike
/// (three alternated pairs: docs/adr/0097-reports-many-to-a-request.md).
const IN_FLIGHT: usize = 4;

/// What sends one request's reports: batched while the manager takes `ReportMatchResults`, one a call
/// once it has answered UNIMPLEMENTED. Cheap to clone.
#[derive(Debug, Clone)]
struct Sender {
    batches: Grpc<GrpcChannel>,
    single: ReportClient,
    credentials: Credentials,
    call_timeout: Duration,
    batched: Arc<AtomicBool>,
}

impl Sender {
    async fn send(mut self, reports: Vec<Queued>) {
        if self.batched.load(Ordering::Relaxed) {
            match send_batch(&mut self.batches, &self.credentials, self.call_timeout, &reports).await {
                Err(status) if status.code() == Code::Unimplemented => {
                    tracing::warn!(%status, "the manager takes no ReportMatchResults: reporting one result a call");
                    self.batched.store(false, Ordering::Relaxed);
                }
                answered => return answer(reports, answered),
            }
        }
        let singles = reports.into_iter().map(|queued| {
            let mut single = self.single.clone();
            let mut request = self.credentials.request(queued.report);
            request.set_timeout(self.call_timeout);
            async move {
                let answered = single.report(request).await.map(tonic::Response::into_inner);
                let _ = queued.answer.send(answered);
            }
        });
        futures::future::join_all(singles).await;
    }
}

/// Hands each of `reports` its answer: its place's in `answered`, or the request's failure.
fn answer(reports: Vec<Queued>, answered: Result<Vec<Answered>, Status>) {
    match answered {
        Ok(answers) => {
            for (queued, answer) in reports.into_iter().zip(answers) {
                // A report's task that stopped waiting (its match was stopped) takes no answer.
                let _ = queued.answer.send(answer);
            }
        }
        Err(status) => {
            for queued in reports {
                let _ = queued.answer.send(Err(status.clone()));
            }
        }
    }
}

/// One `ReportMatchResults` request of `reports`: each one's answer, in their order.
async fn send_batch(
    grpc: &mut Grpc<GrpcChannel>,
    credentials: &Credentials,
    call_timeout: Duration,
    reports: &[Queued],
) -> Result<Vec<Answered>, Status> {
    let batch = EncodedReports {
        reports: reports
            .iter()
            .map(|queued| EncodedReported {
                traceparent: queued.traceparent.clone(),
                tracestate: queued.tracestate.clone(),
                report: queued.report.bytes(),
            })
            .collect(),
    };
    grpc.ready()
        .await
        .map_err(|error| Status::unknown(format!("Service was not ready: {error}")))?;
    let mut request = credentials.request(batch);
    request.set_timeout(call_timeout);
    request
        .extensions_mut()
        .insert(GrpcMethod::new("league.v2.ManagerService", "ReportMatchResults"));
    let codec = ProstCodec::<EncodedReports, ReportMatchResultsResponse>::default();
    let answers = grpc
        .unary(request, PathAndQuery::from_static(REPORT_MATCH_RESULTS), codec)
        .await?
        .into_inner()
        .answers;
    if answers.len() != reports.len() {
        return Err(Status::internal(format!(
            "the manager answered {} of {} reports",
            answers.len(),
            reports.len()
        )));
    }
    Ok(answers
        .into_iter()
        .map(|answer| match answer.answer {
            Some(Answer::Recorded(recorded)) => Ok(recorded),
            Some(Answer::Failure(failure)) => Err(status_of(failure)),
            None => Err(Status::internal("the manager answered a report with nothing")),
        })
        .collect())
}

/// `league.v2.ReportMatchResultsRequest` with each report as the bytes it was encoded into once
/// ([`EncodedReport`]): the same wire.
#[derive(Clone, PartialEq, prost::Message)]
struct EncodedReports {
    #[prost(message, repeated, tag = "1")]
    reports: Vec<EncodedReported>,
}

/// `league.v2.ReportedMatch` with its report's bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct EncodedReported {
    #[prost(string, tag = "1")]
    traceparent: String,
    #[prost(string, tag = "2")]
    tracestate: String,
    #[prost(bytes = "bytes", tag = "3")]
    report: Bytes,
}

#[cfg(test)]
mod tests {
    use league_proto::v2::manager_service_server::{self, ManagerService};
    use league_proto::v2::*;
    use prost::Message;

    use super::*;

    #[test]
    fn the_encoded_batch_decodes_as_the_contracts_request() {
        let report = |n: u32| ReportMatchResultRequest {
            league_id: "league".into(),
            match_id: format!("R1M{n}"),
            lease_id: format!("lease {n}"),
            result: Some(MatchResult {
                match_id: format!("R1M{n}"),
                ..MatchResult::default()
            }),
            transcript: None,
        };
        let batch = EncodedReports {
            reports: (1..=2)
                .map(|n| EncodedReported {
                    traceparent: format!("00-trace-{n}"),
                    tracestate: String::new(),
                    report: report(n).encode_to_vec().into(),
                })
                .collect(),
        };
        let read = ReportMatchResultsRequest::decode(&batch.encode_to_vec()[..]).expect("decodes");
        let expected: Vec<ReportedMatch> = (1..=2)
            .map(|n| ReportedMatch {
                traceparent: format!("00-trace-{n}"),
                tracestate: String::new(),
                report: Some(report(n)),
            })
            .collect();
        assert_eq!(read.reports, expected);
    }

    /// A manager that takes only `ReportMatchResults`, recording how many reports each request carried
    /// and refusing the match `R1M2`'s.
    #[derive(Debug, Clone, Default)]
    struct BatchManager {
        requests: std::sync::Arc<std::sync::Mutex<Vec<usize>>>,
    }

    league_testkit::fake_service! {
        impl ManagerService for BatchManager {
            async fn report_match_results(
                &self,
                request: tonic::Request<ReportMatchResultsRequest>,
            ) -> Result<tonic::Response<ReportMatchResultsResponse>, Status> {
                let reports = request.into_inner().reports;
                self.requests.lock().expect("requests").push(reports.len());
                let answers = reports
                    .into_iter()
                    .map(|reported| {
                        let report = reported.report.unwrap_or_default();
                        let answer = if report.match_id == "R1M2" {
                            Answer::Failure(league_runtime::grpc::failure_of(&Status::not_found("R1M2")))
                        } else {
                            Answer::Recorded(ReportMatchResultResponse {
                                recorded: report.result,
                                duplicate: false,
                            })
                        };
                        ReportAnswer { answer: Some(answer) }
                    })
                    .collect();
                Ok(tonic::Response::new(ReportMatchResultsResponse { answers }))
            }
        }
        unimplemented {
            register_referee(RegisterRefereeRequest) -> RegisterRefereeResponse;
            register_player(RegisterPlayerRequest) -> RegisterPlayerResponse;
            create_league(CreateLeagueRequest) -> CreateLeagueResponse;
            start_league(StartLeagueRequest) -> StartLeagueResponse;
            claim_matches(ClaimMatchesRequest) -> ClaimMatchesResponse;
            renew_leases(RenewLeasesRequest) -> RenewLeasesResponse;
            report_match_result(ReportMatchResultRequest) -> ReportMatchResultResponse;
            get_standings(GetStandingsRequest) -> GetStandingsResponse;
            get_standings_by_round(GetStandingsByRoundRequest) -> GetStandingsByRoundResponse;
            get_schedule(GetScheduleRequest) -> GetScheduleResponse;
            get_next_match(GetNextMatchRequest) -> GetNextMatchResponse;
            get_player_stats(GetPlayerStatsRequest) -> GetPlayerStatsResponse;
            get_match(GetMatchRequest) -> GetMatchResponse;
            get_league_status(GetLeagueStatusRequest) -> GetLeagueStatusResponse;
            list_leagues(ListLeaguesRequest) -> ListLeaguesResponse;
            enroll_player(EnrollPlayerRequest) -> EnrollPlayerResponse;
            release_leases(ReleaseLeasesRequest) -> ReleaseLeasesResponse;
            pause_league(PauseLeagueRequest) -> PauseLeagueResponse;
            resume_league(ResumeLeagueRequest) -> ResumeLeagueResponse;
            cancel_league(CancelLeagueRequest) -> CancelLeagueResponse;
            withdraw_player(WithdrawPlayerRequest) -> WithdrawPlayerResponse;
        }
    }

    /// The reports queued before the sender looks go in one request, and each gets its own answer.
    #[tokio::test]
    async fn the_reports_ready_together_go_in_one_request() {
        let manager = BatchManager::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(manager_service_server::ManagerServiceServer::new(manager.clone()))
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
        );
        let (reports, queue) = Reports::new();
        let mut answers = Vec::new();
        for n in 1..=3 {
            let request = ReportMatchResultRequest {
                match_id: format!("R1M{n}"),
                result: Some(MatchResult {
                    match_id: format!("R1M{n}"),
                    ..MatchResult::default()
                }),
                ..ReportMatchResultRequest::default()
            };
            let (answer, answered) = oneshot::channel();
            reports
                .queue
                .send(Queued {
                    report: EncodedReport::from_bytes(request.encode_to_vec().into()),
                    traceparent: String::new(),
                    tracestate: String::new(),
                    answer,
                })
                .expect("queued");
            answers.push(answered);
        }
        let channel = league_runtime::grpc::channel(&url).expect("url");
        let credentials = Credentials::new("REF01", "secret");
        tokio::spawn(send(queue, channel, credentials, Duration::from_secs(10)));
        let mut answered = Vec::new();
        for answer in answers {
            answered.push(answer.await.expect("answered"));
        }
        assert_eq!(
            *manager.requests.lock().expect("requests"),
            [3],
            "one request of three"
        );
        let recorded = |answer: &Answered| {
            answer
                .as_ref()
                .ok()
                .and_then(|response| response.recorded.as_ref())
                .map(|result| result.match_id.clone())
        };
        assert_eq!(recorded(&answered[0]).as_deref(), Some("R1M1"));
        assert_eq!(answered[1].as_ref().expect_err("refused").code(), Code::NotFound);
        assert_eq!(recorded(&answered[2]).as_deref(), Some("R1M3"));
    }

    #[tokio::test]
    async fn a_failed_request_fails_every_report_it_carried_and_answers_go_to_their_places() {
        let (first, first_answer) = oneshot::channel();
        let (second, second_answer) = oneshot::channel();
        let queued = |answer| Queued {
            report: EncodedReport::from_bytes(Bytes::new()),
            traceparent: String::new(),
            tracestate: String::new(),
            answer,
        };
        answer(
            vec![queued(first), queued(second)],
            Ok(vec![
                Err(Status::not_found("first")),
                Ok(ReportMatchResultResponse {
                    duplicate: true,
                    ..ReportMatchResultResponse::default()
                }),
            ]),
        );
        assert_eq!(
            first_answer
                .await
                .expect("answered")
                .expect_err("failed")
                .message(),
            "first"
        );
        assert!(
            second_answer
                .await
                .expect("answered")
                .expect("recorded")
                .duplicate
        );
        let (third, third_answer) = oneshot::channel();
        answer(vec![queued(third)], Err(Status::unavailable("manager away")));
        assert_eq!(
            third_answer.await.expect("answered").expect_err("failed").code(),
            Code::Unavailable
        );
    }
}
