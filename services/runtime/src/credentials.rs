//! How an agent's identity travels on gRPC calls: `league-agent-id` and `authorization: Bearer <token>`
//! metadata (ADR 0002). One place writes it and one place reads it.

use secrecy::{ExposeSecret, SecretString};
use tonic::metadata::{Ascii, MetadataMap, MetadataValue};

use league_proto::{ErrorCode, error_code};

/// Metadata key naming the agent (REF01, P01…) a call is made by.
pub const AGENT_ID_KEY: &str = "league-agent-id";
/// Standard bearer-token metadata key.
pub const AUTHORIZATION_KEY: &str = "authorization";
/// Metadata key naming the external referee an operator-credentialed call acts for: the gateway claims
/// and renews matches for external referees, whose tokens it never keeps.
pub const ON_BEHALF_OF_KEY: &str = "league-on-behalf-of";

/// An agent's id and token, as issued at registration. The token never appears in `Debug` output.
#[derive(Clone, Debug)]
pub struct Credentials {
    pub agent_id: String,
    pub token: SecretString,
}

impl Credentials {
    pub fn new(agent_id: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            agent_id: agent_id.into(),
            token: SecretString::from(token.into()),
        }
    }

    /// Wraps `message` in a request that carries these credentials.
    pub fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        self.attach(request.metadata_mut());
        request
    }

    /// Writes these credentials into `metadata`. Ids and tokens we issue are ASCII; anything else is a
    /// bug in the caller, and the call then goes out without credentials and is refused with E011.
    pub fn attach(&self, metadata: &mut MetadataMap) {
        if let Ok(id) = MetadataValue::try_from(self.agent_id.as_str()) {
            metadata.insert(AGENT_ID_KEY, id);
        }
        let bearer = format!("Bearer {}", self.token.expose_secret());
        if let Ok(mut value) = MetadataValue::<Ascii>::try_from(bearer) {
            value.set_sensitive(true);
            metadata.insert(AUTHORIZATION_KEY, value);
        }
    }
}

/// A request carrying the operator token (operator calls name no agent).
pub fn operator_request<T>(token: &SecretString, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Ok(mut value) = MetadataValue::<Ascii>::try_from(format!("Bearer {}", token.expose_secret())) {
        value.set_sensitive(true);
        request.metadata_mut().insert(AUTHORIZATION_KEY, value);
    }
    request
}

/// A request carrying the operator token, acting for the referee `referee_id` (see [`ON_BEHALF_OF_KEY`]).
pub fn on_behalf_of_request<T>(token: &SecretString, referee_id: &str, message: T) -> tonic::Request<T> {
    let mut request = operator_request(token, message);
    if let Ok(id) = MetadataValue::try_from(referee_id) {
        request.metadata_mut().insert(ON_BEHALF_OF_KEY, id);
    }
    request
}

/// Reads the credentials a call carries: E011 when the token or the agent id is missing, E012 when the
/// authorization header is not a bearer token.
pub fn from_metadata(metadata: &MetadataMap) -> Result<Credentials, tonic::Status> {
    let token = match metadata.get(AUTHORIZATION_KEY) {
        None => {
            return Err(error_code::status(
                ErrorCode::AuthTokenMissing,
                "auth token missing",
            ));
        }
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|header| header.strip_prefix("Bearer "))
            .filter(|token| !token.is_empty())
            .ok_or_else(|| error_code::status(ErrorCode::AuthTokenInvalid, "malformed authorization"))?,
    };
    let agent_id = metadata
        .get(AGENT_ID_KEY)
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty())
        .ok_or_else(|| error_code::status(ErrorCode::AuthTokenMissing, "agent id missing"))?;
    Ok(Credentials::new(agent_id, token))
}

/// Reads the bearer token alone (operator calls carry no agent id).
pub fn bearer_token(metadata: &MetadataMap) -> Result<SecretString, tonic::Status> {
    let header = metadata
        .get(AUTHORIZATION_KEY)
        .ok_or_else(|| error_code::status(ErrorCode::AuthTokenMissing, "auth token missing"))?;
    header
        .to_str()
        .ok()
        .and_then(|header| header.strip_prefix("Bearer "))
        .filter(|token| !token.is_empty())
        .map(|token| SecretString::from(token.to_owned()))
        .ok_or_else(|| error_code::status(ErrorCode::AuthTokenInvalid, "malformed authorization"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_round_trip_through_metadata() {
        let request = Credentials::new("REF01", "abc123").request(());
        let read = from_metadata(request.metadata()).expect("credentials");
        assert_eq!(read.agent_id, "REF01");
        assert_eq!(read.token.expose_secret(), "abc123");
    }

    #[test]
    fn missing_or_malformed_credentials_are_refused_with_their_codes() {
        let empty = MetadataMap::new();
        assert_eq!(
            error_code::code_of(&from_metadata(&empty).unwrap_err()),
            Some(ErrorCode::AuthTokenMissing)
        );
        let mut basic = MetadataMap::new();
        basic.insert(AUTHORIZATION_KEY, MetadataValue::from_static("Basic xyz"));
        basic.insert(AGENT_ID_KEY, MetadataValue::from_static("P01"));
        assert_eq!(
            error_code::code_of(&from_metadata(&basic).unwrap_err()),
            Some(ErrorCode::AuthTokenInvalid)
        );
        let mut no_id = MetadataMap::new();
        no_id.insert(AUTHORIZATION_KEY, MetadataValue::from_static("Bearer xyz"));
        assert_eq!(
            error_code::code_of(&from_metadata(&no_id).unwrap_err()),
            Some(ErrorCode::AuthTokenMissing)
        );
    }

    #[test]
    fn the_token_is_not_in_debug_output() {
        let credentials = Credentials::new("P01", "very-secret-token");
        assert!(!format!("{credentials:?}").contains("very-secret-token"));
    }
}
