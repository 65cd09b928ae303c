//! MATCH_RESULT_REPORT: a referee's reports, one to a call (`ReportMatchResult`) or many
//! (`ReportMatchResults`, ADR 0097), each read with its transcript as the referee encoded it
//! (crate::report_route) and handed to the result writer (crate::league::report_queue).

use league_domain::RefereeId;
use league_proto::ErrorCode;
use league_proto::v2::{ReportAnswer, ReportMatchResultResponse, ReportMatchResultsResponse, report_answer};
use league_runtime::grpc::{MAX_REPORTS, REPORT_MATCH_RESULT, batched_call, failure_of};
use tonic::{Request, Response, Status};

use super::{Manager, run_to_end};
use crate::error::reject;
use crate::league::report::Report;
use crate::report_route::{ReportMatchResultBytes, ReportMatchResultsBytes};

impl Manager {
    /// MATCH_RESULT_REPORT, its transcript still as the referee encoded it.
    pub async fn report(
        &self,
        request: Request<ReportMatchResultBytes>,
    ) -> Result<Response<ReportMatchResultResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            let referee_id = this.auth.referee(request.metadata()).await?;
            Ok(Response::new(
                this.report_one(referee_id, request.into_inner()).await?,
            ))
        })
        .await
    }

    /// A referee's reports many at once (`ReportMatchResults`): the caller is checked once, then each
    /// report is taken as [`Manager::report`] takes one, under the span its own call would have had, and
    /// answered in its place. They reach the result writer together, which records them in as few
    /// statements as it would have had they come one to a call. A request over
    /// [`league_runtime::grpc::MAX_REPORTS`] is refused whole.
    pub async fn report_all(
        &self,
        request: Request<ReportMatchResultsBytes>,
    ) -> Result<Response<ReportMatchResultsResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            let count = request.get_ref().reports.len();
            if count > MAX_REPORTS {
                let refusal = format!(
                    "a ReportMatchResults request carries at most {MAX_REPORTS} reports; this one carries {count}"
                );
                return Err(reject(ErrorCode::InvalidMessageFormat, refusal).into());
            }
            let referee_id = this.auth.referee(request.metadata()).await?;
            let answers = request.into_inner().reports.into_iter().map(|reported| {
                let report = this.report_one(referee_id.clone(), reported.report.unwrap_or_default());
                async move {
                    let (parent, state) = (&reported.traceparent, &reported.tracestate);
                    let answer = match batched_call(REPORT_MATCH_RESULT, parent, state, report).await {
                        Ok(recorded) => report_answer::Answer::Recorded(recorded),
                        Err(status) => report_answer::Answer::Failure(failure_of(&status)),
                    };
                    ReportAnswer { answer: Some(answer) }
                }
            });
            Ok(Response::new(ReportMatchResultsResponse {
                answers: futures::future::join_all(answers).await,
            }))
        })
        .await
    }

    /// One report from `referee_id`, once the caller is checked: `ReportMatchResult`'s, and each of a
    /// `ReportMatchResults` request's.
    async fn report_one(
        &self,
        referee_id: RefereeId,
        report: ReportMatchResultBytes,
    ) -> Result<ReportMatchResultResponse, Status> {
        league_runtime::grpc::record_call_fields(&report.league_id, &report.match_id, "", "");
        let reported = self.reports.submit(Report::new(referee_id, report)?).await?;
        Ok(ReportMatchResultResponse {
            recorded: Some(reported.recorded),
            duplicate: reported.duplicate,
        })
    }
}
