//! The comparison key of a contact endpoint: two endpoints with one key reach one agent, and one agent
//! alone holds a key (the unique index `agents_contact_key_key`), so nobody registers a second player
//! that is played through another's agent (issue 53 item 2, ADR 0081).
//!
//! The key is `scheme://host:port/path`:
//! - host: the address the host reaches — a literal address, or the one its name resolves to —, an
//!   IPv6 address carrying an IPv4 address judged as that IPv4 address (crate::league::endpoint), and
//!   every loopback address one host, `loopback`: a server listening on every address answers at
//!   `127.0.0.1`, `127.0.0.2`, `[::1]` and `localhost` alike. A name that reaches loopback is
//!   `loopback`; a name with several other addresses is keyed by the first (IPv4 before IPv6), so a
//!   clone at another of its addresses is not caught (the deployment's names have one address each);
//!   a name that does not resolve (an agent the league runs itself, not up yet) is keyed by the name;
//! - port: given, or the scheme's default;
//! - path: percent-escapes decoded, case folded, repeated `/` one, no trailing `/`. Servers differ in
//!   how they read a path, and these are the differences a server may ignore and still answer as the
//!   same agent (the issue's `/MCP` reached the agent at `/mcp`); agents sharing a host tell themselves
//!   apart by path names (`/agents/alice`, `/mcp/players/P01`), never by case alone;
//! - no query: servers route by path and most ignore a query they do not expect (the issue's
//!   `/mcp?x=1` reached the agent at `/mcp`).
//!
//! The stored contact endpoint keeps its host as given: it is what the league calls, and TLS checks the
//! certificate against the name.

use std::net::IpAddr;

use percent_encoding::percent_decode_str;
use sqlx::PgPool;
use url::Host;

use crate::error::violates;
use crate::league::endpoint::{Endpoint, canonical};

/// The unique index on the key: a registration violating it is a second agent at one endpoint.
pub const UNIQUE_INDEX: &str = "agents_contact_key_key";

/// What a contact endpoint reaches, in one form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactKey(String);

impl ContactKey {
    /// The key of `endpoint`, which reaches `addresses` ([`Endpoint::addresses`]).
    pub fn of(endpoint: &Endpoint, addresses: &[IpAddr]) -> ContactKey {
        let url = endpoint.url();
        let host = host(url.host(), addresses);
        let decoded = percent_decode_str(url.path()).decode_utf8_lossy().to_lowercase();
        let segments: Vec<&str> = decoded.split('/').filter(|part| !part.is_empty()).collect();
        ContactKey(format!(
            "{}://{host}:{}/{}",
            url.scheme(),
            endpoint.port(),
            segments.join("/")
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn host(given: Option<Host<&str>>, addresses: &[IpAddr]) -> String {
    let mut addresses: Vec<IpAddr> = addresses.iter().copied().map(canonical).collect();
    addresses.sort();
    if addresses.iter().any(IpAddr::is_loopback) {
        return "loopback".to_owned();
    }
    match (addresses.first(), given) {
        (Some(IpAddr::V4(ip)), _) => ip.to_string(),
        (Some(IpAddr::V6(ip)), _) => format!("[{ip}]"),
        (None, Some(host)) => host.to_string(),
        (None, None) => String::new(),
    }
}

/// Gives every agent stored without a key (registered before keys existed) its key, in the order they
/// registered: of two that reach one agent, the first keeps the key and the other holds none — it
/// keeps its identity and plays on, logged so the operator can withdraw it, but nobody registers
/// there again without the first one's token. Done at start, since the key needs host names resolved;
/// a row whose key cannot be stored now is tried again at the next start.
pub async fn fill_in(pool: &PgPool) -> anyhow::Result<()> {
    let unkeyed = sqlx::query!(
        "select agent_id, contact_endpoint from agents where contact_key is null
         order by registered_at, agent_id"
    )
    .fetch_all(pool)
    .await?;
    for agent in unkeyed {
        let Ok(endpoint) = Endpoint::parse("contact_endpoint", &agent.contact_endpoint) else {
            tracing::warn!(agent_id = %agent.agent_id, "stored contact endpoint does not parse; it holds no contact key");
            continue;
        };
        let key = ContactKey::of(&endpoint, &endpoint.addresses().await);
        let stored = sqlx::query!(
            "update agents set contact_key = $2 where agent_id = $1 and contact_key is null",
            agent.agent_id,
            key.as_str()
        )
        .execute(pool)
        .await;
        match stored {
            Ok(_) => {}
            Err(error) if violates(&error, UNIQUE_INDEX) => tracing::warn!(
                agent_id = %agent.agent_id,
                "contact endpoint reaches the agent of an earlier registration (ADR 0081): it plays on \
                 without a contact key; withdraw it if it is a clone"
            ),
            Err(error) => {
                return Err(anyhow::Error::new(error)
                    .context(format!("storing the contact key of {}", agent.agent_id)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn key(text: &str) -> String {
        let endpoint = Endpoint::parse("contact_endpoint", text).expect("parses");
        let addresses = endpoint.addresses().await;
        ContactKey::of(&endpoint, &addresses).0
    }

    #[tokio::test]
    async fn every_spelling_that_reaches_one_agent_is_one_key() {
        let victim = key("http://127.0.0.1:41115/mcp").await;
        assert_eq!(victim, "http://loopback:41115/mcp");
        for clone in [
            "http://localhost:41115/mcp",
            "http://localhost:41115/mcp?x=1",
            "http://127.0.0.1:41115/MCP",
            "http://[::ffff:127.0.0.1]:41115/mcp",
            "http://[::1]:41115/mcp",
            "http://127.0.0.2:41115/mcp",
            "http://127.0.0.1:41115//mcp/",
            "http://127.0.0.1:41115/%6Dcp",
        ] {
            assert_eq!(key(clone).await, victim, "{clone}");
        }
        assert_eq!(
            key("https://[::ffff:10.0.0.7]/a").await,
            key("https://10.0.0.7:443/A").await
        );
    }

    #[tokio::test]
    async fn other_paths_ports_and_schemes_are_other_agents() {
        let victim = key("http://127.0.0.1:41115/mcp").await;
        for other in [
            "http://127.0.0.1:41116/mcp",
            "https://127.0.0.1:41115/mcp",
            "http://127.0.0.1:41115/mcp/players/P01",
            "http://127.0.0.1:41115/agents/alice",
            "http://10.0.0.7:41115/mcp",
        ] {
            assert_ne!(key(other).await, victim, "{other}");
        }
        assert_ne!(
            key("http://127.0.0.1:9/mcp/players/P01").await,
            key("http://127.0.0.1:9/mcp/players/P02").await
        );
    }

    #[test]
    fn a_name_that_does_not_resolve_is_keyed_by_its_name() {
        let endpoint =
            Endpoint::parse("contact_endpoint", "http://Player-1.invalid:8101/mcp").expect("parses");
        assert_eq!(
            ContactKey::of(&endpoint, &[]).0,
            "http://player-1.invalid:8101/mcp"
        );
    }
}
