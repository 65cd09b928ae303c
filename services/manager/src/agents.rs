//! The `AgentsService` gRPC API, for the gateway: whose credentials these are, how to reach an external
//! agent, each agent's compliance warnings, and relaying replies between gateway replicas.
//!
//! Replies are relayed through Postgres NOTIFY rather than stored: a reply is only useful to a replica
//! waiting for it right now, and NOTIFY reaches the watchers of every manager replica at once.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use league_domain::{AgentId, RefereeId};
use league_proto::ErrorCode;
use league_proto::v2::agents_service_server::AgentsService;
use league_proto::v2::*;
use league_runtime::{Shutdown, ShutdownSignal, credentials};
use secrecy::ExposeSecret;
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;
use tonic::{Request, Response, Status};

use crate::auth::{self, Authenticator};
use crate::error::{ManagerResult, reject};
use crate::ids;
use crate::league::referee_admission::{RefereeAdmission, Rotation};
use crate::league::registration::{MAX_LABEL_KEY, MAX_LABEL_VALUE, MAX_LABELS};
use crate::tokens;

/// The Postgres channel relayed replies travel on.
pub const REPLIES_CHANNEL: &str = "league_agent_replies";
/// NOTIFY payloads must stay under 8000 bytes; a league.v2 reply is a few hundred.
const MAX_RELAYED_BYTES: usize = 7000;
const MAX_WARNINGS_PER_CALL: usize = 1000;

#[derive(Debug, Clone)]
pub struct Agents {
    pool: PgPool,
    auth: Arc<Authenticator>,
    replies: broadcast::Sender<RelayedReply>,
    /// Who may register a referee (its token is the operator's to read).
    referee_admission: RefereeAdmission,
    /// Ends every `WatchReplies` stream when triggered ([`Agents::end_watches_on`]): a gateway keeps
    /// its stream open for good, and a server waits for its running calls before it stops.
    watches_end: Arc<Shutdown>,
}

impl Agents {
    pub fn new(pool: PgPool, auth: Arc<Authenticator>, referee_admission: RefereeAdmission) -> Self {
        let (replies, _) = broadcast::channel(1024);
        Self {
            pool,
            auth,
            replies,
            referee_admission,
            watches_end: Arc::new(Shutdown::new()),
        }
    }

    /// Ends every `WatchReplies` stream, open or opened later, once `shutdown` fires; the gateways
    /// watch again on the manager that answers next.
    pub async fn end_watches_on(self, shutdown: ShutdownSignal) {
        shutdown.wait().await;
        self.watches_end.trigger();
    }

    /// Forwards relayed replies from Postgres to this manager's watchers until shutdown, reconnecting
    /// when the listening connection drops. The connection comes from `held` (db::connect_held).
    pub async fn listen(self, held: PgPool, shutdown: ShutdownSignal) {
        let mut listener = match PgListener::connect_with(&held).await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "cannot LISTEN for relayed replies; only local gateways are served");
                return;
            }
        };
        if let Err(error) = listener.listen(REPLIES_CHANNEL).await {
            tracing::warn!(%error, "cannot LISTEN for relayed replies");
            return;
        }
        let stop = shutdown.wait();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                received = listener.recv() => match received {
                    Ok(notification) => match decode_relayed(notification.payload()) {
                        Some(reply) => { self.replies.send(reply).ok(); }
                        None => tracing::warn!("ignoring a malformed relayed reply"),
                    },
                    Err(error) => tracing::debug!(%error, "reply listener interrupted; reconnecting"),
                },
            }
        }
    }
}

/// `key` and JSON text, separated by a newline (keys never contain one).
fn encode_relayed(reply: &RelayedReply) -> String {
    format!("{}\n{}", reply.key, reply.message_json)
}

fn decode_relayed(payload: &str) -> Option<RelayedReply> {
    let (key, message_json) = payload.split_once('\n')?;
    Some(RelayedReply {
        key: key.to_owned(),
        message_json: message_json.to_owned(),
    })
}

/// The agents' registrations as stored ([`AgentRow`]s), those `$filter` (the rest of the statement,
/// with its `$arguments`) keeps: a checked query, whose column list is written once here.
macro_rules! agent_rows {
    ($filter:literal $(, $argument:expr)* $(,)?) => {
        sqlx::query_as!(
            AgentRow,
            "select agent_id, kind, display_name, version, game_types, contact_endpoint,
                service_endpoint, protocol_version, label_keys, label_values, max_concurrent_matches,
                extract(epoch from revoked_at)::float8 as revoked_at,
                extract(epoch from last_seen_at)::float8 as \"last_seen_at!\" from agents "
                + $filter
            $(, $argument)*
        )
    };
}

