//! Registering referees and players: metadata validated, the contact endpoint parsed into its canonical
//! form and checked against the endpoint policy (crate::league::endpoint), ids handed out in order
//! (REF01…, P01…), a token issued once and stored as a hash, a contact endpoint that reaches an agent
//! already registered refused (its comparison key: crate::league::contact_key), the
//! numbers of players per league and of live referees bounded, and a player joining its league (which may
//! start it, when enough players have joined).

use std::num::NonZeroU32;

use league_domain::{LeagueId, PlayerId, RefereeId};
use league_proto::v2::{AgentMeta, RegisterRefereeRequest};
use league_proto::{ErrorCode, ProtocolVersion};
use secrecy::SecretString;
use sqlx::{PgConnection, PgPool};

use crate::auth::AgentKind;
use crate::config::RegistrationConfig;
use crate::error::{ManagerError, ManagerResult, reject, violates};
use crate::ids;
use crate::league::contact_key::{self, ContactKey};
use crate::league::endpoint::{Endpoint, EndpointPolicy, Network};
use crate::league::enrollment;
use crate::league::referee_admission::RefereeAdmission;
use crate::tokens;

const MAX_TEXT: usize = 256;
/// A referee heard from (any call it makes, its registration) within this long is live.
pub const LIVE_WITHIN: &str = "2 minutes";
/// How many labels an agent's registration may carry, and how long their keys and values may be.
pub const MAX_LABELS: usize = 16;
pub const MAX_LABEL_KEY: usize = 64;
pub const MAX_LABEL_VALUE: usize = MAX_TEXT;

/// What every registration is held to.
#[derive(Debug, Clone)]
pub struct Rules {
    pub max_players: u32,
    pub max_referees: u32,
    pub endpoints: EndpointPolicy,
    /// Who may register a referee.
    pub referee_admission: RefereeAdmission,
}

impl Rules {
    /// The configured rules; the manager's own gRPC address and its database are refused as endpoints
    /// beside what the configuration names.
    pub fn new(
        config: &RegistrationConfig,
        listen_addr: std::net::SocketAddr,
        database_url: Option<&str>,
        referee_admission: RefereeAdmission,
    ) -> Self {
        let mut refused: Vec<String> = config.refused().map(str::to_owned).collect();
        refused.push(listen_addr.to_string());
        if let Some(database) = database_url.and_then(|url| url::Url::parse(url).ok())
            && let Some(host) = database.host_str()
        {
            refused.push(format!("{host}:{}", database.port().unwrap_or(5432)));
        }
        Self {
            max_players: config.max_players,
            max_referees: config.max_referees,
            referee_admission,
            endpoints: EndpointPolicy {
                allow_loopback: config.endpoint_allow_loopback,
                allowed_networks: config.networks().filter_map(Network::parse).collect(),
                refused,
            },
        }
    }

    /// Metadata validated and its contact endpoint in canonical form, allowed by the policy when the
    /// league will call it there; and that endpoint's comparison key.
    pub(crate) async fn admit(&self, meta: Option<AgentMeta>) -> ManagerResult<(AgentMeta, ContactKey)> {
        let mut meta = validate(meta)?;
        let contact = Endpoint::parse("contact_endpoint", &meta.contact_endpoint)?;
        // Resolved once: the policy judges the addresses the key is made of.
        let addresses = contact.addresses().await;
        // The league calls an external agent at its contact endpoint; the league's own services
        // (registered over gRPC inside the deployment) are reached at their service endpoints.
        if is_external(&meta) {
            self.endpoints.check(&contact, &addresses).await?;
        }
        meta.contact_endpoint = contact.as_str().to_owned();
        Ok((meta, ContactKey::of(&contact, &addresses)))
    }

    /// A referee's registration, new or resumed, admitted as [`Self::admit`] admits any agent's, and
    /// with room for at least one match: its metadata, its contact key and its capacity.
    pub(crate) async fn admit_referee(
        &self,
        request: RegisterRefereeRequest,
    ) -> ManagerResult<(AgentMeta, ContactKey, NonZeroU32)> {
        let (meta, contact_key) = self.admit(request.meta).await?;
        let capacity = NonZeroU32::new(request.max_concurrent_matches).ok_or_else(|| {
            reject(
                ErrorCode::MissingRequiredField,
                "max_concurrent_matches must be at least 1",
            )
        })?;
        Ok((meta, contact_key, capacity))
    }
}

