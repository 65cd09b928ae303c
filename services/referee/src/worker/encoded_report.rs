//! A result report encoded once. A report is kept and sent again until the manager takes it
//! (crate::worker::report). Sent as a `ReportMatchResultRequest`, every attempt cloned the transcript
//! whole (its payloads are maps of maps) before encoding it: the clone and its drop cost about as much
//! as the encoding, some 37,000 instructions a match (callgrind, docs/benchmarks.md). Encoded once
//! into shared bytes, an attempt costs a reference count; the bytes on the wire are the same.

use bytes::{BufMut, Bytes};
use league_proto::v2::{ReportMatchResultRequest, ReportMatchResultResponse};
use league_runtime::grpc::GrpcChannel;
use prost::Message;
use tonic::client::Grpc;
use tonic::codec::{Codec, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::{GrpcMethod, Request, Response, Status};
use tonic_prost::ProstDecoder;

use crate::runner::MatchProgress;

/// The service and method a report is sent to, as the generated client names them.
const SERVICE: &str = "league.v2.ManagerService";
const METHOD: &str = "ReportMatchResult";
const PATH: &str = league_runtime::grpc::REPORT_MATCH_RESULT;

/// A `ReportMatchResultRequest`'s protobuf bytes. Cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct EncodedReport(Bytes);

/// The key of `ReportMatchResultRequest.transcript` (field 5, length-delimited) on the wire: one byte,
/// as every field number under 16's key is.
const TRANSCRIPT_KEY: u8 = (5 << 3) | 2;

impl EncodedReport {
    /// `request` with the transcript `progress` holds as its transcript (`request`'s own is left out).
    /// The transcript is encoded where it is kept, not copied into the request first: watchers of the
    /// running match read it there while it is reported (crate::worker::registry). Its field is the
    /// last by number, so the bytes are those of the whole request encoded at once.
    pub(super) fn new(request: ReportMatchResultRequest, progress: &MatchProgress) -> EncodedReport {
        let request = ReportMatchResultRequest {
            transcript: None,
            ..request
        };
        let mut bytes = request.encode_to_vec();
        bytes.push(TRANSCRIPT_KEY);
        progress.encode_transcript(&request.match_id, &mut bytes);
        EncodedReport(bytes.into())
    }

    /// The request's bytes: a reference count, not a copy.
    pub(super) fn bytes(&self) -> Bytes {
        self.0.clone()
    }

    #[cfg(test)]
    pub(super) fn from_bytes(bytes: Bytes) -> EncodedReport {
        EncodedReport(bytes)
    }
}

/// `ManagerService.ReportMatchResult` with an [`EncodedReport`]: the generated client's call, with the
/// request's bytes written as they are. Cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct ReportClient {
    grpc: Grpc<GrpcChannel>,
}

impl ReportClient {
    pub(super) fn new(channel: GrpcChannel) -> ReportClient {
        ReportClient {
            grpc: Grpc::new(channel),
        }
    }

    pub(super) async fn report(
        &mut self,
        mut request: Request<EncodedReport>,
    ) -> Result<Response<ReportMatchResultResponse>, Status> {
        self.grpc
            .ready()
            .await
            .map_err(|error| Status::unknown(format!("Service was not ready: {error}")))?;
        request.extensions_mut().insert(GrpcMethod::new(SERVICE, METHOD));
        self.grpc
            .unary(request, PathAndQuery::from_static(PATH), ReportCodec)
            .await
    }
}

/// Writes an [`EncodedReport`] as it is; reads the answer as the generated client does.
#[derive(Debug, Clone, Copy)]
struct ReportCodec;

impl Codec for ReportCodec {
    type Encode = EncodedReport;
    type Decode = ReportMatchResultResponse;
    type Encoder = ReportCodec;
    type Decoder = ProstDecoder<ReportMatchResultResponse>;

    fn encoder(&mut self) -> ReportCodec {
        ReportCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstDecoder::default()
    }
}

impl Encoder for ReportCodec {
    type Item = EncodedReport;
    type Error = Status;

    fn encode(&mut self, item: EncodedReport, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item.0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::manager_service_server;

    use super::*;

    #[test]
    fn the_path_is_the_generated_clients() {
        assert_eq!(SERVICE, manager_service_server::SERVICE_NAME);
        assert_eq!(PATH, format!("/{SERVICE}/{METHOD}"));
    }

    #[test]
    fn the_bytes_decode_as_the_request_with_the_progress_transcript() {
        let progress = MatchProgress::new();
        progress.start("taken".into());
        progress.transition(crate::match_state::MatchState::CollectingChoices, "joined".into());
        let request = ReportMatchResultRequest {
            league_id: "L1".into(),
            match_id: "R1M1".into(),
            lease_id: "lease".into(),
            result: Some(league_proto::v2::MatchResult {
                match_id: "R1M1".into(),
                winner_player_id: "P01".into(),
                ..Default::default()
            }),
            transcript: None,
        };
        let whole = ReportMatchResultRequest {
            transcript: Some(progress.transcript("R1M1")),
            ..request.clone()
        };
        // A transcript the request carries itself is left out: the progress's is the one sent.
        let stale = ReportMatchResultRequest {
            transcript: Some(league_proto::v2::MatchTranscript::default()),
            ..request
        };
        let encoded = EncodedReport::new(stale, &progress);
        // The same bytes as the whole request encoded at once.
        assert_eq!(encoded.0, whole.encode_to_vec());
        let decoded = ReportMatchResultRequest::decode(encoded.0.clone()).expect("decodes");
        assert_eq!(decoded, whole);
        assert_eq!(decoded.transcript.map(|t| t.entries.len()), Some(2));
        // Lent, not taken: the progress still shows it.
        assert_eq!(progress.transcript("R1M1").entries.len(), 2);
    }
}
