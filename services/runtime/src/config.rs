//! Layered configuration for every binary: the struct's defaults < a TOML file named by `LEAGUE_CONFIG`
//! < `LEAGUE_*` environment variables (plus `DATABASE_URL`). Compose, Kubernetes and the local
//! launcher all configure the services through these same variables.
//!
//! `LEAGUE_MOVE_TIMEOUT=250ms` sets the field `move_timeout`; durations are humantime strings
//! ("5s", "250ms"). Each service's struct takes the fields it knows and ignores the rest, because all
//! services share one variable namespace.

use figment::Figment;
use figment::providers::{Env, Format, Toml};
use serde::de::DeserializeOwned;

/// Environment variable naming an optional TOML configuration file.
pub const CONFIG_FILE_VAR: &str = "LEAGUE_CONFIG";

/// Loads `T` from its defaults (`#[serde(default)]`), the optional file, and the environment.
pub fn load<T: DeserializeOwned>() -> anyhow::Result<T> {
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
