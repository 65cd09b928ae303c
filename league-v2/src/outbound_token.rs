//! The `auth_token` on every message the league sends an agent ("after registration every message
//! carries the token", in both directions). It is not the agent's credential and not the operator's:
//! it is `league_out_` followed by HMAC-SHA256(key = the operator credential, "league.v2 outbound token"
//! NUL agent id) in 64 hex digits, one per agent and the same at every gateway replica.
//!
//! It cannot be used to act at the league: the manager knows only the hashes of the tokens it issued
//! (random, from the OS CSPRNG) and of the operator credential, and the gateway refuses any token with
//! this prefix before asking (E012). HMAC reveals nothing of its key. An agent learns its value once,
//! as `league_auth_token` in its registration response, and may compare each incoming message's
//! `auth_token` with it. Computed once per agent the gateway knows and kept with it in memory (never
//! in the database), never logged: [`OutboundToken`]'s `Debug` shows no digits.

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

/// Every outbound token starts with this; an inbound token that does is refused.
pub(crate) const PREFIX: &str = "league_out_";
const CONTEXT: &[u8] = b"league.v2 outbound token\0";

/// The token the league's messages to one agent carry.
pub struct OutboundToken(String);

impl OutboundToken {
    /// The token for `agent_id` under `key` (the operator credential).
    pub fn for_agent(key: &SecretString, agent_id: &str) -> Self {
        // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key.expose_secret().as_bytes()) else {
            return Self(String::new());
        };
        mac.update(CONTEXT);
        mac.update(agent_id.as_bytes());
        Self(format!("{PREFIX}{}", hex::encode(mac.finalize().into_bytes())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for OutboundToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutboundToken([REDACTED])")
    }
}

/// Whether an inbound token is one of the league's outbound tokens (never a credential).
pub fn is_outbound(token: &str) -> bool {
    token.starts_with(PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn for_agent(key: &SecretString, agent_id: &str) -> String {
        OutboundToken::for_agent(key, agent_id).as_str().to_owned()
    }

    #[test]
    fn one_token_per_agent_and_key() {
        let key = SecretString::from("operator-secret".to_owned());
        let p01 = for_agent(&key, "P01");
        assert_eq!(p01, for_agent(&key, "P01"), "the same at every replica");
        assert_ne!(p01, for_agent(&key, "P02"));
        assert_ne!(p01, for_agent(&SecretString::from("another".to_owned()), "P01"));
        assert!(is_outbound(&p01));
        assert_eq!(p01.len(), PREFIX.len() + 64);
        assert!(!p01.contains("operator-secret"));
        assert!(!is_outbound(&"ab".repeat(32)));
    }

    #[test]
    fn the_kept_token_is_never_shown() {
        let token = OutboundToken::for_agent(&SecretString::from("operator-secret".to_owned()), "P01");
        let shown = format!("{token:?}");
        assert!(!shown.contains(&token.as_str()[PREFIX.len()..]), "{shown}");
    }
}