#[derive(Debug)]
struct AgentRow {
    agent_id: String,
    kind: String,
    display_name: String,
    version: String,
    game_types: Vec<String>,
    contact_endpoint: String,
    service_endpoint: String,
    protocol_version: String,
    label_keys: Vec<String>,
    label_values: Vec<String>,
    max_concurrent_matches: Option<i32>,
    /// Seconds since the epoch.
    revoked_at: Option<f64>,
    /// Seconds since the epoch.
    last_seen_at: f64,
}

impl From<AgentRow> for Agent {
    fn from(row: AgentRow) -> Self {
        Agent {
            agent_id: row.agent_id,
            kind: if row.kind == "referee" {
                AgentKind::Referee
            } else {
                AgentKind::Player
            } as i32,
            meta: Some(AgentMeta {
                display_name: row.display_name,
                version: row.version,
                game_types: row.game_types,
                contact_endpoint: row.contact_endpoint,
                service_endpoint: row.service_endpoint,
                protocol_version: row.protocol_version,
                labels: row.label_keys.into_iter().zip(row.label_values).collect(),
            }),
            max_concurrent_matches: row
                .max_concurrent_matches
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0),
            revoked_at: row.revoked_at.map(|at| timestamp(epoch(at))),
            running_matches: 0,
            last_seen_at: Some(timestamp(epoch(row.last_seen_at))),
        }
    }
}

fn proto_kind(kind: auth::AgentKind) -> i32 {
    match kind {
        auth::AgentKind::Player => AgentKind::Player as i32,
        auth::AgentKind::Referee => AgentKind::Referee as i32,
    }
}

fn timestamp(at: std::time::SystemTime) -> prost_types::Timestamp {
    prost_types::Timestamp::from(at)
}

type ReplyStream = Pin<Box<dyn Stream<Item = Result<WatchRepliesResponse, Status>> + Send>>;

#[tonic::async_trait]
impl AgentsService for Agents {
    async fn authenticate(
        &self,
        request: Request<AuthenticateRequest>,
    ) -> Result<Response<AuthenticateResponse>, Status> {
        let metadata = request.metadata();
        let agent_id: AgentId = if metadata.get(credentials::AGENT_ID_KEY).is_some() {
            match self.auth.caller(metadata).await? {
                auth::Caller::Player(player_id) => player_id.into(),
                auth::Caller::Referee(referee_id) => referee_id.into(),
                auth::Caller::Operator => unreachable_operator()?,
            }
        } else {
            let token = credentials::bearer_token(metadata)?;
            by_token(&self.pool, &token).await?
        };
        Ok(Response::new(AuthenticateResponse {
            kind: proto_kind(auth::AgentKind::of(&agent_id)),
            agent_id: agent_id.to_string(),
        }))
    }

    async fn get_agent(
        &self,
        request: Request<GetAgentRequest>,
    ) -> Result<Response<GetAgentResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let agent_id: AgentId = ids::required("agent_id", &request.get_ref().agent_id)?;
        let row = agent_rows!("where agent_id = $1", agent_id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(crate::error::ManagerError::from)?;
        let Some(row) = row else {
            return Err(reject(
                ErrorCode::PlayerNotRegistered,
                format!("{agent_id} is not registered"),
            )
            .into());
        };
        Ok(Response::new(GetAgentResponse {
            agent: Some(row.into()),
        }))
    }

