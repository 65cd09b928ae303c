//! LEAGUE_REGISTER_REQUEST and REFEREE_REGISTER_REQUEST: the agent's metadata becomes a registration at
//! the manager, with the gateway's bridge as the agent's service endpoint and the dialect it registered
//! in remembered, so the league can call it back the way it speaks.

use std::sync::Mutex;

use league_proto::ErrorCode;
use league_proto::v2::{AgentMeta, RegisterPlayerRequest, RegisterRefereeRequest};
use serde_json::{Map, Value, json};

use super::{Handled, Inbound};
use crate::compliance::{Checker, kinds};
use crate::dialect::Dialect;
use crate::league::{DIALECT_LABEL, EXTERNAL_LABEL, ExternalAgent};
use crate::league_error::{LeagueError, LeagueResult};
use crate::wire::envelope::{self, text};

const MAX_TEXT: usize = 256;

pub async fn player(
    inbound: &Inbound,
    dialect: Dialect,
    message: &Map<String, Value>,
    checker: &mut Checker,
) -> LeagueResult<Handled> {
    let envelope = envelope::check(message, checker, false)?;
    let meta = object(message, "player_meta")?;
    let dialect = chosen_dialect(inbound, dialect, meta);
    let agent_meta = agent_meta(inbound, meta, dialect, checker)?;
    let contact_endpoint = agent_meta.contact_endpoint.clone();
    let league_id = optional_text(message, "league_id")?.unwrap_or_default();
    let request = RegisterPlayerRequest {
        meta: Some(agent_meta),
        league_id,
    };
    let conversation_id = envelope.conversation_id.clone();
    match inbound.league.manager.clone().register_player(request).await {
        Ok(response) => {
            let response = response.into_inner();
            inbound.league.remember(ExternalAgent {
                agent_id: response.player_id.clone(),
                contact_endpoint,
                dialect: Mutex::new(dialect),
            });
            // The standings have a row more: whoever asks this gateway next sees it.
            inbound.league.forget_standings();
            tracing::info!(player_id = %response.player_id, dialect = dialect.as_str(), "external player registered");
            Ok(Handled {
                result: crate::wire::message(
                    "LEAGUE_REGISTER_RESPONSE",
                    "league_manager",
                    conversation_id.as_deref().unwrap_or_default(),
                    json!({
                        "status": "ACCEPTED",
                        "player_id": response.player_id,
                        "auth_token": response.auth_token,
                        "league_id": response.league_id,
                        "reason": null,
                    }),
                ),
                agent_id: Some(response.player_id),
            })
        }
        Err(status) => rejected("LEAGUE_REGISTER_RESPONSE", conversation_id.as_deref(), &status),
    }
}

pub async fn referee(
    inbound: &Inbound,
    dialect: Dialect,
    message: &Map<String, Value>,
    checker: &mut Checker,
) -> LeagueResult<Handled> {
    let envelope = envelope::check(message, checker, false)?;
    let meta = object(message, "referee_meta")?;
    let dialect = chosen_dialect(inbound, dialect, meta);
    let max_concurrent_matches = match meta.get("max_concurrent_matches") {
        Some(Value::Number(n)) => n
            .as_u64()
            .filter(|n| (1..=1000).contains(n))
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                LeagueError::new(
                    ErrorCode::InvalidMessageFormat,
                    "max_concurrent_matches must be 1..=1000",
                )
            })?,
        None | Some(Value::Null) => {
            checker.deviation(
                kinds::MISSING_ENVELOPE_FIELD,
                "referee_meta.max_concurrent_matches missing (1 assumed)",
                ErrorCode::MissingRequiredField,
            )?;
            1
        }
        Some(_) => {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                "max_concurrent_matches must be a number",
            ));
        }
    };
    let agent_meta = agent_meta(inbound, meta, dialect, checker)?;
    let contact_endpoint = agent_meta.contact_endpoint.clone();
    let conversation_id = envelope.conversation_id.clone();
    let request = RegisterRefereeRequest {
        meta: Some(agent_meta),
        max_concurrent_matches,
    };
    // The referee registration token, when the operator requires one, comes as the message's auth_token.
    let request = match text(message, "auth_token").filter(|token| !token.is_empty()) {
        Some(token) => league_runtime::credentials::operator_request(
            &secrecy::SecretString::from(token.to_owned()),
            request,
        ),
        None => tonic::Request::new(request),
    };
    match inbound.league.manager.clone().register_referee(request).await {
        Ok(response) => {
            let response = response.into_inner();
            inbound.league.remember(ExternalAgent {
                agent_id: response.referee_id.clone(),
                contact_endpoint,
                dialect: Mutex::new(dialect),
            });
            tracing::info!(referee_id = %response.referee_id, "external referee registered");
            inbound.referees.referee_registered();
            Ok(Handled {
                result: crate::wire::message(
                    "REFEREE_REGISTER_RESPONSE",
                    "league_manager",
                    conversation_id.as_deref().unwrap_or_default(),
                    json!({
                        "status": "ACCEPTED",
                        "referee_id": response.referee_id,
                        "auth_token": response.auth_token,
                        "league_id": (!response.league_id.is_empty()).then_some(response.league_id),
                        "reason": null,
                    }),
                ),
                agent_id: Some(response.referee_id),
            })
        }
        Err(status) => rejected("REFEREE_REGISTER_RESPONSE", conversation_id.as_deref(), &status),
    }
}

/// A refusal by the league (duplicate endpoint, league not open, unsupported version…) is the
/// specification's REJECTED response, with the code and reason; nothing was registered.
fn rejected(
    message_type: &str,
    conversation_id: Option<&str>,
    status: &tonic::Status,
) -> LeagueResult<Handled> {
    let error = LeagueError::from_status(status);
    if matches!(
        error.code,
        ErrorCode::ConnectionError | ErrorCode::Timeout | ErrorCode::InternalError
    ) {
        return Err(error);
    }
    Ok(Handled::anonymous(crate::wire::message(
        message_type,
        "league_manager",
        conversation_id.unwrap_or_default(),
        json!({
            "status": "REJECTED",
            "reason": error.description,
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

fn agent_meta(
    inbound: &Inbound,
    meta: &Map<String, Value>,
    dialect: Dialect,
    checker: &mut Checker,
) -> LeagueResult<AgentMeta> {
    let display_name = required_text(meta, "display_name")?;
    let contact_endpoint = required_text(meta, "contact_endpoint")?;
    if !(contact_endpoint.starts_with("http://") || contact_endpoint.starts_with("https://"))
        || contact_endpoint.parse::<http::Uri>().is_err()
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
    let protocol_version = optional_text(meta, "protocol_version")?.unwrap_or_default();
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
