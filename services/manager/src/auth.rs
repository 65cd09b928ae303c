//! Who is calling: checks the credentials a call carries against the stored token hash and the
//! operator token. A hash never changes, but an agent may be revoked (ADR 0039): a hash read from the
//! database is trusted for [`KNOWN_FOR`] only, and a revocation by this manager forgets it at once.

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use league_domain::{AgentId, PlayerId, RefereeId};
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

    /// The kind an id names (`P01` a player, `REF01` a referee).
    pub fn of(agent_id: &AgentId) -> AgentKind {
        match agent_id {
            AgentId::Player(_) => AgentKind::Player,
            AgentId::Referee(_) => AgentKind::Referee,
        }
    }
}

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Player(PlayerId),
    Referee(RefereeId),
    Operator,
}

impl Caller {
    pub fn into_player(self) -> Option<PlayerId> {
        match self {
            Caller::Player(player_id) => Some(player_id),
            _ => None,
        }
    }

    pub fn into_referee(self) -> Option<RefereeId> {
        match self {
            Caller::Referee(referee_id) => Some(referee_id),
            _ => None,
        }
    }
}

/// How long a stored token hash is used without reading it again: how soon a revocation by another
/// manager replica is noticed here.
pub const KNOWN_FOR: Duration = Duration::from_secs(2);

/// An agent's token hash, and when it was read.
type Known = ([u8; 32], Instant);

/// How often a referee's calls stamp `agents.last_seen_at`, at most: well inside the two minutes that
/// make a referee live (crate::league::registration::LIVE_WITHIN), and one write per referee per 15 s.
const SEEN_EVERY: Duration = Duration::from_secs(15);

#[derive(Debug)]
pub struct Authenticator {
    pool: PgPool,
    operator_token_hash: Option<[u8; 32]>,
    known: RwLock<HashMap<AgentId, Known>>,
    /// When each referee's `last_seen_at` was last stamped by this manager.
    seen: Mutex<HashMap<RefereeId, Instant>>,
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
        let agent_id = agent_id(&presented.agent_id)?;
        let hash = self.stored(&agent_id).await?;
        if !tokens::matches(&presented.token, &hash) {
            return Err(reject(ErrorCode::AuthTokenInvalid, "auth token invalid"));
        }
        Ok(match agent_id {
            AgentId::Player(player_id) => Caller::Player(player_id),
            AgentId::Referee(referee_id) => Caller::Referee(referee_id),
        })
    }

    /// The caller, who must be the operator.
    pub async fn operator(&self, metadata: &MetadataMap) -> ManagerResult<()> {
        match self.caller(metadata).await? {
            Caller::Operator => Ok(()),
            Caller::Player(_) | Caller::Referee(_) => Err(reject(
                ErrorCode::PermissionDenied,
                "operator credential required",
            )),
        }
    }

    /// The caller, who must be a registered referee, or the operator acting for one (the gateway runs
    /// external referees' claims and renewals); returns the referee's id.
    pub async fn referee(&self, metadata: &MetadataMap) -> ManagerResult<RefereeId> {
        let referee_id = self.referee_calling(metadata).await?;
        self.seen(&referee_id);
        Ok(referee_id)
    }

    async fn referee_calling(&self, metadata: &MetadataMap) -> ManagerResult<RefereeId> {
        match self.caller(metadata).await? {
            Caller::Referee(referee_id) => Ok(referee_id),
            Caller::Operator => {
                let on_behalf_of = metadata
                    .get(credentials::ON_BEHALF_OF_KEY)
                    .and_then(|value| value.to_str().ok())
                    .ok_or_else(|| reject(ErrorCode::PermissionDenied, "only a referee may do this"))?;
                match agent_id(on_behalf_of)? {
                    AgentId::Referee(referee_id) => {
                        self.stored(&AgentId::Referee(referee_id.clone())).await?;
                        Ok(referee_id)
                    }
                    AgentId::Player(player_id) => Err(reject(
                        ErrorCode::PermissionDenied,
                        format!("{player_id} is not a referee"),
                    )),
                }
            }
            Caller::Player(_) => Err(reject(ErrorCode::PermissionDenied, "only a referee may do this")),
        }
    }

    /// Forgets what is known of `agent_id` (it was just revoked).
    pub fn forget(&self, agent_id: &AgentId) {
        if let Ok(mut known) = self.known.write() {
            known.remove(agent_id);
        }
    }

    /// Notes that `referee_id` was heard from (`last_seen_at`, which makes it live), at most every
    /// [`SEEN_EVERY`], in a task of its own: the call does not wait for it, and a failed stamp only
    /// makes the referee look idle a little sooner.
    fn seen(&self, referee_id: &RefereeId) {
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
            seen.insert(referee_id.clone(), now);
        }
        let (pool, referee_id) = (self.pool.clone(), referee_id.clone());
        tokio::spawn(async move {
            let stamped = sqlx::query!(
                "update agents set last_seen_at = now() where agent_id = $1",
                referee_id.as_str()
            )
            .execute(&pool)
            .await;
            if let Err(error) = stamped {
                tracing::warn!(%referee_id, %error, "could not note that the referee was heard from");
            }
        });
    }

    /// The token hash of `agent_id`: E005/E013 when it is not registered, E013 when it was revoked.
    async fn stored(&self, agent_id: &AgentId) -> ManagerResult<[u8; 32]> {
        if let Some((hash, _)) = self
            .known
            .read()
            .ok()
            .and_then(|known| known.get(agent_id).copied())
            .filter(|(_, at)| at.elapsed() < KNOWN_FOR)
        {
            return Ok(hash);
        }
        // The id says the kind (P01, REF01), as registration made it.
        let row = sqlx::query!(
            r#"select token_hash, revoked_at is not null as "revoked!" from agents where agent_id = $1"#,
            agent_id.as_str()
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Err(reject(
                not_registered(AgentKind::of(agent_id)),
                format!("{agent_id} is not registered"),
            ));
        };
        if row.revoked {
            self.forget(agent_id);
            // Marked, so that the referee stops instead of registering anew (ADR 0082).
            return Err(
                league_proto::error_code::revoked(format!("{agent_id} was revoked by the operator")).into(),
            );
        }
        let hash: [u8; 32] = row
            .token_hash
            .try_into()
            .map_err(|_| anyhow::anyhow!("stored token hash of {agent_id} has the wrong length"))?;
        if let Ok(mut known) = self.known.write() {
            if known.len() > 100_000 {
                known.clear();
            }
            known.insert(agent_id.clone(), (hash, Instant::now()));
        }
        Ok(hash)
    }
}

/// The code that says an agent of `kind` is not registered.
fn not_registered(kind: AgentKind) -> ErrorCode {
    match kind {
        AgentKind::Player => ErrorCode::PlayerNotRegistered,
        AgentKind::Referee => ErrorCode::RefereeNotRegistered,
    }
}

/// The agent id credentials name: one that is no agent's id is not registered (E013 when it looks meant
/// for a referee, E005 otherwise), as the stored lookup would have said without parsing it.
fn agent_id(text: &str) -> ManagerResult<AgentId> {
    text.parse().map_err(|error: league_domain::InvalidId| {
        let kind = if text.starts_with("REF") {
            AgentKind::Referee
        } else {
            AgentKind::Player
        };
        reject(not_registered(kind), error.to_string())
    })
}