    async fn list_agents(
        &self,
        request: Request<ListAgentsRequest>,
    ) -> Result<Response<ListAgentsResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let request = request.into_inner();
        let kind = match AgentKind::try_from(request.kind).unwrap_or(AgentKind::Unspecified) {
            AgentKind::Player => "player",
            AgentKind::Referee => "referee",
            AgentKind::Unspecified => {
                return Err(reject(ErrorCode::MissingRequiredField, "kind is required").into());
            }
        };
        let rows = agent_rows!(
            "where kind = $1 and ($2 = '' or $2 = any(label_keys)) and ($3 or revoked_at is null)
             order by agent_number",
            kind,
            request.label,
            request.include_revoked,
        )
        .fetch_all(&self.pool)
        .await
        .map_err(crate::error::ManagerError::from)?;
        let mut agents: Vec<Agent> = rows.into_iter().map(Agent::from).collect();
        if kind == "referee" {
            let running = crate::league::revocation::running_matches(&self.pool).await?;
            for agent in &mut agents {
                agent.running_matches = running.get(&agent.agent_id).copied().unwrap_or(0);
            }
        }
        Ok(Response::new(ListAgentsResponse { agents }))
    }

    async fn set_agent_label(
        &self,
        request: Request<SetAgentLabelRequest>,
    ) -> Result<Response<SetAgentLabelResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let SetAgentLabelRequest { agent_id, key, value } = request.into_inner();
        let agent_id: AgentId = ids::required("agent_id", &agent_id)?;
        if key.is_empty() || key.len() > MAX_LABEL_KEY || value.len() > MAX_LABEL_VALUE {
            return Err(reject(ErrorCode::InvalidMessageFormat, "label key or value too long").into());
        }
        // Replaces the key's value where it is, appends it otherwise (every SET sees the old row).
        let updated = sqlx::query!(
            "update agents set
               label_values = case when $2 = any(label_keys)
                 then array(select case when k = $2 then $3 else v end
                            from unnest(label_keys, label_values) with ordinality as t(k, v, n) order by n)
                 else label_values || $3 end,
               label_keys = case when $2 = any(label_keys) then label_keys else label_keys || $2 end
             where agent_id = $1 and (cardinality(label_keys) < $4 or $2 = any(label_keys))",
            agent_id.as_str(),
            key,
            value,
            i32::try_from(MAX_LABELS).unwrap_or(i32::MAX),
        )
        .execute(&self.pool)
        .await
        .map_err(crate::error::ManagerError::from)?;
        if updated.rows_affected() == 0 {
            return Err(reject(
                ErrorCode::PlayerNotRegistered,
                format!("{agent_id} is not registered, or has too many labels"),
            )
            .into());
        }
        Ok(Response::new(SetAgentLabelResponse {}))
    }

    async fn record_compliance_warnings(
        &self,
        request: Request<RecordComplianceWarningsRequest>,
    ) -> Result<Response<RecordComplianceWarningsResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let warnings = request.into_inner().warnings;
        if warnings.len() > MAX_WARNINGS_PER_CALL {
            return Err(reject(ErrorCode::PayloadTooLarge, "too many warnings in one call").into());
        }
        let (mut agent_ids, mut kinds, mut details, mut counts) = (vec![], vec![], vec![], vec![]);
        for warning in warnings {
            let agent_id: AgentId = ids::required("warnings.agent_id", &warning.agent_id)?;
            agent_ids.push(agent_id.to_string());
            kinds.push(truncate(warning.kind, 64));
            details.push(truncate(warning.detail, 512));
            counts.push(i64::try_from(warning.count.max(1)).unwrap_or(i64::MAX));
        }
        // One statement for the whole batch; warnings about agents that do not exist are dropped.
        sqlx::query!(
            "insert into compliance_warnings (agent_id, kind, detail, count)
             select w.agent_id, w.kind, w.detail, w.count
             from unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) as w(agent_id, kind, detail, count)
             join agents using (agent_id)
             on conflict (agent_id, kind) do update
             set count = compliance_warnings.count + excluded.count, detail = excluded.detail, last_seen = now()",
            &agent_ids,
            &kinds,
            &details,
            &counts,
        )
        .execute(&self.pool)
        .await
        .map_err(crate::error::ManagerError::from)?;
        Ok(Response::new(RecordComplianceWarningsResponse {}))
    }

    async fn list_compliance_warnings(
        &self,
        request: Request<ListComplianceWarningsRequest>,
    ) -> Result<Response<ListComplianceWarningsResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let agent_id: Option<AgentId> = ids::optional("agent_id", &request.get_ref().agent_id)?;
        let rows = sqlx::query!(
            r#"select agent_id, kind, detail, count,
                    extract(epoch from first_seen)::float8 as "first_seen!",
                    extract(epoch from last_seen)::float8 as "last_seen!"
             from compliance_warnings where $1::text is null or agent_id = $1
             order by agent_id, kind"#,
            agent_id.as_ref().map(AgentId::as_str)
        )
        .fetch_all(&self.pool)
        .await
        .map_err(crate::error::ManagerError::from)?;
        let warnings = rows
            .into_iter()
            .map(|row| ComplianceWarning {
                agent_id: row.agent_id,
                kind: row.kind,
                detail: row.detail,
                count: u64::try_from(row.count).unwrap_or(0),
                first_seen: Some(timestamp(epoch(row.first_seen))),
                last_seen: Some(timestamp(epoch(row.last_seen))),
            })
            .collect();
        Ok(Response::new(ListComplianceWarningsResponse { warnings }))
    }

    async fn relay_reply(
        &self,
        request: Request<RelayReplyRequest>,
    ) -> Result<Response<RelayReplyResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let reply = request
            .into_inner()
            .reply
            .ok_or_else(|| reject(ErrorCode::MissingRequiredField, "reply missing"))?;
        if reply.key.contains('\n') || reply.key.len() + reply.message_json.len() > MAX_RELAYED_BYTES {
            return Err(reject(ErrorCode::PayloadTooLarge, "relayed reply too large or malformed").into());
        }
        sqlx::query!(
            "select pg_notify($1, $2)",
            REPLIES_CHANNEL,
            encode_relayed(&reply)
        )
        .execute(&self.pool)
        .await
        .map_err(crate::error::ManagerError::from)?;
        Ok(Response::new(RelayReplyResponse {}))
    }

    type WatchRepliesStream = ReplyStream;

    async fn revoke_referee(
        &self,
        request: Request<RevokeRefereeRequest>,
    ) -> Result<Response<RevokeRefereeResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let referee_id: RefereeId = ids::required("referee_id", &request.get_ref().referee_id)?;
        let revoked =
            crate::league::revocation::revoke(&self.pool, &referee_id, &self.referee_admission).await?;
        self.auth.forget(&referee_id.into());
        let kept_because = match revoked.rotation {
            Rotation::Rotated(_) => "",
            Rotation::Kept(because) => because,
        };
        Ok(Response::new(RevokeRefereeResponse {
            released_match_ids: revoked.released,
            already_revoked: revoked.already,
            registration_token_rotated: kept_because.is_empty(),
            registration_token_kept_because: kept_because.to_owned(),
        }))
    }

    async fn get_referee_registration_token(
        &self,
        request: Request<GetRefereeRegistrationTokenRequest>,
    ) -> Result<Response<GetRefereeRegistrationTokenResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        let token = self.referee_admission.token()?;
        Ok(Response::new(GetRefereeRegistrationTokenResponse {
            open: token.is_none(),
            token: token
                .map(|token| token.expose_secret().to_owned())
                .unwrap_or_default(),
        }))
    }

    async fn rotate_referee_registration_token(
        &self,
        request: Request<RotateRefereeRegistrationTokenRequest>,
    ) -> Result<Response<RotateRefereeRegistrationTokenResponse>, Status> {
        self.auth.operator(request.metadata()).await?;
        match self.referee_admission.rotate()? {
            Rotation::Rotated(token) => Ok(Response::new(RotateRefereeRegistrationTokenResponse {
                token: token.expose_secret().to_owned(),
            })),
            Rotation::Kept(because) => Err(reject(ErrorCode::PermissionDenied, because).into()),
        }
    }

    async fn watch_replies(
        &self,
        request: Request<WatchRepliesRequest>,
    ) -> Result<Response<Self::WatchRepliesStream>, Status> {
        self.auth.operator(request.metadata()).await?;
        let mut receiver = self.replies.subscribe();
        let end = self.watches_end.signal().wait();
        let stream = async_stream(move |sender| async move {
            tokio::pin!(end);
            loop {
                let received = tokio::select! {
                    () = &mut end => return,
                    received = receiver.recv() => received,
                };
                match received {
                    Ok(reply) => {
                        if sender
                            .send(Ok(WatchRepliesResponse { reply: Some(reply) }))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                    // A slow watcher misses replies rather than holding the others back; the waiting
                    // referee sees a timeout and retries, as with any lost message.
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a reply watcher fell behind");
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(Response::new(stream))
    }
}

fn unreachable_operator<T>() -> Result<T, Status> {
    Err(reject(ErrorCode::AuthTokenInvalid, "auth token invalid").into())
}

fn epoch(seconds: f64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(seconds.max(0.0))
}

fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// The agent whose token this is (E012 when none).
async fn by_token(pool: &PgPool, token: &secrecy::SecretString) -> ManagerResult<AgentId> {
    let token_hash = tokens::hash(token);
    let agent_id = sqlx::query_scalar!(
        "select agent_id from agents where token_hash = $1 and revoked_at is null",
        token_hash.as_slice()
    )
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| reject(ErrorCode::AuthTokenInvalid, "auth token invalid"))?;
    ids::stored("agents.agent_id", &agent_id)
}

/// A stream fed by a task: what `f` sends is what the caller receives.
fn async_stream<F, Fut>(f: F) -> ReplyStream
where
    F: FnOnce(tokio::sync::mpsc::Sender<Result<WatchRepliesResponse, Status>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (sender, receiver) = tokio::sync::mpsc::channel(64);
    tokio::spawn(f(sender));
    Box::pin(futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayed_replies_survive_the_notify_payload() {
        let reply = RelayedReply {
            key: "GAME_JOIN_ACK|R1M1|P01".into(),
            message_json: "{\"a\":\"b\\nc\"}\n".into(),
        };
        assert_eq!(decode_relayed(&encode_relayed(&reply)), Some(reply));
    }
}