/// Whether the agent is reached through the gateway (labelled so by it).
fn is_external(meta: &AgentMeta) -> bool {
    meta.labels.get(league_proto::EXTERNAL_LABEL).map(String::as_str) == Some("true")
}

/// What a referee's registration hands back, once.
#[derive(Debug)]
pub struct RegisteredReferee {
    pub referee_id: RefereeId,
    pub token: SecretString,
    /// The newest league of its games that is not over, if any.
    pub league_id: Option<LeagueId>,
}

/// What a player's registration hands back, once.
#[derive(Debug)]
pub struct RegisteredPlayer {
    pub player_id: PlayerId,
    pub token: SecretString,
    /// The league it is in now.
    pub league_id: LeagueId,
    /// Whether its enrollment started that league.
    pub started: bool,
}

pub async fn register_referee(
    pool: &PgPool,
    rules: &Rules,
    request: RegisterRefereeRequest,
) -> ManagerResult<RegisteredReferee> {
    let (meta, contact_key, max_concurrent_matches) = rules.admit_referee(request).await?;
    let mut tx = pool.begin().await?;
    // The counter row's lock (insert_agent) orders registrations; this count is taken under it.
    sqlx::query!("select from agent_counters where kind = 'referee' for update")
        .execute(&mut *tx)
        .await?;
    // How many referees are live: holding a running match, or heard from within [`LIVE_WITHIN`]. The
    // referee limit counts these only: one that is gone (a container recreated with a new identity, a
    // replica scaled away) stops counting two minutes after its last call, once its matches are given
    // back; a revoked one (ADR 0039) at once.
    let referees = sqlx::query_scalar!(
        r#"select count(*) as "live!" from agents a where a.kind = 'referee' and a.revoked_at is null and (
            a.last_seen_at > now() - $1::text::interval
            or exists (select 1 from current_round_matches m where m.status = 'running' and m.referee_id = a.agent_id))"#,
        LIVE_WITHIN
    )
    .fetch_one(&mut *tx)
    .await?;
    if referees >= i64::from(rules.max_referees) {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            format!(
                "the league has its maximum of {} live referees (holding a match, or heard from within \
                 the last {LIVE_WITHIN})",
                rules.max_referees
            ),
        ));
    }
    let (referee_id, token) = insert_agent(
        &mut tx,
        AgentKind::Referee,
        RefereeId::numbered,
        (&meta, &contact_key),
        Some(max_concurrent_matches.get()),
    )
    .await?;
    tx.commit().await?;
    tracing::info!(%referee_id, display_name = %meta.display_name, "referee registered");
    Ok(RegisteredReferee {
        referee_id,
        token,
        league_id: current_league(pool, &meta.game_types).await?,
    })
}

/// The league a referee serves now: it serves every league of its games, and REFEREE_REGISTER_RESPONSE
/// names the newest one that is not over.
pub(crate) async fn current_league(
    conn: impl sqlx::PgExecutor<'_>,
    game_types: &[String],
) -> ManagerResult<Option<LeagueId>> {
    let league_id = sqlx::query_scalar!(
        "select league_id from leagues
         where status in ('registering', 'running', 'paused') and game_type = any($1)
         order by created_at desc limit 1",
        game_types
    )
    .fetch_optional(conn)
    .await?;
    league_id
        .map(|league_id| ids::stored("leagues.league_id", &league_id))
        .transpose()
}

/// Registers a player and enrolls it in `requested` (or the league open for registration).
pub async fn register_player(
    pool: &PgPool,
    rules: &Rules,
    requested: Option<LeagueId>,
    meta: Option<AgentMeta>,
) -> ManagerResult<RegisteredPlayer> {
    let (meta, contact_key) = rules.admit(meta).await?;
    let mut tx = pool.begin().await?;
    let league =
        enrollment::open_league(&mut tx, requested.as_ref(), &meta.game_types, rules.max_players).await?;
    league.check_room(&mut tx).await?;
    let (player_id, token) = insert_agent(
        &mut tx,
        AgentKind::Player,
        PlayerId::numbered,
        (&meta, &contact_key),
        None,
    )
    .await?;
    let started = league.add(&mut tx, &player_id).await?;
    let league_id = league.league_id;
    tx.commit().await?;
    tracing::info!(%player_id, %league_id, display_name = %meta.display_name, "player registered");
    Ok(RegisteredPlayer {
        player_id,
        token,
        league_id,
        started,
    })
}

