//! The manager's gRPC routes with MATCH_RESULT_REPORT read its own way: `ReportMatchResult` requests are
//! decoded into [`ReportMatchResultBytes`], which keeps the transcript as the bytes the referee sent, and
//! served by [`Manager::report`]; every other call goes to the generated `ManagerServiceServer`. The
//! transcript is stored as JSON written straight from those bytes
//! (`league_proto::json::transcript_to_json_text`): decoding its payloads into `Struct`s first, only to
//! write them out and drop them, was a fifth of the manager's CPU a match
//! (docs/adr/0094-a-transcript-stored-from-its-bytes.md). The wire and the contract are unchanged.

use std::convert::Infallible;
use std::task::{Context, Poll};

use league_proto::v2::manager_service_server::{ManagerServiceServer, SERVICE_NAME};
use league_proto::v2::{MatchResult, ReportMatchResultRequest, ReportMatchResultResponse};
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

/// The method read into [`ReportMatchResultBytes`].
const REPORT_METHOD: &str = "ReportMatchResult";

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

/// Whether `path` is `/league.v2.ManagerService/ReportMatchResult`.
fn is_report(path: &str) -> bool {
    path.strip_prefix('/')
        .and_then(|path| path.strip_prefix(SERVICE_NAME))
        .and_then(|path| path.strip_prefix('/'))
        == Some(REPORT_METHOD)
}

impl tower::Service<http::Request<Body>> for ManagerRoutes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = <ManagerServiceServer<Manager> as tower::Service<http::Request<Body>>>::Future;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if !is_report(request.uri().path()) {
            return self.generated.call(request);
        }
        let manager = self.manager.clone();
        Box::pin(async move {
            // The generated server's settings: no compression, messages up to tonic's 4 MB.
            let mut grpc = tonic::server::Grpc::new(ProstCodec::<
                ReportMatchResultResponse,
                ReportMatchResultBytes,
            >::default());
            Ok(grpc.unary(Report(manager), request).await)
        })
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
    fn only_report_match_result_is_read_its_own_way() {
        assert!(is_report("/league.v2.ManagerService/ReportMatchResult"));
        for other in [
            "/league.v2.ManagerService/ClaimMatches",
            "/league.v2.ManagerService/ReportMatchResults",
            "/league.v2.AgentsService/ReportMatchResult",
            "league.v2.ManagerService/ReportMatchResult",
        ] {
            assert!(!is_report(other), "{other}");
        }
    }
}
