//! The gateway's link to the manager: its gRPC clients, the operator credential the gateway acts with
//! (alone, or for an external referee), the credentials the manager verified in the last few seconds, and
//! [`StandingsCache`], the short-lived cache that keeps each league's standings off the manager's hot
//! path (its bound is stated in `standings_cache.rs`). The gateway, the live page and the external-referee worker all reach the manager through it.

pub mod league_status;
mod standings_cache;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use league_domain::{AgentId, InvalidId, LeagueId, MatchId, RefereeId};
use league_proto::ErrorCode;
use league_proto::error_code;
use league_proto::v2::agents_service_client::AgentsServiceClient;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{
    AgentKind, AuthenticateRequest, GetMatchRequest, GetStandingsRequest, GetStandingsResponse,
    ScheduledMatch,
};
use league_runtime::credentials::{on_behalf_of_request, operator_request};
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;
use sha2::{Digest, Sha256};

pub use standings_cache::{STANDINGS_MAX_AGE, StandingsCache};

/// How long a verified credential is trusted without asking the manager again: how soon this gateway
/// notices that the operator revoked a referee (ADR 0039; the manager refuses its reports at once).
const CREDENTIAL_TTL: Duration = Duration::from_secs(5);
/// Verified credentials remembered at once; past it, all are forgotten (this is only a cache).
const MAX_VERIFIED: usize = 100_000;

type Verified = (AgentId, AgentKind, Instant);

#[derive(Debug, Clone)]
pub struct ManagerLink {
    pub manager: ManagerServiceClient<GrpcChannel>,
    pub agents: AgentsServiceClient<GrpcChannel>,
    operator: SecretString,
    /// SHA-256 of a token → whose it is and when that was checked.
    verified: Arc<RwLock<HashMap<[u8; 32], Verified>>>,
}

impl ManagerLink {
    pub fn new(channel: GrpcChannel, operator: SecretString) -> Self {
        Self {
            manager: ManagerServiceClient::new(channel.clone()),
            agents: AgentsServiceClient::new(channel),
            operator,
            verified: Arc::default(),
        }
    }

    /// A request carrying the operator credential.
    pub fn as_operator<T>(&self, message: T) -> tonic::Request<T> {
        operator_request(&self.operator, message)
    }

    /// A request carrying the operator credential, acting for the external referee `referee_id` (its
    /// claims and lease renewals, which the gateway makes for it).
    pub fn for_referee<T>(&self, referee_id: &RefereeId, message: T) -> tonic::Request<T> {
        on_behalf_of_request(&self.operator, referee_id.as_str(), message)
    }

    pub fn operator_token(&self) -> &SecretString {
        &self.operator
    }

    /// Whose token this is, from the cache of credentials the manager verified in the last
    /// [`CREDENTIAL_TTL`]: no lookup, so no limit to spend.
    pub fn verified_credential(&self, token: &str) -> Option<(AgentId, AgentKind)> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.verified
            .read()
            .ok()
            .and_then(|verified| verified.get(&key).cloned())
            .filter(|(_, _, at)| at.elapsed() < CREDENTIAL_TTL)
            .map(|(agent_id, kind, _)| (agent_id, kind))
    }

    /// Whose token this is, asked of the manager (the token alone: the manager says whose it is), and
    /// remembered. Only the gateway's one authentication calls this, with the caller's leave (its
    /// request limits). The agent id the manager answers is parsed here, where it enters; one that is
    /// no agent's id is an internal error (the manager makes them), not the caller's.
    pub async fn look_up_credential(&self, token: &str) -> Result<(AgentId, AgentKind), tonic::Status> {
        let request = operator_request(&SecretString::from(token.to_owned()), AuthenticateRequest {});
        let response = self.agents.clone().authenticate(request).await?.into_inner();
        let agent_id: AgentId = response.agent_id.parse().map_err(|error: InvalidId| {
            error_code::status(
                ErrorCode::InternalError,
                format!("the manager authenticated agent_id {error}"),
            )
        })?;
        // A kind this gateway does not know (a newer manager's) is neither player nor referee: the
        // handlers that need one refuse it.
        let kind = AgentKind::try_from(response.kind).unwrap_or(AgentKind::Unspecified);
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Ok(mut verified) = self.verified.write() {
            if verified.len() > MAX_VERIFIED {
                verified.clear();
            }
            verified.insert(key, (agent_id.clone(), kind, Instant::now()));
        }
        Ok((agent_id, kind))
    }

    /// The standings of `league_id` (`None`: the newest league) as the manager has them now, asked with
    /// the operator credential: the same for every caller the league lets ask, so authenticate the
    /// caller first. Callers keep them in a [`StandingsCache`].
    pub async fn standings(
        &self,
        league_id: Option<&LeagueId>,
    ) -> Result<GetStandingsResponse, tonic::Status> {
        let request = self.as_operator(GetStandingsRequest {
            league_id: named(league_id),
        });
        Ok(self.manager.clone().get_standings(request).await?.into_inner())
    }

    /// A match of the schedule, as the manager has it now (`league_id` `None`: the current league).
    pub async fn scheduled_match(
        &self,
        league_id: Option<&LeagueId>,
        match_id: MatchId,
    ) -> Result<ScheduledMatch, tonic::Status> {
        self.manager
            .clone()
            .get_match(self.as_operator(GetMatchRequest {
                league_id: named(league_id),
                match_id: match_id.to_string(),
            }))
            .await?
            .into_inner()
            .r#match
            .ok_or_else(|| error_code::status(ErrorCode::MatchNotFound, format!("no match {match_id}")))
    }
}

/// A request's `league_id`: the league's, or proto3's empty string for "none named" (the manager reads
/// it as the newest league).
pub fn named(league_id: Option<&LeagueId>) -> String {
    match league_id {
        Some(league_id) => league_id.to_string(),
        None => String::new(),
    }
}