/// Stores a new agent of `kind` under the next number of its kind, which `numbered` makes its id, with
/// its metadata and contact key ([`Rules::admit`]).
async fn insert_agent<Id: AsRef<str>>(
    tx: &mut PgConnection,
    kind: AgentKind,
    numbered: fn(NonZeroU32) -> Id,
    (meta, contact_key): (&AgentMeta, &ContactKey),
    max_concurrent_matches: Option<u32>,
) -> ManagerResult<(Id, SecretString)> {
    // The counter row's lock orders concurrent registrations; a refused one rolls its number back.
    let number = sqlx::query_scalar!(
        "update agent_counters set last_number = last_number + 1 where kind = $1 returning last_number",
        kind.as_str()
    )
    .fetch_one(&mut *tx)
    .await?;
    let agent_id = u32::try_from(number)
        .ok()
        .and_then(NonZeroU32::new)
        .map(numbered)
        .ok_or_else(|| anyhow::anyhow!("agent_counters gave {kind:?} the number {number}"))?;
    let token = tokens::issue()?;
    let (label_keys, label_values): (Vec<&String>, Vec<&String>) = meta.labels.iter().unzip();
    let token_hash = tokens::hash(&token);
    let inserted = sqlx::query!(
        "insert into agents (agent_id, kind, agent_number, display_name, version, game_types,
             contact_endpoint, service_endpoint, protocol_version, label_keys, label_values,
             max_concurrent_matches, token_hash, contact_key)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        agent_id.as_ref(),
        kind.as_str(),
        number,
        meta.display_name,
        meta.version,
        &meta.game_types,
        meta.contact_endpoint,
        meta.service_endpoint,
        meta.protocol_version,
        &label_keys as &[&String],
        &label_values as &[&String],
        max_concurrent_matches.map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
        token_hash.as_slice(),
        contact_key.as_str(),
    )
    .execute(&mut *tx)
    .await;
    match inserted {
        Ok(_) => Ok((agent_id, token)),
        Err(error) if violates(&error, contact_key::UNIQUE_INDEX) => Err(reject(
            ErrorCode::DuplicateRegistration,
            format!(
                "contact endpoint {} reaches an agent already registered (the same address, port and \
                 path, however written)",
                meta.contact_endpoint
            ),
        )),
        Err(error) => Err(ManagerError::Database(error)),
    }
}

/// Checks an agent's metadata; fills in the protocol version if it names none.
pub fn validate(meta: Option<AgentMeta>) -> ManagerResult<AgentMeta> {
    let mut meta = meta.ok_or_else(|| reject(ErrorCode::MissingRequiredField, "agent metadata missing"))?;
    for (field, value) in [
        ("display_name", &meta.display_name),
        ("version", &meta.version),
        ("contact_endpoint", &meta.contact_endpoint),
        ("service_endpoint", &meta.service_endpoint),
    ] {
        if value.trim().is_empty() {
            return Err(reject(
                ErrorCode::MissingRequiredField,
                format!("{field} is required"),
            ));
        }
        if value.len() > MAX_TEXT || value.chars().any(char::is_control) {
            return Err(reject(
                ErrorCode::InvalidMessageFormat,
                format!("{field} is too long or has control characters"),
            ));
        }
        if value.chars().any(is_invisible_format) {
            return Err(reject(
                ErrorCode::InvalidMessageFormat,
                format!("{field} has invisible formatting characters (bidirectional controls or zero-width)"),
            ));
        }
    }
    for (field, endpoint) in [
        ("contact_endpoint", &meta.contact_endpoint),
        ("service_endpoint", &meta.service_endpoint),
    ] {
        // The scheme's case does not matter (RFC 3986 §3.1); `Endpoint::parse` writes it in lower case.
        let scheme = endpoint
            .split_once("://")
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        if !matches!(scheme.as_deref(), Some("http" | "https")) {
            return Err(reject(
                ErrorCode::InvalidMessageFormat,
                format!("{field} must be an http(s) URL"),
            ));
        }
    }
    if meta.game_types.is_empty()
        || meta
            .game_types
            .iter()
            .any(|game| game.is_empty() || game.len() > 64)
    {
        return Err(reject(
            ErrorCode::MissingRequiredField,
            "game_types must list at least one game",
        ));
    }
    if meta.labels.len() > MAX_LABELS
        || meta
            .labels
            .iter()
            .any(|(k, v)| k.len() > MAX_LABEL_KEY || v.len() > MAX_LABEL_VALUE)
    {
        return Err(reject(
            ErrorCode::InvalidMessageFormat,
            "too many or too long labels",
        ));
    }
    // An agent that names no revision is assumed to speak the current one; any spelling of league.v2
    // is stored in one form (`2.1.0`).
    let version = if meta.protocol_version.is_empty() {
        Ok(ProtocolVersion::CURRENT)
    } else {
        meta.protocol_version.parse::<ProtocolVersion>()
    };
    match version {
        Ok(version) if version.is_supported() => {
            meta.protocol_version = version.to_string();
            Ok(meta)
        }
        _ => Err(reject(
            ErrorCode::ProtocolVersionMismatch,
            format!(
                "protocol version {:?} is not supported ({} or newer)",
                meta.protocol_version,
                ProtocolVersion::MINIMUM
            ),
        )),
    }
}

