//! Checks of the launcher's options, made as they are parsed: a wrong value is refused at once with what
//! is wrong, before anything starts.

use std::time::Duration;

/// The most matches one local run may schedule: beyond it a run takes days and its schedule alone
/// fills the database (100 000 players would be 5 billion matches).
pub const MAX_MATCHES: u64 = 1_000_000;

/// A humantime duration (`5s`, `250ms`, `2m`), kept as written (the services parse it again).
pub fn duration(text: &str) -> Result<String, String> {
    parse(text).map(|_| text.to_owned())
}

/// [`duration`], more than zero.
pub fn positive_duration(text: &str) -> Result<String, String> {
    match parse(text)? {
        zero if zero.is_zero() => Err(format!("{text:?} is zero; it must be more than zero")),
        _ => Ok(text.to_owned()),
    }
}

/// A game a referee can run.
pub fn game(text: &str) -> Result<String, String> {
    league_domain::GameType::known(text)
        .map(|_| text.to_owned())
        .map_err(|error| error.to_string())
}

/// A list of bot behaviours (`random,adaptive,late:200`).
pub fn strategies(text: &str) -> Result<String, String> {
    league_player::Behaviour::parse_list(text)
        .map(|_| text.to_owned())
        .map_err(|error| error.to_string())
}

/// Refuses `llm` bots when no chat endpoint is configured (`LEAGUE_LLM_*`), before anything starts.
pub fn check_llm(strategies: &str) -> anyhow::Result<()> {
    let behaviours = league_player::Behaviour::parse_list(strategies)?;
    let specs: Vec<league_player::BotSpec> = behaviours
        .into_iter()
        .map(|behaviour| league_player::BotSpec {
            display_name: String::new(),
            behaviour,
        })
        .collect();
    let config: league_player::llm::LlmConfig = league_runtime::config::load()?;
    league_player::app::unavailable_llm(&specs, &config)
}

/// Parses `text` as a duration.
pub fn parse(text: &str) -> Result<Duration, String> {
    if text.trim_start().starts_with('-') {
        return Err(format!(
            "{text:?} is negative; a duration is at least zero (e.g. 5s, 250ms)"
        ));
    }
    humantime_serde::re::humantime::parse_duration(text)
        .map_err(|error| format!("{text:?} is not a duration ({error}); write e.g. 5s, 250ms, 2m"))
}

/// Matches in a round robin of `players`, played `cycles` times.
pub fn matches(players: u32, cycles: u32) -> u64 {
    let players = u64::from(players);
    players * players.saturating_sub(1) / 2 * u64::from(cycles)
}

/// Refuses a league too small to play or too large to finish.
pub fn check_size(players: u32, cycles: u32) -> anyhow::Result<()> {
    anyhow::ensure!(players >= 2, "a league needs at least 2 players");
    let matches = matches(players, cycles);
    anyhow::ensure!(
        matches <= MAX_MATCHES,
        "{players} players would play {matches} matches; a local run plays at most {MAX_MATCHES} \
         (about {} players in a single round robin)",
        largest_league(cycles)
    );
    Ok(())
}

/// The most players whose league stays within [`MAX_MATCHES`].
fn largest_league(cycles: u32) -> u32 {
    let cycles = cycles.max(1);
    (2..=u32::MAX)
        .take_while(|&players| matches(players, cycles) <= MAX_MATCHES)
        .last()
        .unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_and_malformed_durations_say_what_is_wrong() {
        assert_eq!(duration("250ms"), Ok("250ms".to_owned()));
        assert_eq!(duration("0s"), Ok("0s".to_owned()));
        assert!(duration("-1s").is_err_and(|error| error.contains("negative")));
        assert!(positive_duration("0s").is_err_and(|error| error.contains("more than zero")));
        assert!(duration("soon").is_err_and(|error| error.contains("not a duration")));
    }

    #[test]
    fn strategies_are_checked_as_they_are_parsed() {
        assert!(strategies("random, adaptive,late:200").is_ok());
        assert!(
            strategies("random,clever").is_err_and(|error| error.contains("unknown behaviour \"clever\""))
        );
    }

    #[test]
    fn unknown_games_list_the_known_ones() {
        assert_eq!(game("tic_tac_toe"), Ok("tic_tac_toe".to_owned()));
        let refused = game("chess").expect_err("no chess here");
        assert!(refused.contains("even_odd, tic_tac_toe"), "{refused}");
    }

    #[test]
    fn absurd_sizes_are_refused_with_the_number_of_matches() {
        assert!(check_size(1, 1).is_err());
        assert!(check_size(1414, 1).is_ok());
        let refused = check_size(100_000, 1).expect_err("5 billion matches");
        assert!(
            refused
                .to_string()
                .starts_with("100000 players would play 4999950000 matches")
        );
        assert!(refused.to_string().contains("about 1414 players"), "{refused}");
        assert!(check_size(1414, 2).is_err());
    }
}
