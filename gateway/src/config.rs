//! The gateway's configuration (`LEAGUE_*` variables, see docs/architecture.md).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use league_runtime::tls::TlsConfig;
use secrecy::SecretString;
use serde::Deserialize;

use league_v2::compliance::Mode;
use league_v2::dialect::Dialect;
use league_v2::sender::SenderForm;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct GatewayConfig {
    /// `LEAGUE_HTTP_ADDR`: the public endpoint (`POST /mcp`, `/healthz`, `/readyz`).
    pub http_addr: SocketAddr,
    /// `LEAGUE_LISTEN_ADDR`: the internal gRPC bridge (the `PlayerService` of every external player).
    pub listen_addr: SocketAddr,
    /// `LEAGUE_ADVERTISE_URL`: how referees reach the bridge (default: the bound address).
    pub advertise_url: Option<String>,
    /// `LEAGUE_PUBLIC_URL`: how agents reach `/mcp` (default: the bound HTTP address).
    pub public_url: Option<String>,
    /// `LEAGUE_MANAGER_URL`.
    pub manager_url: String,
    /// `LEAGUE_OPERATOR_TOKEN`: the gateway looks agents up and records warnings with it; operator calls
    /// through the gateway (`start_league`) must present it too.
    pub operator_token: Option<SecretString>,
    /// `LEAGUE_COMPLIANCE`: `lenient` (default) or `strict`.
    pub compliance: Mode,
    /// `LEAGUE_MAX_BODY_BYTES`: the largest request body accepted.
    pub max_body_bytes: usize,
    /// `LEAGUE_AGENT_RATE_LIMIT`: requests per second one agent (one sender from one address) may make,
    /// with bursts of the same size.
    pub agent_rate_limit: u32,
    /// `LEAGUE_ADDRESS_RATE_LIMIT`: requests per second one IP address may make, whatever senders its
    /// requests name, with bursts of the same size.
    pub address_rate_limit: u32,
    /// `LEAGUE_FAILED_AUTH_LIMIT`: failed authentications a minute one IP address may have before it is
    /// refused everything until its allowance grows back.
    pub failed_auth_limit: u32,
    /// `LEAGUE_REGISTRATION_RATE_LIMIT`: registrations a minute one IP address may make.
    pub registration_rate_limit: u32,
    /// `LEAGUE_MAX_CONNECTIONS`: open HTTP connections at once.
    pub max_connections: usize,
    /// `LEAGUE_MAX_CONNECTIONS_PER_ADDRESS`: open HTTP connections from one IP address at once; less
    /// than `LEAGUE_MAX_CONNECTIONS`, so one address cannot take them all. Behind a reverse proxy every
    /// client shares the proxy's address: raise it there.
    pub max_connections_per_address: usize,
    /// `LEAGUE_HEADER_TIMEOUT`: the longest a connection may take to send a complete request head,
    /// counted from when it connected or got its previous answer (so it is also the idle timeout).
    #[serde(with = "humantime_serde")]
    pub header_timeout: Duration,
    /// `LEAGUE_BODY_TIMEOUT`: the longest a request's body may take to arrive once its head has.
    #[serde(with = "humantime_serde")]
    pub body_timeout: Duration,
    /// `LEAGUE_DIALECTS`: per agent (contact endpoint or display name), the dialect to call it in,
    /// overriding what its registration suggested, e.g. `{"http://host:8102/mcp"="message_type"}`.
    pub dialects: HashMap<String, Dialect>,
    /// `LEAGUE_SENDER_FORMS`: per agent (contact endpoint or display name), the form of the manager's
    /// `sender` it takes (`bare` or `typed`), instead of learning it, e.g.
    /// `{"http://host:8102/mcp"="typed"}` (for an agent that answers no greeting, such as a referee).
    pub sender_forms: HashMap<String, SenderForm>,
    /// `LEAGUE_AGENT_CALL_TIMEOUT`: the longest wait for an agent's answer when a call has no deadline
    /// of its own (the specification's "anything else": 10 s).
    #[serde(with = "humantime_serde")]
    pub agent_call_timeout: Duration,
    /// `LEAGUE_EVENT_SLOTS`: league events sent to agents at once, so a round's notifications give way
    /// to its game calls (crate::bridge::event_slots); `0`: no limit.
    pub event_slots: usize,
    /// `LEAGUE_EVENT_SLOT_WINDOW`: the longest a league event holds its slot: an agent slower than this
    /// holds back nobody else's events.
    #[serde(with = "humantime_serde")]
    pub event_slot_window: Duration,
    /// `LEAGUE_EXTRA_ROOTS`: CA certificates trusted besides the system's when calling `https://`
    /// agents (league_runtime::tls).
    #[serde(flatten)]
    pub tls: TlsConfig,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            http_addr: SocketAddr::from(([0, 0, 0, 0], 8000)),
            listen_addr: SocketAddr::from(([0, 0, 0, 0], 50054)),
            advertise_url: None,
            public_url: None,
            manager_url: "http://127.0.0.1:50051".to_owned(),
            operator_token: None,
            compliance: Mode::Lenient,
            max_body_bytes: 64 * 1024,
            agent_rate_limit: 200,
            address_rate_limit: 400,
            failed_auth_limit: 30,
            registration_rate_limit: 60,
            max_connections: 1024,
            max_connections_per_address: 64,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            dialects: HashMap::new(),
            sender_forms: HashMap::new(),
            agent_call_timeout: Duration::from_secs(10),
            event_slots: crate::bridge::event_slots::SLOTS,
            event_slot_window: crate::bridge::event_slots::WINDOW,
            tls: TlsConfig::default(),
        }
    }
}

