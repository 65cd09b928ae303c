//! LEAGUE_REGISTER_REQUEST and REFEREE_REGISTER_REQUEST: the agent's metadata becomes a registration at
//! the manager, with the gateway's bridge as the agent's service endpoint and the dialect it registered
//! in remembered, so the league can call it back the way it speaks. Before a player's registration is
//! answered the gateway greets it at its contact endpoint ([`super::greeting`]) to learn the sender form
//! it takes, so its first answer is one it accepts. A registration is answered once: its token goes
//! only into that answer. An agent that registers again resumes its identity by registering with its own
//! id as `sender` and its own token as `auth_token` (the manager checks both, and the contact endpoint:
//! ADR 0013); anything else registers as usual, and a taken contact endpoint is refused (E014, with
//! that hint).

use league_domain::{AgentId, LeagueId, MessageType, PlayerId, RefereeId};
use league_manager_link::league_status::to_league_error;
use league_proto::v2::{AgentMeta, RegisterPlayerRequest, RegisterRefereeRequest};
use league_proto::{EXTERNAL_LABEL, ErrorCode, ProtocolVersion};
use league_runtime::Credentials;
use league_v2::compliance::{Checker, kinds};
use league_v2::dialect::Dialect;
use league_v2::envelope::{self, Sender, text};
use league_v2::ids;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::sender::{self, SenderForm};
use serde_json::{Map, Value, json};

use super::{Handled, Inbound, greeting};
use crate::bridge::external_agents::{DIALECT_LABEL, ExternalAgent};

const MAX_TEXT: usize = 256;

/// What a refused registration on a taken endpoint adds to the manager's reason: how to come back.
const RESUME_HINT: &str = "an agent that registered before resumes its identity by registering again \
     with its own id as sender (player:<id> or referee:<id>) and its own token as auth_token";

pub(crate) async fn player(
    inbound: &Inbound,
    dialect: Dialect,
    message: &Map<String, Value>,
    checker: &mut Checker,
) -> LeagueResult<Handled> {
    let envelope = envelope::check(message, checker, false)?;
    let meta = object(message, "player_meta")?;
    let dialect = chosen_dialect(inbound, dialect, meta);
    let configured_form = configured_form(inbound, meta);
    let agent_meta = agent_meta(inbound, meta, dialect, checker)?;
    let contact_endpoint = agent_meta.contact_endpoint.clone();
    let league_id: Option<LeagueId> = ids::optional(message, "league_id")?;
    let request = RegisterPlayerRequest {
        meta: Some(agent_meta),
        league_id: league_manager_link::named(league_id.as_ref()),
    };
    let conversation_id = envelope.conversation_id.clone();
    let manager = &inbound.manager_link.manager;
    // Until its answer is written: a league event for it waits for its greeting (ManagerLink::registering).
    let _under_way = inbound.bridge.agents.registering(&contact_endpoint);
    let claimed = claimed_identity(&envelope, Kind::Player);
    let answer = resumed_or_new(claimed, request, tonic::Request::new, |request| {
        let mut manager = manager.clone();
        async move { manager.register_player(request).await }
    })
    .await;
    match answer {
        Ok(response) => {
            let response = response.into_inner();
            let player_id: PlayerId = ids::answered("player_id", &response.player_id)?;
            let league_id = answered_league(&response.league_id)?;
            let agent = match configured_form {
                Some(form) => {
                    inbound
                        .bridge
                        .agents
                        .remember(player_id.clone().into(), contact_endpoint, dialect, form)
                }
                None => inbound.bridge.agents.remember_to_greet(
                    player_id.clone().into(),
                    contact_endpoint,
                    dialect,
                ),
            };
            // The standings have a row more: whoever asks this gateway next sees it.
            inbound.forget_standings();
            tracing::info!(player_id = %response.player_id, dialect = dialect.as_str(), "external player registered");
            match configured_form {
                Some(form) => stored(inbound, &agent, form),
                None => greeting::greet(inbound, &agent, league_id.as_ref()).await,
            }
            let registered = Registered {
                agent_id: player_id.into(),
                auth_token: response.auth_token,
                league_id: response.league_id,
            };
            Ok(accepted(
                inbound,
                Kind::Player,
                registered,
                agent.sender_form(),
                conversation_id.as_deref(),
            ))
        }
        Err(status) => rejected(
            MessageType::LeagueRegisterResponse,
            conversation_id.as_deref(),
            status,
        ),
    }
}