/// Characters that change how a name reads without being seen: bidirectional embeddings, overrides,
/// isolates and marks (which can make one name display as another), and zero-width characters (which
/// make two names that look the same differ). Names with them are refused rather than silently
/// stripped, so what an agent registers is exactly what everyone sees.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{061C}'
            | '\u{FEFF}'
            | '\u{180E}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> AgentMeta {
        AgentMeta {
            display_name: "Alice".into(),
            version: "1.0.0".into(),
            game_types: vec!["even_odd".into()],
            contact_endpoint: "http://localhost:8101/mcp".into(),
            service_endpoint: "http://localhost:50053".into(),
            ..AgentMeta::default()
        }
    }

    fn code(result: ManagerResult<AgentMeta>) -> Option<ErrorCode> {
        match result {
            Err(ManagerError::Rejected { code, .. }) => Some(code),
            _ => None,
        }
    }

    #[test]
    fn valid_metadata_gets_the_current_protocol_version() {
        assert_eq!(
            validate(Some(meta())).map(|m| m.protocol_version).ok().as_deref(),
            Some("2.1.0")
        );
    }

    #[test]
    fn bad_metadata_is_refused_with_its_code() {
        assert_eq!(code(validate(None)), Some(ErrorCode::MissingRequiredField));
        assert_eq!(
            code(validate(Some(AgentMeta {
                display_name: " ".into(),
                ..meta()
            }))),
            Some(ErrorCode::MissingRequiredField)
        );
        assert_eq!(
            code(validate(Some(AgentMeta {
                game_types: vec![],
                ..meta()
            }))),
            Some(ErrorCode::MissingRequiredField)
        );
        assert_eq!(
            code(validate(Some(AgentMeta {
                contact_endpoint: "ftp://x".into(),
                ..meta()
            }))),
            Some(ErrorCode::InvalidMessageFormat)
        );
        assert_eq!(
            code(validate(Some(AgentMeta {
                display_name: "a\nb".into(),
                ..meta()
            }))),
            Some(ErrorCode::InvalidMessageFormat)
        );
        for sneaky in [
            "Ali\u{202E}ecila",
            "Al\u{200B}ice",
            "\u{2066}Alice\u{2069}",
            "\u{FEFF}Alice",
        ] {
            assert_eq!(
                code(validate(Some(AgentMeta {
                    display_name: sneaky.into(),
                    ..meta()
                }))),
                Some(ErrorCode::InvalidMessageFormat),
                "{sneaky:?}"
            );
        }
        assert!(
            validate(Some(AgentMeta {
                display_name: "Zoë 🎲 名前".into(),
                ..meta()
            }))
            .is_ok()
        );
        assert_eq!(
            code(validate(Some(AgentMeta {
                protocol_version: "1.9.9".into(),
                ..meta()
            }))),
            Some(ErrorCode::ProtocolVersionMismatch)
        );
        assert_eq!(
            code(validate(Some(AgentMeta {
                protocol_version: "two".into(),
                ..meta()
            }))),
            Some(ErrorCode::ProtocolVersionMismatch)
        );
        for current in ["2.0.0", "league.v2", "2", "2.1"] {
            assert!(
                validate(Some(AgentMeta {
                    protocol_version: current.into(),
                    ..meta()
                }))
                .is_ok(),
                "{current}"
            );
        }
    }
}
