//! Checks of the launcher's options, made as they are parsed: a wrong value is refused at once with what
//! is wrong, before anything starts.

use std::time::Duration;

use league_domain::{GameType, Timing};
use league_proto::v2::MatchTiming;

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

/// The match timings `league run` and `league serve` give the league they open. Their defaults are the
/// league's own ([`Timing::default`]), shown as durations: written once, there.
#[derive(Debug, Clone, clap::Args)]
pub struct TimingArgs {
    /// Time for a player to acknowledge an invitation.
    #[arg(
        long,
        default_value_t = shown(Timing::default().join_timeout),
        allow_hyphen_values = true,
        value_parser = positive_duration
    )]
    pub join_timeout: String,
    /// Time for a player to answer a move request.
    #[arg(
        long,
        default_value_t = shown(Timing::default().move_timeout),
        allow_hyphen_values = true,
        value_parser = positive_duration
    )]
    pub move_timeout: String,
    /// Pause between attempts after a timeout or connection error.
    #[arg(
        long,
        default_value_t = shown(Timing::default().retry_delay),
        allow_hyphen_values = true,
        value_parser = duration
    )]
    pub retry_delay: String,
    /// Attempts before a technical loss.
    #[arg(long, default_value_t = Timing::default().max_attempts)]
    pub max_attempts: u32,
    /// How long every bot thinks before each move (e.g. 300ms: a league at a pace people can watch on
    /// the live page). The same for every bot, so no strategy gains by it; less than --move-timeout.
    #[arg(
        long,
        default_value_t = shown(Duration::ZERO),
        allow_hyphen_values = true,
        value_parser = duration
    )]
    pub think_time: String,
}

impl TimingArgs {
    /// Refuses a think time that would make every move late.
    pub fn check(&self) -> anyhow::Result<Duration> {
        let think = parse(&self.think_time).map_err(anyhow::Error::msg)?;
        let moves = parse(&self.move_timeout).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            think < moves,
            "--think-time {} is not less than --move-timeout {}: every move would be late",
            self.think_time,
            self.move_timeout
        );
        Ok(think)
    }

    /// The timings as the contracts carry them (the rest: the manager's defaults).
    pub fn proto(&self) -> anyhow::Result<MatchTiming> {
        Ok(MatchTiming {
            join_timeout: Some(proto_duration(&self.join_timeout)?),
            move_timeout: Some(proto_duration(&self.move_timeout)?),
            retry_delay: Some(proto_duration(&self.retry_delay)?),
            max_attempts: self.max_attempts,
            ..MatchTiming::default()
        })
    }
}

/// A duration as the options write it (`5s`, `250ms`).
fn shown(duration: Duration) -> String {
    humantime_serde::re::humantime::format_duration(duration).to_string()
}

/// A duration option as the contracts carry it.
pub fn proto_duration(text: &str) -> anyhow::Result<prost_types::Duration> {
    let duration = parse(text).map_err(anyhow::Error::msg)?;
    Ok(prost_types::Duration::try_from(duration)?)
}

/// What `--game` takes, for its `--help`: the games the league knows (league_domain::GameType).
pub fn game_help() -> String {
    format!("The game: {}", GameType::names())
}

/// A list of bot behaviours (`random,adaptive,late:200`).
pub fn strategies(text: &str) -> Result<String, String> {
    league_player::Behaviour::parse_list(text)
        .map(|_| text.to_owned())
        .map_err(|error| error.to_string())
}

