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

/// The service and method a report is sent to, as the generated client names them.
const SERVICE: &str = "league.v2.ManagerService";
const METHOD: &str = "ReportMatchResult";
const PATH: &str = "/league.v2.ManagerService/ReportMatchResult";

/// A `ReportMatchResultRequest`'s protobuf bytes. Cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct EncodedReport(Bytes);

impl EncodedReport {
    pub(super) fn new(request: &ReportMatchResultRequest) -> EncodedReport {
        EncodedReport(request.encode_to_vec().into())
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
    fn the_bytes_are_the_requests_encoding() {
        let request = ReportMatchResultRequest {
            league_id: "L1".into(),
            match_id: "R1M1".into(),
            lease_id: "lease".into(),
            ..ReportMatchResultRequest::default()
        };
        let encoded = EncodedReport::new(&request);
        assert_eq!(
            ReportMatchResultRequest::decode(encoded.0.clone()).expect("decodes"),
            request
        );
    }
}
