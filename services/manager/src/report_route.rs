//! The manager's gRPC routes with MATCH_RESULT_REPORT read its own way: `ReportMatchResult` requests are
//! decoded into [`ReportMatchResultBytes`], which keeps the transcript as the bytes the referee sent, and
//! served by [`Manager::report`], and `ReportMatchResults` (a referee's reports many to a request) into
//! [`ReportMatchResultsBytes`] of those, served by [`Manager::report_all`]; every other call goes to the
//! generated `ManagerServiceServer`. The transcript is stored as JSON written straight from those bytes
//! (`league_proto::json::transcript_to_json_text`): decoding its payloads into `Struct`s first, only to
//! write them out and drop them, was a fifth of the manager's CPU a match
//! (docs/adr/0094-a-transcript-stored-from-its-bytes.md). The wire and the contract are unchanged.

use std::convert::Infallible;
use std::task::{Context, Poll};

use league_proto::v2::manager_service_server::{ManagerServiceServer, SERVICE_NAME};
use league_proto::v2::{
    MatchResult, ReportMatchResultRequest, ReportMatchResultResponse, ReportMatchResultsRequest,
    ReportMatchResultsResponse, ReportedMatch,
};
use prost::Message;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

use crate::service::Manager;

/// `league.v2.ReportMatchResultRequest` with its transcript (field 5, a `MatchTranscript`) left as its
/// encoded bytes: empty when the report has none.
#[derive(Clone, PartialEq, Message)]
pub struct ReportMatchResultBytes {
    #[prost(string, tag = "1")]
    pub league_id: String,
    #[prost(string, tag = "2")]
    pub match_id: String,
    #[prost(string, tag = "3")]
    pub lease_id: String,
    #[prost(message, optional, tag = "4")]
    pub result: Option<MatchResult>,
    #[prost(bytes = "vec", tag = "5")]
    pub transcript: Vec<u8>,
}

impl From<ReportMatchResultRequest> for ReportMatchResultBytes {
    fn from(request: ReportMatchResultRequest) -> Self {
        Self {
            league_id: request.league_id,
            match_id: request.match_id,
            lease_id: request.lease_id,
            result: request.result,
            transcript: request.transcript.map(|t| t.encode_to_vec()).unwrap_or_default(),
        }
    }
}

/// `league.v2.ReportMatchResultsRequest`, each report read as a [`ReportMatchResultBytes`].
#[derive(Clone, PartialEq, Message)]
pub struct ReportMatchResultsBytes {
    #[prost(message, repeated, tag = "1")]
    pub reports: Vec<ReportedMatchBytes>,
}

/// `league.v2.ReportedMatch`, its report read as a [`ReportMatchResultBytes`].
#[derive(Clone, PartialEq, Message)]
pub struct ReportedMatchBytes {
    #[prost(string, tag = "1")]
    pub traceparent: String,
    #[prost(string, tag = "2")]
    pub tracestate: String,
    #[prost(message, optional, tag = "3")]
    pub report: Option<ReportMatchResultBytes>,
}

impl From<ReportMatchResultsRequest> for ReportMatchResultsBytes {
    fn from(request: ReportMatchResultsRequest) -> Self {
        let read = |reported: ReportedMatch| ReportedMatchBytes {
            traceparent: reported.traceparent,
            tracestate: reported.tracestate,
            report: reported.report.map(ReportMatchResultBytes::from),
        };
        Self {
            reports: request.reports.into_iter().map(read).collect(),
        }
    }
}

/// Which of the routes read their own way a request's path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadOwnWay {
    Report,
    Reports,
}

/// The `ManagerService` routes: the generated server, and `ReportMatchResult` in front of it.
#[derive(Debug, Clone)]
pub struct ManagerRoutes {
    manager: Manager,
    generated: ManagerServiceServer<Manager>,
}

impl ManagerRoutes {
    pub fn new(manager: Manager) -> Self {
        Self {
            generated: ManagerServiceServer::new(manager.clone()),
            manager,
        }
    }
}

impl NamedService for ManagerRoutes {
    const NAME: &'static str = SERVICE_NAME;
}

/// The route `path` takes if it is read its own way.
fn read_own_way(path: &str) -> Option<ReadOwnWay> {
    match path {
        league_runtime::grpc::REPORT_MATCH_RESULT => Some(ReadOwnWay::Report),
        league_runtime::grpc::REPORT_MATCH_RESULTS => Some(ReadOwnWay::Reports),
        _ => None,
    }
}

impl tower::Service<http::Request<Body>> for ManagerRoutes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = <ManagerServiceServer<Manager> as tower::Service<http::Request<Body>>>::Future;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let Some(route) = read_own_way(request.uri().path()) else {
            return self.generated.call(request);
        };
        let manager = self.manager.clone();
        // The generated server's settings: no compression, messages up to tonic's 4 MB.
        match route {
            ReadOwnWay::Report => Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(ProstCodec::<
                    ReportMatchResultResponse,
                    ReportMatchResultBytes,
                >::default());
                Ok(grpc.unary(Report(manager), request).await)
            }),
            ReadOwnWay::Reports => Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(ProstCodec::<
                    ReportMatchResultsResponse,
                    ReportMatchResultsBytes,
                >::default());
                Ok(grpc.unary(Reports(manager), request).await)
            }),
        }
    }
}