pub(crate) async fn referee(
    inbound: &Inbound,
    dialect: Dialect,
    message: &Map<String, Value>,
    checker: &mut Checker,
) -> LeagueResult<Handled> {
    let envelope = envelope::check(message, checker, false)?;
    let meta = object(message, "referee_meta")?;
    let dialect = chosen_dialect(inbound, dialect, meta);
    let configured_form = configured_form(inbound, meta);
    let max_concurrent_matches = max_concurrent_matches(meta, checker)?;
    let agent_meta = agent_meta(inbound, meta, dialect, checker)?;
    let contact_endpoint = agent_meta.contact_endpoint.clone();
    let conversation_id = envelope.conversation_id.clone();
    let request = RegisterRefereeRequest {
        meta: Some(agent_meta),
        max_concurrent_matches,
    };
    let answer = register_referee(inbound, &envelope, message, request).await;
    match answer {
        Ok(response) => {
            let response = response.into_inner();
            let referee_id: RefereeId = ids::answered("referee_id", &response.referee_id)?;
            // A referee is not greeted (no message of the protocol is harmless to every referee): it
            // gets the configured form or the default, and a refused START_MATCH teaches the other.
            let agent = inbound.bridge.agents.remember(
                referee_id.clone().into(),
                contact_endpoint,
                dialect,
                configured_form.unwrap_or_default(),
            );
            if let Some(form) = configured_form {
                stored(inbound, &agent, form);
            }
            tracing::info!(referee_id = %response.referee_id, "external referee registered");
            inbound.referees.referee_registered();
            let registered = Registered {
                agent_id: referee_id.into(),
                auth_token: response.auth_token,
                league_id: response.league_id,
            };
            Ok(accepted(
                inbound,
                Kind::Referee,
                registered,
                agent.sender_form(),
                conversation_id.as_deref(),
            ))
        }
        Err(status) => rejected(
            MessageType::RefereeRegisterResponse,
            conversation_id.as_deref(),
            status,
        ),
    }
}

/// `referee_meta.max_concurrent_matches`: 1..=1000; absent, 1 (a deviation the checker notes).
fn max_concurrent_matches(meta: &Map<String, Value>, checker: &mut Checker) -> LeagueResult<u32> {
    match meta.get("max_concurrent_matches") {
        Some(Value::Number(n)) => n
            .as_u64()
            .filter(|n| (1..=1000).contains(n))
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                LeagueError::new(
                    ErrorCode::InvalidMessageFormat,
                    "max_concurrent_matches must be 1..=1000",
                )
            }),
        None | Some(Value::Null) => {
            checker.deviation(
                kinds::MISSING_ENVELOPE_FIELD,
                "referee_meta.max_concurrent_matches missing (1 assumed)",
                ErrorCode::MissingRequiredField,
            )?;
            Ok(1)
        }
        Some(_) => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            "max_concurrent_matches must be a number",
        )),
    }
}

/// The manager's answer to a referee's registration: its identity resumed when it claims one the
/// manager confirms, else a new registration.
async fn register_referee(
    inbound: &Inbound,
    envelope: &envelope::Envelope,
    message: &Map<String, Value>,
    request: RegisterRefereeRequest,
) -> Result<tonic::Response<league_proto::v2::RegisterRefereeResponse>, tonic::Status> {
    let manager = &inbound.manager_link.manager;
    // A new registration carries the referee registration token, when the operator requires one, as
    // the message's auth_token.
    let registration = |request| match text(message, "auth_token").filter(|token| !token.is_empty()) {
        Some(token) => league_runtime::credentials::operator_request(
            &secrecy::SecretString::from(token.to_owned()),
            request,
        ),
        None => tonic::Request::new(request),
    };
    let claimed = claimed_identity(envelope, Kind::Referee);
    resumed_or_new(claimed, request, registration, |request| {
        let mut manager = manager.clone();
        async move { manager.register_referee(request).await }
    })
    .await
}

/// An agent that claims an identity the manager confirms resumes it; any other (a refused claim too)
/// registers anew, its request made by `registration`.
async fn resumed_or_new<R: Clone, T, F>(
    claimed: Option<Credentials>,
    request: R,
    registration: impl FnOnce(R) -> tonic::Request<R>,
    mut register: impl FnMut(tonic::Request<R>) -> F,
) -> Result<tonic::Response<T>, tonic::Status>
where
    F: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    if let Some(credentials) = claimed
        && let Ok(resumed) = register(credentials.request(request.clone())).await
    {
        return Ok(resumed);
    }
    register(registration(request)).await
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Player,
    Referee,
}

/// A registration the manager accepted (or a resume it confirmed): what its one answer carries.
struct Registered {
    agent_id: AgentId,
    auth_token: String,
    league_id: String,
}

/// The sender form the operator configured for this agent (`LEAGUE_SENDER_FORMS`, by contact endpoint
/// or display name), if any.
fn configured_form(inbound: &Inbound, meta: &Map<String, Value>) -> Option<SenderForm> {
    let by = |key: Option<&str>| key.and_then(|key| inbound.config.sender_forms.get(key)).copied();
    by(text(meta, "contact_endpoint")).or_else(|| by(text(meta, "display_name")))
}

