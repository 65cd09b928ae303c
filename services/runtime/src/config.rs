//! Layered configuration for every binary: the struct's defaults < a TOML file named by `LEAGUE_CONFIG`
//! < `LEAGUE_*` environment variables (plus `DATABASE_URL`). Compose, Kubernetes and the local
//! launcher all configure the services through these same variables.
//!
//! `LEAGUE_MOVE_TIMEOUT=250ms` sets the field `move_timeout`; durations are humantime strings
//! ("5s", "250ms"). Each service's struct takes the fields it knows and ignores the rest, because all
//! services share one variable namespace. A `LEAGUE_*` variable that no service knows is most likely a
//! typo (`LEAGUE_MOVE_TIMOUT`), so it is warned about, once per process, naming the closest known one.

use std::sync::Once;

use figment::Figment;
use figment::providers::{Env, Format, Toml};
use serde::de::DeserializeOwned;

/// Environment variable naming an optional TOML configuration file.
pub const CONFIG_FILE_VAR: &str = "LEAGUE_CONFIG";

/// Every `LEAGUE_*` variable some part of the league reads: the one list, kept beside the loader.
pub const KNOWN_VARIABLES: &[&str] = &[
    "LEAGUE_ADDRESS_RATE_LIMIT",
    "LEAGUE_ADMIN_ADDR",
    "LEAGUE_ADVERTISE_URL",
    "LEAGUE_AGENT_CALL_TIMEOUT",
    "LEAGUE_AGENT_RATE_LIMIT",
    "LEAGUE_AUTO_START_PLAYERS",
    "LEAGUE_BODY_TIMEOUT",
    "LEAGUE_COMPLIANCE",
    "LEAGUE_CONFIG",
    "LEAGUE_DB_MAX_CONNECTIONS",
    "LEAGUE_DIALECTS",
    "LEAGUE_ENDPOINT_ALLOWED_NETWORKS",
    "LEAGUE_ENDPOINT_ALLOW_LOOPBACK",
    "LEAGUE_ENDPOINT_REFUSED",
    "LEAGUE_EVENT_SLOTS",
    "LEAGUE_EVENT_SLOT_WINDOW",
    "LEAGUE_EXTRA_ROOTS",
    "LEAGUE_FAILED_AUTH_LIMIT",
    "LEAGUE_FIXTURES_DIR",
    "LEAGUE_GAME_OVER_TIMEOUT",
    "LEAGUE_GAME_TYPE",
    // Compose-file settings (.env), read by compose rather than by a service.
    "LEAGUE_GATEWAY_PORT",
    "LEAGUE_HEADER_TIMEOUT",
    "LEAGUE_HTTP_ADDR",
    "LEAGUE_ID",
    "LEAGUE_IMAGE",
    "LEAGUE_JOIN_TIMEOUT",
    "LEAGUE_LEASE_DURATION",
    "LEAGUE_LISTEN_ADDR",
    "LEAGUE_LLM_API_KEY",
    "LEAGUE_LLM_MODEL",
    "LEAGUE_LLM_TIMEOUT",
    "LEAGUE_LLM_URL",
    "LEAGUE_LOG_FORMAT",
    "LEAGUE_MANAGER_PORT",
    "LEAGUE_MANAGER_URL",
    "LEAGUE_MAX_ATTEMPTS",
    "LEAGUE_MAX_BODY_BYTES",
    "LEAGUE_MAX_CONNECTIONS",
    "LEAGUE_MAX_CONNECTIONS_PER_ADDRESS",
    "LEAGUE_MAX_PLAYERS",
    "LEAGUE_MAX_REFEREES",
    "LEAGUE_MOVE_TIMEOUT",
    "LEAGUE_OPERATOR_TOKEN",
    "LEAGUE_PARENT_PID",
    "LEAGUE_PLAYERS",
    "LEAGUE_PLAYER_HOST_NAME",
    "LEAGUE_PUBLIC_URL",
    "LEAGUE_REFEREE_CAPACITY",
    "LEAGUE_REFEREE_NAME",
    "LEAGUE_REFEREE_REGISTRATION_OPEN",
    "LEAGUE_REFEREE_REGISTRATION_TOKEN",
    "LEAGUE_REFEREE_REGISTRATION_TOKEN_FILE",
    "LEAGUE_REGISTRATION_RATE_LIMIT",
    "LEAGUE_RETRY_DELAY",
    "LEAGUE_SEED",
    "LEAGUE_SENDER_FORMS",
    "LEAGUE_SHUTDOWN_GRACE",
    "LEAGUE_STATE_DIR",
    "LEAGUE_STATE_FILE",
    "LEAGUE_STRATEGIES",
    "LEAGUE_THINK_TIME",
    "LEAGUE_WORKER_THREADS",
];