/// `ReportMatchResult` as tonic serves a unary method.
struct Report(Manager);

impl tonic::server::UnaryService<ReportMatchResultBytes> for Report {
    type Response = ReportMatchResultResponse;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response<Self::Response>, Status>> + Send>>;

    fn call(&mut self, request: Request<ReportMatchResultBytes>) -> Self::Future {
        let manager = self.0.clone();
        Box::pin(async move { manager.report(request).await })
    }
}

/// `ReportMatchResults` as tonic serves a unary method.
struct Reports(Manager);

impl tonic::server::UnaryService<ReportMatchResultsBytes> for Reports {
    type Response = ReportMatchResultsResponse;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response<Self::Response>, Status>> + Send>>;

    fn call(&mut self, request: Request<ReportMatchResultsBytes>) -> Self::Future {
        let manager = self.0.clone();
        Box::pin(async move { manager.report_all(request).await })
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::{MatchTranscript, ResultStatus, TranscriptEntry};

    use super::*;

    #[test]
    fn a_report_reads_as_the_contracts_request_with_its_transcripts_bytes() {
        let transcript = MatchTranscript {
            match_id: "R1M1".into(),
            entries: vec![TranscriptEntry::default(); 2],
        };
        let request = ReportMatchResultRequest {
            league_id: "league".into(),
            match_id: "R1M1".into(),
            lease_id: "lease".into(),
            result: Some(MatchResult {
                match_id: "R1M1".into(),
                status: ResultStatus::Draw as i32,
                ..MatchResult::default()
            }),
            transcript: Some(transcript.clone()),
        };
        let read = ReportMatchResultBytes::decode(&request.encode_to_vec()[..]).expect("decodes");
        assert_eq!(read.transcript, transcript.encode_to_vec());
        assert_eq!(read, ReportMatchResultBytes::from(request.clone()));
        assert_eq!(read.encode_to_vec(), request.encode_to_vec(), "the same wire");
        let none = ReportMatchResultRequest {
            transcript: None,
            ..request
        };
        let read = ReportMatchResultBytes::decode(&none.encode_to_vec()[..]).expect("decodes");
        assert!(read.transcript.is_empty());
    }

    #[test]
    fn a_batch_of_reports_reads_as_the_contracts_request_with_each_transcripts_bytes() {
        let report = |n: u32| ReportMatchResultRequest {
            league_id: "league".into(),
            match_id: format!("R1M{n}"),
            lease_id: format!("lease {n}"),
            result: Some(MatchResult::default()),
            transcript: Some(MatchTranscript {
                match_id: format!("R1M{n}"),
                entries: vec![TranscriptEntry::default(); n as usize],
            }),
        };
        let request = ReportMatchResultsRequest {
            reports: (1..=3)
                .map(|n| ReportedMatch {
                    traceparent: format!("traceparent {n}"),
                    tracestate: String::new(),
                    report: Some(report(n)),
                })
                .collect(),
        };
        let read = ReportMatchResultsBytes::decode(&request.encode_to_vec()[..]).expect("decodes");
        assert_eq!(read.reports.len(), 3);
        assert_eq!(read.reports[1].traceparent, "traceparent 2");
        assert_eq!(
            read.reports[2].report,
            Some(ReportMatchResultBytes::from(report(3)))
        );
        assert_eq!(read, ReportMatchResultsBytes::from(request.clone()));
        assert_eq!(read.encode_to_vec(), request.encode_to_vec(), "the same wire");
    }

    #[test]
    fn only_the_reports_are_read_their_own_way() {
        assert_eq!(
            read_own_way("/league.v2.ManagerService/ReportMatchResult"),
            Some(ReadOwnWay::Report)
        );
        assert_eq!(
            read_own_way("/league.v2.ManagerService/ReportMatchResults"),
            Some(ReadOwnWay::Reports)
        );
        for other in [
            "/league.v2.ManagerService/ClaimMatches",
            "/league.v2.ManagerService/ReportMatchResultss",
            "/league.v2.AgentsService/ReportMatchResult",
            "league.v2.ManagerService/ReportMatchResult",
        ] {
            assert_eq!(read_own_way(other), None, "{other}");
        }
    }

    #[test]
    fn the_paths_are_the_generated_servers() {
        for (path, method) in [
            (league_runtime::grpc::REPORT_MATCH_RESULT, "ReportMatchResult"),
            (league_runtime::grpc::REPORT_MATCH_RESULTS, "ReportMatchResults"),
        ] {
            assert_eq!(path, format!("/{SERVICE_NAME}/{method}"));
        }
    }
}
