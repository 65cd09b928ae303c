//! Who is calling: checks the credentials a call carries against the stored token hash and the
//! operator token. A hash never changes, but an agent may be revoked (ADR 0039): a hash read from the
//! database is trusted for [`KNOWN_FOR`] only, and a revocation by this manager forgets it at once.

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use league_proto::ErrorCode;
use league_runtime::credentials;
use secrecy::SecretString;
use sqlx::PgPool;
use tonic::metadata::MetadataMap;

use crate::error::{ManagerResult, reject};
use crate::tokens;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    Player,
    Referee,
}

impl AgentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Player => "player",
            AgentKind::Referee => "referee",
        }
    }
}

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Agent { agent_id: String, kind: AgentKind },
    Operator,
}

/// How long a stored token hash is used without reading it again: how soon a revocation by another
/// manager replica is noticed here.
pub const KNOWN_FOR: Duration = Duration::from_secs(2);

/// An agent's kind and token hash, and when they were read.
type Known = (AgentKind, [u8; 32], Instant);

/// How often a referee's calls stamp `agents.last_seen_at`, at most: well inside the two minutes that
/// make a referee live (crate::league::registration::LIVE_WITHIN), and one write per referee per 15 s.
const SEEN_EVERY: Duration = Duration::from_secs(15);

#[derive(Debug)]
pub struct Authenticator {
    pool: PgPool,
    operator_token_hash: Option<[u8; 32]>,
    known: RwLock<HashMap<String, Known>>,
    /// When each referee's `last_seen_at` was last stamped by this manager.
    seen: Mutex<HashMap<String, Instant>>,
}

impl Authenticator {
    pub fn new(pool: PgPool, operator_token: Option<&SecretString>) -> Self {
        Self {
            pool,
            operator_token_hash: operator_token.map(tokens::hash),
            known: RwLock::default(),
            seen: Mutex::default(),
        }
    }

    /// The operator, or a registered agent whose token matches its id (E011/E012/E005/E013 otherwise).
    pub async fn caller(&self, metadata: &MetadataMap) -> ManagerResult<Caller> {
        if metadata.get(credentials::AGENT_ID_KEY).is_none() {
            let token = credentials::bearer_token(metadata)?;
            return match self.operator_token_hash {
                Some(hash) if tokens::matches(&token, &hash) => Ok(Caller::Operator),
                _ => Err(reject(ErrorCode::AuthTokenInvalid, "auth token invalid")),
            };
        }
        let presented = credentials::from_metadata(metadata)?;
        let (kind, hash) = self.stored(&presented.agent_id).await?;
        if !tokens::matches(&presented.token, &hash) {
            return Err(reject(ErrorCode::AuthTokenInvalid, "auth token invalid"));
        }
        Ok(Caller::Agent {
            agent_id: presented.agent_id,
            kind,
        })
    }

    /// The caller, who must be the operator.
    pub async fn operator(&self, metadata: &MetadataMap) -> ManagerResult<()> {
        match self.caller(metadata).await? {
            Caller::Operator => Ok(()),
            Caller::Agent { .. } => Err(reject(
                ErrorCode::PermissionDenied,
                "operator credential required",
            )),
        }
    }

    /// The caller, who must be a registered referee, or the operator acting for one (the gateway runs
    /// external referees' claims and renewals); returns the referee's id.
    pub async fn referee(&self, metadata: &MetadataMap) -> ManagerResult<String> {
        let referee_id = self.referee_calling(metadata).await?;
        self.seen(&referee_id);
        Ok(referee_id)
    }

    async fn referee_calling(&self, metadata: &MetadataMap) -> ManagerResult<String> {
        match self.caller(metadata).await? {
            Caller::Agent {
                agent_id,
                kind: AgentKind::Referee,
            } => Ok(agent_id),
            Caller::Operator => {
                let referee_id = metadata
                    .get(credentials::ON_BEHALF_OF_KEY)
                    .and_then(|value| value.to_str().ok())
                    .ok_or_else(|| reject(ErrorCode::PermissionDenied, "only a referee may do this"))?;
                match self.stored(referee_id).await? {
                    (AgentKind::Referee, _) => Ok(referee_id.to_owned()),
                    (AgentKind::Player, _) => Err(reject(
                        ErrorCode::PermissionDenied,
                        format!("{referee_id} is not a referee"),
                    )),
                }
            }
            _ => Err(reject(ErrorCode::PermissionDenied, "only a referee may do this")),
        }
    }

    /// Forgets what is known of `agent_id` (it was just revoked).
    pub fn forget(&self, agent_id: &str) {
        if let Ok(mut known) = self.known.write() {
            known.remove(agent_id);
        }
    }

    /// Notes that `referee_id` was heard from (`last_seen_at`, which makes it live), at most every
    /// [`SEEN_EVERY`], in a task of its own: the call does not wait for it, and a failed stamp only
    /// makes the referee look idle a little sooner.
    fn seen(&self, referee_id: &str) {
        let now = Instant::now();
        {
            let Ok(mut seen) = self.seen.lock() else {
                return;
            };
            if seen
                .get(referee_id)
                .is_some_and(|at| now.duration_since(*at) < SEEN_EVERY)
            {
                return;
            }
            seen.insert(referee_id.to_owned(), now);
        }
        let (pool, referee_id) = (self.pool.clone(), referee_id.to_owned());
        tokio::spawn(async move {
            let stamped = sqlx::query!(
                "update agents set last_seen_at = now() where agent_id = $1",
                referee_id
            )
            .execute(&pool)
            .await;
            if let Err(error) = stamped {
                tracing::warn!(%referee_id, %error, "could not note that the referee was heard from");
            }
        });
    }

    async fn stored(&self, agent_id: &str) -> ManagerResult<(AgentKind, [u8; 32])> {
        if let Some((kind, hash, _)) = self
            .known
            .read()
            .ok()
            .and_then(|known| known.get(agent_id).copied())
            .filter(|(_, _, at)| at.elapsed() < KNOWN_FOR)
        {
            return Ok((kind, hash));
        }
        let row = sqlx::query!(
            r#"select kind, token_hash, revoked_at is not null as "revoked!" from agents where agent_id = $1"#,
            agent_id
        )
        .fetch_optional(&self.pool)
        .await?
        .map(|row| (row.kind, row.token_hash, row.revoked));
        if let Some((_, _, true)) = row {
            self.forget(agent_id);
            return Err(reject(
                ErrorCode::RefereeNotRegistered,
                format!("{agent_id} was revoked by the operator"),
            ));
        }
        let Some((kind, hash, _)) = row else {
            let code = if agent_id.starts_with("REF") {
                ErrorCode::RefereeNotRegistered
            } else {
                ErrorCode::PlayerNotRegistered
            };
            return Err(reject(code, format!("{agent_id} is not registered")));
        };
        let kind = if kind == "referee" {
            AgentKind::Referee
        } else {
            AgentKind::Player
        };
        let hash: [u8; 32] = hash
            .try_into()
            .map_err(|_| anyhow::anyhow!("stored token hash of {agent_id} has the wrong length"))?;
        if let Ok(mut known) = self.known.write() {
            if known.len() > 100_000 {
                known.clear();
            }
            known.insert(agent_id.to_owned(), (kind, hash, Instant::now()));
        }
        Ok((kind, hash))
    }
}
