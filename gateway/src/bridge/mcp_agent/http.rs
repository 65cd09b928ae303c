//! rmcp's streamable HTTP client transport over the gateway's own hyper client ([`super::super::client`]:
//! the same connection pool, TLS roots and connect timeout every agent call uses), so the MCP client side
//! brings no second HTTP or TLS stack (rmcp's ready-made client is reqwest's).
//!
//! A POST answers `application/json` (one message) or `text/event-stream` (the answer as a server-sent
//! event, possibly after notifications); `404` to a POST that named a session is rmcp's
//! [`StreamableHttpError::SessionExpired`], on which rmcp initializes a new session and sends the call
//! again. The standing GET stream for server-initiated messages is not opened: the league asks nothing
//! of a server's own initiative (no sampling, no elicitation), and an open stream per agent would hold a
//! connection of the pool for the whole league.
//!
//! Every exchange is bounded by its session's [`Lifeline`] (super::limits): it ends when the session is
//! let go, and after [`super::limits::EXCHANGE_LIMIT`] at the latest, whatever rmcp's worker awaits.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

use super::limits::{Cut, Lifeline};
use crate::bridge::client::{HttpClient, MAX_ANSWER_BYTES};

/// What went wrong below MCP: the request, the connection, or the answer's body.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HttpError {
    #[error("{}", league_runtime::tls::chain(.0))]
    Request(#[from] hyper_util::client::legacy::Error),
    #[error("reading the answer: {0}")]
    Body(String),
    #[error("building the request: {0}")]
    Build(#[from] http::Error),
    #[error("writing the request: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Cut(#[from] Cut),
}

type Failed = StreamableHttpError<HttpError>;

/// The gateway's hyper client as rmcp's streamable HTTP client.
#[derive(Debug, Clone)]
pub(crate) struct HyperMcp {
    pub(crate) http: HttpClient,
    /// The session's: every exchange ends with it.
    pub(crate) lifeline: Lifeline,
}

impl HyperMcp {
    async fn send(
        &self,
        method: Method,
        uri: &str,
        session_id: Option<&str>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, Failed> {
        let mut request = http::Request::builder()
            .method(method)
            .uri(uri)
            .header(http::header::CONTENT_TYPE, JSON_MIME_TYPE)
            .header(
                http::header::ACCEPT,
                format!("{JSON_MIME_TYPE}, {EVENT_STREAM_MIME_TYPE}"),
            );
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id);
        }
        // rmcp's own headers (MCP-Protocol-Version and the standard request headers); none is the
        // gateway's to refuse.
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|error| StreamableHttpError::Client(HttpError::Build(error)))?;
        self.lifeline
            .bound(self.http.request(request))
            .await
            .map_err(|cut| StreamableHttpError::Client(cut.into()))?
            .map_err(|error| StreamableHttpError::Client(HttpError::Request(error)))
    }

    /// The body of `response`, at most [`MAX_ANSWER_BYTES`].
    async fn body(&self, response: http::Response<Incoming>) -> Result<Bytes, Failed> {
        self.lifeline
            .bound(Limited::new(response.into_body(), MAX_ANSWER_BYTES).collect())
            .await
            .map_err(|cut| StreamableHttpError::Client(cut.into()))?
            .map(|collected| collected.to_bytes())
            .map_err(|error| StreamableHttpError::Client(HttpError::Body(error.to_string())))
    }
}

fn is_answer_to_nothing(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Notification(_)
            | ClientJsonRpcMessage::Response(_)
            | ClientJsonRpcMessage::Error(_)
    )
}

impl StreamableHttpClient for HyperMcp {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failed> {
        let json = serde_json::to_vec(&message).map_err(|error| StreamableHttpError::Client(error.into()))?;
        let response = self
            .send(
                Method::POST,
                &uri,
                session_id.as_deref(),
                custom_headers,
                Bytes::from(json),
            )
            .await?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            // An unreadable error body leaves the status alone to say what went wrong.
            let body = self.body(response).await.unwrap_or_default();
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {}", String::from_utf8_lossy(&body)),
            )));
        }
        let session_id = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let content_type = response.headers().get(http::header::CONTENT_TYPE).cloned();
        match content_type {
            Some(kind) if kind.as_bytes().starts_with(EVENT_STREAM_MIME_TYPE.as_bytes()) => {
                let bytes = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                    .into_data_stream()
                    .map(|chunk| chunk.map_err(std::io::Error::other));
                let events: BoxStream<'static, Result<Sse, SseError>> = self
                    .lifeline
                    .bound_stream(SseStream::from_bytes_stream(bytes))
                    .boxed();
                Ok(StreamableHttpPostResponse::Sse(events, session_id))
            }
            Some(kind) if kind.as_bytes().starts_with(JSON_MIME_TYPE.as_bytes()) => {
                let body = self.body(response).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, session_id)),
                    // A notification's or response's POST needs no answer: whatever came back is taken.
                    Err(_) if is_answer_to_nothing(&message) => Ok(StreamableHttpPostResponse::Accepted),
                    Err(error) => Err(StreamableHttpError::Deserialize(error)),
                }
            }
            _ if is_answer_to_nothing(&message) => Ok(StreamableHttpPostResponse::Accepted),
            other => {
                Err(StreamableHttpError::UnexpectedContentType(other.map(|kind| {
                    String::from_utf8_lossy(kind.as_bytes()).into_owned()
                })))
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failed> {
        // The server's to keep or forget: a session it cannot delete (405) or forgot already is fine.
        self.send(
            Method::DELETE,
            &uri,
            Some(&session_id),
            custom_headers,
            Bytes::new(),
        )
        .await
        .map(drop)
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth_header: Option<String>,
        _custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failed> {
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}
