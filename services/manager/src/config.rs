//! The manager's configuration (defaults < file < `LEAGUE_*` environment; see league_runtime::config).

use std::net::SocketAddr;

use anyhow::Context;
use league_domain::{GameType, LeagueId, Timing};
use secrecy::SecretString;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ManagerConfig {
    /// `LEAGUE_LISTEN_ADDR`: where the gRPC API listens.
    pub listen_addr: SocketAddr,
    /// `DATABASE_URL`: the Postgres database (required).
    pub database_url: Option<SecretString>,
    /// `LEAGUE_DB_MAX_CONNECTIONS`: the connections that do the work (claims, results, queries, event
    /// delivery's batches). The few the manager holds for good (LISTEN, the event-delivery lock) come
    /// on top, from a pool of their own (db::connect_held). Few is fast on few cores: each connection
    /// prepares and plans every statement for itself (docs/benchmarks.md, "The manager's connections").
    pub db_max_connections: u32,
    /// `LEAGUE_OPERATOR_TOKEN`: the credential for operator actions (create/start a league). Without it,
    /// operator actions are refused.
    pub operator_token: Option<SecretString>,
    /// The league created at start-up unless it exists (empty: none).
    #[serde(rename = "id")]
    pub league_id: String,
    pub game_type: String,
    /// `LEAGUE_AUTO_START_PLAYERS`: start the league once this many players registered (0: by command).
    pub auto_start_players: u32,
    /// The match timings of new leagues (`LEAGUE_JOIN_TIMEOUT`, `LEAGUE_MOVE_TIMEOUT`,
    /// `LEAGUE_GAME_OVER_TIMEOUT`, `LEAGUE_MAX_ATTEMPTS`, `LEAGUE_RETRY_DELAY`, `LEAGUE_LEASE_DURATION`);
    /// unset, the league's defaults (league_domain::Timing).
    pub timing: Timing,
    pub registration: RegistrationConfig,
}

/// Bounds on registration: how many agents, and where their contact endpoints may point
/// (crate::league::endpoint).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RegistrationConfig {
    /// `LEAGUE_MAX_PLAYERS`: players one league takes (a league of n players plays n(n-1)/2 matches).
    pub max_players: u32,
    /// `LEAGUE_MAX_REFEREES`: referees registered at once.
    pub max_referees: u32,
    /// `LEAGUE_ENDPOINT_ALLOW_LOOPBACK`: whether contact endpoints may be loopback addresses (local runs).
    pub endpoint_allow_loopback: bool,
    /// `LEAGUE_ENDPOINT_ALLOWED_NETWORKS`: comma-separated networks (`10.0.0.0/8,fd00::/8`) contact
    /// endpoints must be in; empty: any address not refused.
    pub endpoint_allowed_networks: String,
    /// `LEAGUE_ENDPOINT_REFUSED`: comma-separated `host:port` of the league's own services that no
    /// contact endpoint may name, beside the manager's own port and its database (added by the manager).
    pub endpoint_refused: String,
    /// `LEAGUE_REFEREE_REGISTRATION_TOKEN`: the token every referee must present to register (over
    /// gRPC as its bearer token, through the gateway as REFEREE_REGISTER_REQUEST's `auth_token`).
    pub referee_registration_token: Option<SecretString>,
    /// `LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE`: where the token is kept when not set itself: read, or
    /// generated (OS CSPRNG) and written there (mode 0600) at the first start. With neither, a token is
    /// generated for this process only (`league referee-token` shows it).
    pub referee_registration_token_file: Option<std::path::PathBuf>,
    /// `LEAGUE_REFEREE_REGISTRATION_OPEN`: anyone may register a referee, no token asked (a local trial:
    /// `league run`). Off by default.
    pub referee_registration_open: bool,
}

impl Default for RegistrationConfig {
    fn default() -> Self {
        Self {
            max_players: 200,
            max_referees: 100,
            endpoint_allow_loopback: true,
            endpoint_allowed_networks: String::new(),
            endpoint_refused: String::new(),
            referee_registration_token: None,
            referee_registration_token_file: None,
            referee_registration_open: false,
        }
    }
}

impl RegistrationConfig {
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.max_players >= 2, "LEAGUE_MAX_PLAYERS must be at least 2");
        anyhow::ensure!(self.max_referees >= 1, "LEAGUE_MAX_REFEREES must be at least 1");
        league_runtime::secret_file::refuse_empty_referee_token(
            self.referee_registration_token.as_ref(),
            self.referee_registration_token_file.as_deref(),
            self.referee_registration_open,
        )?;
        for network in self.networks() {
            anyhow::ensure!(
                crate::league::endpoint::Network::parse(network).is_some(),
                "LEAGUE_ENDPOINT_ALLOWED_NETWORKS: {network:?} is not a network (like 10.0.0.0/8)"
            );
        }
        Ok(())
    }

    pub fn networks(&self) -> impl Iterator<Item = &str> {
        list(&self.endpoint_allowed_networks)
    }

    pub fn refused(&self) -> impl Iterator<Item = &str> {
        list(&self.endpoint_refused)
    }
}

fn list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|item| !item.is_empty())
}

impl Default for ManagerConfig {
    fn default() -> Self {
        Self {
            listen_addr: SocketAddr::from(([0, 0, 0, 0], 50051)),
            database_url: None,
            db_max_connections: 4,
            operator_token: None,
            league_id: "league_2025_even_odd".to_owned(),
            game_type: GameType::default().as_str().to_owned(),
            auto_start_players: 0,
            timing: Timing::default(),
            registration: RegistrationConfig::default(),
        }
    }
}