impl GatewayConfig {
    pub fn load() -> anyhow::Result<Self> {
        let config: Self = league_runtime::config::load()?;
        config.validate()?;
        Ok(config)
    }

    pub(crate) fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.max_body_bytes >= 1024,
            "LEAGUE_MAX_BODY_BYTES must be at least 1024"
        );
        anyhow::ensure!(
            self.agent_rate_limit >= 1,
            "LEAGUE_AGENT_RATE_LIMIT must be at least 1"
        );
        anyhow::ensure!(
            self.address_rate_limit >= 1 && self.failed_auth_limit >= 1 && self.registration_rate_limit >= 1,
            "LEAGUE_ADDRESS_RATE_LIMIT, LEAGUE_FAILED_AUTH_LIMIT and LEAGUE_REGISTRATION_RATE_LIMIT must be at least 1"
        );
        anyhow::ensure!(
            self.max_connections >= 2,
            "LEAGUE_MAX_CONNECTIONS must be at least 2"
        );
        anyhow::ensure!(
            (1..self.max_connections).contains(&self.max_connections_per_address),
            "LEAGUE_MAX_CONNECTIONS_PER_ADDRESS must be at least 1 and less than LEAGUE_MAX_CONNECTIONS"
        );
        anyhow::ensure!(
            !self.header_timeout.is_zero() && !self.body_timeout.is_zero(),
            "LEAGUE_HEADER_TIMEOUT and LEAGUE_BODY_TIMEOUT must be more than 0"
        );
        anyhow::ensure!(
            self.event_slots <= 100_000,
            "LEAGUE_EVENT_SLOTS must be at most 100000 (0: no limit)"
        );
        anyhow::ensure!(
            !self.event_slot_window.is_zero() && self.event_slot_window <= Duration::from_secs(10),
            "LEAGUE_EVENT_SLOT_WINDOW must be more than 0 and at most 10s"
        );
        anyhow::ensure!(
            self.operator_token.is_some(),
            "LEAGUE_OPERATOR_TOKEN is required: the gateway looks up external agents with it"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_token() -> GatewayConfig {
        GatewayConfig {
            operator_token: Some(SecretString::from("operator")),
            ..GatewayConfig::default()
        }
    }

    #[test]
    fn event_slots_are_bounded_and_their_window_is_never_zero() {
        with_token().validate().expect("the defaults are valid");
        let no_limit = GatewayConfig {
            event_slots: 0,
            ..with_token()
        };
        no_limit.validate().expect("0 slots: no limit");
        for (config, says) in [
            (
                GatewayConfig {
                    event_slots: 100_001,
                    ..with_token()
                },
                "LEAGUE_EVENT_SLOTS",
            ),
            (
                GatewayConfig {
                    event_slot_window: Duration::ZERO,
                    ..with_token()
                },
                "LEAGUE_EVENT_SLOT_WINDOW",
            ),
            (
                GatewayConfig {
                    event_slot_window: Duration::from_secs(11),
                    ..with_token()
                },
                "LEAGUE_EVENT_SLOT_WINDOW",
            ),
        ] {
            let refused = config.validate().expect_err("refused");
            assert!(refused.to_string().contains(says), "{refused}");
        }
    }
}