/// A configured form, stored with the registration like a learned one, so every replica uses it.
fn stored(inbound: &Inbound, agent: &ExternalAgent, form: SenderForm) {
    if form != SenderForm::default() {
        inbound.bridge.agents.learned_sender_form(agent, form);
    }
}

/// The credentials a registration claims: its `sender` names an agent id of this kind and its
/// `auth_token` is set (and is not one of our outbound tokens, which prove nothing). Whether they are
/// the agent's own is the manager's to say; a claim it refuses is a registration like any other (and
/// so, on the agent's endpoint, refused E014): another agent's token resumes nobody.
fn claimed_identity(envelope: &envelope::Envelope, kind: Kind) -> Option<Credentials> {
    let id = match (&envelope.sender, kind) {
        (Some(Sender::Player(id)), Kind::Player) | (Some(Sender::Referee(id)), Kind::Referee) => id,
        _ => return None,
    };
    let token = envelope.auth_token.as_deref().filter(|token| !token.is_empty())?;
    if league_v2::outbound_token::is_outbound(token) {
        return None;
    }
    Some(Credentials::new(id.as_str(), token))
}

/// The ACCEPTED answer, with the manager's sender in `form` and the token the league's messages to the
/// agent will carry (`league_auth_token`).
fn accepted(
    inbound: &Inbound,
    kind: Kind,
    registered: Registered,
    form: SenderForm,
    conversation_id: Option<&str>,
) -> Handled {
    let (message_type, id_field, league_id) = match kind {
        Kind::Player => (
            MessageType::LeagueRegisterResponse,
            "player_id",
            Value::from(registered.league_id),
        ),
        Kind::Referee => (
            MessageType::RefereeRegisterResponse,
            "referee_id",
            // A referee serves every league of its games; it may register before any exists.
            (!registered.league_id.is_empty())
                .then_some(registered.league_id)
                .into(),
        ),
    };
    let mut fields = Map::new();
    fields.insert("status".into(), "ACCEPTED".into());
    fields.insert(id_field.into(), registered.agent_id.as_str().into());
    fields.insert("auth_token".into(), registered.auth_token.into());
    fields.insert(
        "league_auth_token".into(),
        inbound.bridge.agents.outbound_token(&registered.agent_id).into(),
    );
    fields.insert("league_id".into(), league_id);
    fields.insert("reason".into(), Value::Null);
    Handled {
        result: league_v2::envelope::message(
            message_type.as_str(),
            form.manager(),
            conversation_id.unwrap_or_default(),
            Value::Object(fields),
        ),
        agent_id: Some(registered.agent_id),
    }
}

/// A refusal by the league (duplicate endpoint, league not open, unsupported version…) is the
/// specification's REJECTED response, with the code and reason; nothing was registered. A taken
/// endpoint's reason says how its agent comes back.
fn rejected(
    message_type: MessageType,
    conversation_id: Option<&str>,
    status: tonic::Status,
) -> LeagueResult<Handled> {
    let error = to_league_error(status);
    if matches!(
        error.code,
        ErrorCode::ConnectionError | ErrorCode::Timeout | ErrorCode::InternalError
    ) {
        return Err(error);
    }
    let reason = match error.code {
        ErrorCode::DuplicateRegistration => format!("{}: {RESUME_HINT}", error.description),
        _ => error.description,
    };
    Ok(Handled::anonymous(league_v2::envelope::message(
        message_type.as_str(),
        sender::MANAGER,
        conversation_id.unwrap_or_default(),
        json!({
            "status": "REJECTED",
            "reason": reason,
            "error_code": error.code.code(),
            "error_name": error.code.name(),
        }),
    )))
}

fn chosen_dialect(inbound: &Inbound, registered_in: Dialect, meta: &Map<String, Value>) -> Dialect {
    let by = |key: Option<&str>| key.and_then(|key| inbound.config.dialects.get(key)).copied();
    by(text(meta, "contact_endpoint"))
        .or_else(|| by(text(meta, "display_name")))
        .unwrap_or(registered_in)
}

fn object<'a>(message: &'a Map<String, Value>, field: &str) -> LeagueResult<&'a Map<String, Value>> {
    match message.get(field) {
        Some(Value::Object(object)) => Ok(object),
        None | Some(Value::Null) => Err(LeagueError::new(
            ErrorCode::MissingRequiredField,
            format!("{field} is required"),
        )),
        Some(_) => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("{field} must be an object"),
        )),
    }
}

/// The league a registration answer names (empty for a referee registered before any league exists).
fn answered_league(league_id: &str) -> LeagueResult<Option<LeagueId>> {
    if league_id.is_empty() {
        return Ok(None);
    }
    ids::answered("league_id", league_id).map(Some)
}