/// Refuses `llm` bots when no chat endpoint is configured (`LEAGUE_LLM_*`), or in a league of a game
/// other than even_odd (the only game the model is asked about), before anything starts.
pub fn check_llm(strategies: &str, game: GameType) -> anyhow::Result<()> {
    let behaviours = league_player::Behaviour::parse_list(strategies)?;
    let llm = behaviours.contains(&league_player::Behaviour::Llm);
    let asked = GameType::EvenOdd;
    anyhow::ensure!(
        !llm || game == asked,
        "the llm strategy plays only {asked}: in {game} its bots would play adaptive's moves every time; \
         use --game {asked} or take llm out of --strategies",
    );
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
    fn the_timing_defaults_are_the_leagues_own() {
        #[derive(Debug, clap::Parser)]
        struct Only {
            #[command(flatten)]
            timing: TimingArgs,
        }
        let parsed = <Only as clap::Parser>::try_parse_from(["x"]).expect("the defaults parse");
        let timing = parsed.timing.proto().expect("valid durations");
        let defaults = Timing::default();
        assert_eq!(parsed.timing.join_timeout, "5s");
        assert_eq!(
            Timing::from_proto(Some(&timing)).join_timeout,
            defaults.join_timeout
        );
        assert_eq!(
            Timing::from_proto(Some(&timing)).move_timeout,
            defaults.move_timeout
        );
        assert_eq!(
            Timing::from_proto(Some(&timing)).retry_delay,
            defaults.retry_delay
        );
        assert_eq!(timing.max_attempts, defaults.max_attempts);
        assert_eq!(parsed.timing.check().expect("no think time"), Duration::ZERO);
        let slow = <Only as clap::Parser>::try_parse_from(["x", "--think-time", "30s"])
            .expect("a duration")
            .timing
            .check()
            .expect_err("as long as a move may take");
        assert_eq!(
            slow.to_string(),
            "--think-time 30s is not less than --move-timeout 30s: every move would be late"
        );
    }

    #[test]
    fn league_ids_are_checked_as_they_are_parsed() {
        #[derive(Debug, clap::Parser)]
        struct Only {
            #[arg(long)]
            league: Option<league_domain::LeagueId>,
        }
        let parsed = <Only as clap::Parser>::try_parse_from(["x", "--league", "even_odd-20261129-0212"]);
        assert_eq!(
            parsed
                .map(|only| only.league.map(String::from))
                .ok()
                .flatten()
                .as_deref(),
            Some("even_odd-20261129-0212")
        );
        let refused = <Only as clap::Parser>::try_parse_from(["x", "--league", "../x"]);
        assert!(refused.is_err_and(|error| error.to_string().contains("is not a league id")));
    }

    #[test]
    fn strategies_are_checked_as_they_are_parsed() {
        assert!(strategies("random, adaptive,late:200").is_ok());
        assert!(
            strategies("random,clever").is_err_and(|error| error.contains("unknown behaviour \"clever\""))
        );
    }

    #[test]
    fn llm_bots_are_refused_in_other_games_with_what_to_do() {
        let refused = check_llm("adaptive,llm", GameType::TicTacToe).expect_err("only even_odd");
        assert!(
            refused.to_string().contains("plays only even_odd") && refused.to_string().contains("--game"),
            "{refused}"
        );
        assert!(check_llm("adaptive,random", GameType::TicTacToe).is_ok());
    }

    #[test]
    fn games_and_strategies_default_to_the_leagues_own() {
        #[derive(Debug, clap::Parser)]
        struct Only {
            #[arg(long, help = game_help(), default_value_t = GameType::default())]
            game: GameType,
        }
        let parse = |args: &[&str]| <Only as clap::Parser>::try_parse_from(args).map(|only| only.game);
        assert_eq!(parse(&["x"]).ok(), Some(GameType::default()));
        assert_eq!(
            parse(&["x", "--game", "tic_tac_toe"]).ok(),
            Some(GameType::TicTacToe)
        );
        let refused = parse(&["x", "--game", "chess"]).expect_err("no chess here");
        assert!(refused.to_string().contains("even_odd, tic_tac_toe"), "{refused}");
        let run = crate::run::RunArgs::defaults().expect("the defaults parse");
        assert_eq!(run.game, GameType::default());
        assert_eq!(run.strategies, league_player::StrategyKind::every());
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
