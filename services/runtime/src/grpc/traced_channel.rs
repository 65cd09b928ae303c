//! The channel every gRPC client of the league uses: a tonic [`Channel`] that writes the current span's
//! trace context (`traceparent`) into each request's metadata, so the server's span joins the caller's
//! trace. The span current when a call is made is the parent: a referee's `invite` phase for
//! `InviteToMatch`, its `report` phase for `ReportMatchResult`.

use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::transport::Channel;
use tonic::transport::channel::ResponseFuture;
use tower::Service;

use crate::telemetry::inject_traceparent;

/// A [`Channel`] that carries trace context. Build one with [`crate::grpc::channel`], or from a channel
/// made elsewhere with `GrpcChannel::from(channel)`; every generated client takes it
/// (`ManagerServiceClient<GrpcChannel>`).
#[derive(Debug, Clone)]
pub struct GrpcChannel {
    channel: Channel,
}

impl From<Channel> for GrpcChannel {
    fn from(channel: Channel) -> GrpcChannel {
        GrpcChannel { channel }
    }
}

impl Service<http::Request<Body>> for GrpcChannel {
    type Response = http::Response<Body>;
    type Error = tonic::transport::Error;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Service::poll_ready(&mut self.channel, cx)
    }

    fn call(&mut self, mut request: http::Request<Body>) -> ResponseFuture {
        inject_traceparent(request.headers_mut());
        Service::call(&mut self.channel, request)
    }
}