fn optional_text(message: &Map<String, Value>, field: &str) -> LeagueResult<Option<String>> {
    match message.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.len() <= MAX_TEXT => Ok(Some(text.clone())),
        Some(_) => Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("{field} must be a string of at most {MAX_TEXT} characters"),
        )),
    }
}

fn required_text(meta: &Map<String, Value>, field: &str) -> LeagueResult<String> {
    optional_text(meta, field)?
        .filter(|text| !text.trim().is_empty())
        .ok_or_else(|| LeagueError::new(ErrorCode::MissingRequiredField, format!("{field} is required")))
}

/// `protocol_version` as the manager takes it: any spelling of a revision (`"league.v2"`, `"2"`, `2.1`,
/// `"2.1.0"`) in its one form (`2.1.0`); empty when absent (the current revision is assumed). Text that is
/// no revision goes as it is, for the manager to refuse like an old one (E018, a REJECTED answer).
fn protocol_version(meta: &Map<String, Value>) -> LeagueResult<String> {
    let text = match meta.get("protocol_version") {
        Some(Value::Number(number)) => number.to_string(),
        _ => optional_text(meta, "protocol_version")?.unwrap_or_default(),
    };
    if text.is_empty() {
        return Ok(text);
    }
    Ok(text
        .parse::<ProtocolVersion>()
        .map_or(text, |version| version.to_string()))
}

fn agent_meta(
    inbound: &Inbound,
    meta: &Map<String, Value>,
    dialect: Dialect,
    checker: &mut Checker,
) -> LeagueResult<AgentMeta> {
    let display_name = required_text(meta, "display_name")?;
    let contact_endpoint = required_text(meta, "contact_endpoint")?;
    // The scheme's case does not matter (RFC 3986 §3.1), here as in the manager, which writes the
    // endpoint in its canonical form (lower-case scheme and host) and judges where it points.
    let scheme = contact_endpoint
        .split_once("://")
        .map(|(scheme, _)| scheme.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) || contact_endpoint.parse::<http::Uri>().is_err()
    {
        return Err(LeagueError::new(
            ErrorCode::InvalidMessageFormat,
            format!("contact_endpoint must be an http(s) URL, got {contact_endpoint:?}"),
        ));
    }
    let version = match optional_text(meta, "version")? {
        Some(version) if !version.is_empty() => version,
        _ => {
            checker.deviation(
                kinds::MISSING_ENVELOPE_FIELD,
                "version missing (\"unknown\" assumed)",
                ErrorCode::MissingRequiredField,
            )?;
            "unknown".to_owned()
        }
    };
    let game_types = match meta.get("game_types") {
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= 16 => items
            .iter()
            .map(|item| {
                item.as_str()
                    .filter(|s| !s.is_empty() && s.len() <= 64)
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        LeagueError::new(
                            ErrorCode::InvalidMessageFormat,
                            "game_types must be a list of names",
                        )
                    })
            })
            .collect::<LeagueResult<Vec<_>>>()?,
        None | Some(Value::Null) => {
            return Err(LeagueError::new(
                ErrorCode::MissingRequiredField,
                "game_types is required",
            ));
        }
        Some(_) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                "game_types must be a non-empty list of names",
            ));
        }
    };
    let protocol_version = protocol_version(meta)?;
    let mut labels = std::collections::HashMap::new();
    labels.insert(DIALECT_LABEL.to_owned(), dialect.as_str().to_owned());
    labels.insert(EXTERNAL_LABEL.to_owned(), "true".to_owned());
    Ok(AgentMeta {
        display_name,
        version,
        game_types,
        contact_endpoint,
        service_endpoint: inbound.bridge_url.clone(),
        protocol_version,
        labels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> LeagueResult<String> {
        let meta = json!({ "protocol_version": value });
        protocol_version(meta.as_object().unwrap_or(&Map::new()))
    }

    #[test]
    fn protocol_versions_reach_the_manager_in_one_form() {
        assert_eq!(read(json!("league.v2")).ok().as_deref(), Some("2.0.0"));
        assert_eq!(read(json!("2")).ok().as_deref(), Some("2.0.0"));
        assert_eq!(read(json!(2.1)).ok().as_deref(), Some("2.1.0"));
        assert_eq!(read(json!("2.1.0")).ok().as_deref(), Some("2.1.0"));
        assert_eq!(read(json!("1.0")).ok().as_deref(), Some("1.0.0"));
        assert_eq!(read(Value::Null).ok().as_deref(), Some(""));
        // Not a version: the manager refuses it as it is.
        assert_eq!(read(json!("two")).ok().as_deref(), Some("two"));
        assert!(read(json!(["2"])).is_err());
    }
}