impl ManagerConfig {
    /// Loads and validates the configuration.
    pub fn load() -> anyhow::Result<Self> {
        let mut config: Self = league_runtime::config::load()?;
        // Flat variables (LEAGUE_MOVE_TIMEOUT…) read better than nested ones in compose files.
        config.timing = league_runtime::config::load()?;
        config.registration = league_runtime::config::load()?;
        config.validate()?;
        Ok(config)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.database_url.is_some(), "DATABASE_URL is not set");
        anyhow::ensure!(
            self.db_max_connections >= 2,
            "LEAGUE_DB_MAX_CONNECTIONS must be at least 2"
        );
        self.first_league()?;
        anyhow::ensure!(
            self.auto_start_players != 1,
            "LEAGUE_AUTO_START_PLAYERS must be 0 (start by command) or at least 2"
        );
        self.registration.validate()?;
        validate_timing(&self.timing)
    }
}

impl ManagerConfig {
    /// The league created at start-up unless it exists, and its game: `None` when `LEAGUE_ID` is empty.
    pub fn first_league(&self) -> anyhow::Result<Option<(LeagueId, GameType)>> {
        let game_type = GameType::known(&self.game_type).context("LEAGUE_GAME_TYPE")?;
        if self.league_id.is_empty() {
            return Ok(None);
        }
        let league_id = LeagueId::parse(&self.league_id).context("LEAGUE_ID")?;
        Ok(Some((league_id, game_type)))
    }
}

/// Refuses timings no match could be played by, naming the variable to fix.
pub fn validate_timing(timing: &Timing) -> anyhow::Result<()> {
    anyhow::ensure!(timing.max_attempts >= 1, "LEAGUE_MAX_ATTEMPTS must be at least 1");
    for (name, value) in [
        ("LEAGUE_JOIN_TIMEOUT", timing.join_timeout),
        ("LEAGUE_MOVE_TIMEOUT", timing.move_timeout),
        ("LEAGUE_GAME_OVER_TIMEOUT", timing.game_over_timeout),
        ("LEAGUE_LEASE_DURATION", timing.lease_duration),
    ] {
        anyhow::ensure!(!value.is_zero(), "{name} must be more than zero");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn defaults_are_the_specifications_timings() {
        let timing = ManagerConfig::default().timing;
        assert_eq!(timing.join_timeout, Duration::from_secs(5));
        assert_eq!(timing.move_timeout, Duration::from_secs(30));
        assert_eq!(timing.max_attempts, 3);
        assert_eq!(timing.retry_delay, Duration::from_secs(2));
        // Not the specification's: short, so a silent referee is noticed within seconds (ADR 0042).
        assert_eq!(timing.lease_duration, Duration::from_secs(10));
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail API fixes the error type.
    fn timings_are_read_from_the_league_variables() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("LEAGUE_JOIN_TIMEOUT", "1500ms");
            jail.set_env("LEAGUE_MOVE_TIMEOUT", "45s");
            jail.set_env("LEAGUE_GAME_OVER_TIMEOUT", "2s");
            jail.set_env("LEAGUE_MAX_ATTEMPTS", "5");
            jail.set_env("LEAGUE_RETRY_DELAY", "0ms");
            jail.set_env("LEAGUE_LEASE_DURATION", "90s");
            let timing: Timing =
                league_runtime::config::load().map_err(|error| figment::Error::from(error.to_string()))?;
            assert_eq!(
                timing,
                Timing {
                    join_timeout: Duration::from_millis(1500),
                    move_timeout: Duration::from_secs(45),
                    game_over_timeout: Duration::from_secs(2),
                    max_attempts: 5,
                    retry_delay: Duration::ZERO,
                    lease_duration: Duration::from_secs(90),
                }
            );
            Ok(())
        });
    }

    #[test]
    fn invalid_settings_are_refused_at_start_up() {
        let mut config = ManagerConfig {
            database_url: Some(SecretString::from("postgres://x".to_owned())),
            ..ManagerConfig::default()
        };
        assert!(config.validate().is_ok());
        config.auto_start_players = 1;
        assert!(config.validate().is_err());
        config.auto_start_players = 2;
        config.timing.max_attempts = 0;
        assert!(config.validate().is_err());
        config.timing.max_attempts = 3;
        config.game_type = "chess".to_owned();
        let refused = config.validate().expect_err("chess is not a game here");
        assert_eq!(
            format!("{refused:#}"),
            "LEAGUE_GAME_TYPE: unknown game \"chess\": the known games are even_odd, tic_tac_toe"
        );
        config.game_type = "tic_tac_toe".to_owned();
        assert!(config.validate().is_ok());
        config.database_url = None;
        assert!(config.validate().is_err());
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail API fixes the error type.
    fn an_empty_referee_registration_token_is_refused_naming_the_variable() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("DATABASE_URL", "postgres://x");
            // What a Kubernetes Secret whose value was left empty gives the manager.
            jail.set_env("LEAGUE_REFEREE_REGISTRATION_TOKEN", "");
            let refused = ManagerConfig::load().expect_err("an empty token is refused");
            assert!(
                refused
                    .to_string()
                    .starts_with("LEAGUE_REFEREE_REGISTRATION_TOKEN is set but empty"),
                "{refused}"
            );
            // Compose passes it empty beside the file the manager keeps the token in.
            jail.set_env(
                "LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE",
                "/var/lib/league/secrets/referee-token",
            );
            ManagerConfig::load().map_err(|error| figment::Error::from(error.to_string()))?;
            Ok(())
        });
    }
}