/// Whether `name` is a `LEAGUE_*` variable that no part of the league reads.
pub fn is_unknown(name: &str) -> bool {
    name.starts_with("LEAGUE_") && !KNOWN_VARIABLES.contains(&name)
}

/// `variables` (names) that start with `LEAGUE_` but are not [`KNOWN_VARIABLES`], each with a warning
/// that names the closest known variable when one is close.
pub fn unknown_variables<'a>(variables: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    variables
        .into_iter()
        .filter(|name| is_unknown(name))
        .map(|name| {
            let closest = KNOWN_VARIABLES
                .iter()
                .map(|known| (strsim::levenshtein(name, known), known))
                .min()
                .filter(|&(distance, _)| distance <= 3);
            match closest {
                Some((_, known)) => {
                    format!("{name} is not a league setting (did you mean {known}?); ignored")
                }
                None => format!("{name} is not a league setting; ignored"),
            }
        })
        .collect()
}

/// Warns (once per process) about each unknown `LEAGUE_*` variable of this environment: in the logs when
/// telemetry is installed (a JSON log stays JSON), else on stderr.
pub fn warn_unknown_variables() {
    static WARNED: Once = Once::new();
    WARNED.call_once(|| {
        let names: Vec<String> = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .collect();
        for warning in unknown_variables(names.iter().map(String::as_str)) {
            if tracing::dispatcher::has_been_set() {
                tracing::warn!("{warning}");
            } else {
                eprintln!("warning: {warning}");
            }
        }
    });
}

/// Loads `T` from its defaults (`#[serde(default)]`), the optional file, and the environment.
pub fn load<T: DeserializeOwned>() -> anyhow::Result<T> {
    warn_unknown_variables();
    let mut figment = Figment::new();
    if let Ok(path) = std::env::var(CONFIG_FILE_VAR) {
        figment = figment.merge(Toml::file_exact(path));
    }
    figment
        .merge(Env::prefixed("LEAGUE_").ignore(&["config"]))
        .merge(Env::raw().only(&["DATABASE_URL"]))
        .extract()
        .map_err(|error| anyhow::anyhow!("invalid configuration: {error}"))
}

#[cfg(test)]
#[allow(clippy::result_large_err)] // figment's Jail API fixes the error type.
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::time::Duration;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(default)]
    struct Sample {
        #[serde(with = "humantime_serde")]
        move_timeout: Duration,
        players: u32,
    }

    impl Default for Sample {
        fn default() -> Self {
            Self {
                move_timeout: Duration::from_secs(30),
                players: 4,
            }
        }
    }

    #[test]
    fn unknown_league_variables_are_named_with_the_closest_known_one() {
        let warnings = unknown_variables([
            "LEAGUE_MOVE_TIMOUT",
            "LEAGUE_MOVE_TIMEOUT",
            "LEAGUE_SOMETHING_ELSE_ENTIRELY",
            "PATH",
        ]);
        assert_eq!(
            warnings,
            [
                "LEAGUE_MOVE_TIMOUT is not a league setting (did you mean LEAGUE_MOVE_TIMEOUT?); ignored",
                "LEAGUE_SOMETHING_ELSE_ENTIRELY is not a league setting; ignored",
            ]
        );
    }

    #[test]
    fn the_known_variables_are_sorted_and_unique() {
        assert!(KNOWN_VARIABLES.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(KNOWN_VARIABLES.iter().all(|name| name.starts_with("LEAGUE_")));
    }

    fn jailed<T: DeserializeOwned>() -> Result<T, figment::Error> {
        load().map_err(|error| figment::Error::from(error.to_string()))
    }

    #[test]
    fn environment_overrides_defaults() {
        figment::Jail::expect_with(|jail| {
            assert_eq!(jailed::<Sample>()?, Sample::default());
            jail.set_env("LEAGUE_PLAYERS", "7");
            jail.set_env("LEAGUE_MOVE_TIMEOUT", "250ms");
            let loaded: Sample = jailed()?;
            assert_eq!(loaded.move_timeout, Duration::from_millis(250));
            assert_eq!(loaded.players, 7);
            Ok(())
        });
    }

    #[test]
    fn the_file_sits_between_defaults_and_environment() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("league.toml", "players = 9")?;
            jail.set_env(CONFIG_FILE_VAR, "league.toml");
            assert_eq!(jailed::<Sample>()?.players, 9);
            jail.set_env("LEAGUE_PLAYERS", "11");
            assert_eq!(jailed::<Sample>()?.players, 11);
            Ok(())
        });
    }
}
