//! What a bot does, as one value parsed from one name: a strategy ("adaptive") or a fault ("late:500"),
//! so that a configuration list such as `"random,adaptive,silent"` describes a whole pool of bots.

use std::fmt;
use std::str::FromStr;

use crate::fault::Fault;
use crate::strategy::StrategyKind;

/// How one bot behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behaviour {
    Strategy(StrategyKind),
    Fault(Fault),
    /// Asks a language model (see [`crate::llm`]), playing adaptive whenever that fails.
    Llm,
}

/// The configuration name of [`Behaviour::Llm`].
pub const LLM: &str = "llm";

/// Every behaviour's name: the strategies, `llm`, then the faults — the one list that `--help`, the
/// errors and the documentation's words come from.
pub fn names() -> Vec<&'static str> {
    StrategyKind::ALL
        .map(StrategyKind::as_str)
        .into_iter()
        .chain([LLM])
        .chain(Fault::NAMES)
        .collect()
}

/// What `--strategies` takes, for its `--help`: every name from [`names`], what `llm` needs, and which
/// names are faults.
pub fn help() -> String {
    let strategies = StrategyKind::ALL.map(StrategyKind::as_str).join(", ");
    let faults = Fault::NAMES.join(", ");
    format!(
        "Bot behaviours, assigned to the bots in turn (comma-separated). Strategies: {strategies}; \
         {LLM} (asks a language model in even_odd matches, playing adaptive when it is slow, down or \
         answers nonsense, and in other games; needs LEAGUE_LLM_URL and LEAGUE_LLM_MODEL). For testing \
         the referee's fault handling: {faults}"
    )
}

impl Behaviour {
    /// A comma-separated list, e.g. `"random, adaptive,late:200"`; spaces around names are ignored.
    pub fn parse_list(text: &str) -> Result<Vec<Behaviour>, ParseBehaviourError> {
        text.split(',').map(|name| name.trim().parse()).collect()
    }
}

impl From<StrategyKind> for Behaviour {
    fn from(kind: StrategyKind) -> Behaviour {
        Behaviour::Strategy(kind)
    }
}

impl From<Fault> for Behaviour {
    fn from(fault: Fault) -> Behaviour {
        Behaviour::Fault(fault)
    }
}

impl fmt::Display for Behaviour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Behaviour::Strategy(kind) => kind.fmt(f),
            Behaviour::Fault(fault) => fault.fmt(f),
            Behaviour::Llm => f.write_str(LLM),
        }
    }
}

/// A behaviour name that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseBehaviourError {
    #[error("unknown behaviour {0:?}: expected one of {known}", known = names().join(", "))]
    Unknown(String),
    #[error("{0:?} needs a whole number after the colon, e.g. late:500 or flaky:2")]
    BadArgument(String),
}

impl FromStr for Behaviour {
    type Err = ParseBehaviourError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if name == LLM {
            return Ok(Behaviour::Llm);
        }
        match name.parse::<StrategyKind>() {
            Ok(kind) => Ok(Behaviour::Strategy(kind)),
            Err(_) => name.parse().map(Behaviour::Fault),
        }
    }
}

/// Read from configuration as its name.
impl<'de> serde::Deserialize<'de> for Behaviour {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde::Deserialize;
    use serde::de::value::{Error, StrDeserializer};

    use super::*;

    #[test]
    fn a_configuration_list_names_strategies_and_faults() {
        let parsed = Behaviour::parse_list("random, adaptive,silent,late:200,flaky:2");
        assert_eq!(
            parsed,
            Ok(vec![
                StrategyKind::Random.into(),
                StrategyKind::Adaptive.into(),
                Fault::Silent.into(),
                Fault::Late(Duration::from_millis(200)).into(),
                Fault::Flaky(2).into(),
            ])
        );
        assert_eq!(
            Behaviour::parse_list("random,,adaptive"),
            Err(ParseBehaviourError::Unknown(String::new()))
        );
        assert_eq!(
            Behaviour::parse_list("random,bogus"),
            Err(ParseBehaviourError::Unknown("bogus".into()))
        );
    }

    #[test]
    fn every_name_round_trips() {
        let faults = [
            Fault::Silent,
            Fault::Late(Duration::from_millis(7)),
            Fault::Invalid,
            Fault::Declines,
            Fault::Flaky(1),
        ];
        let all = StrategyKind::ALL
            .map(Behaviour::from)
            .into_iter()
            .chain(faults.map(Behaviour::from));
        for behaviour in all {
            assert_eq!(
                behaviour.to_string().parse::<Behaviour>(),
                Ok(behaviour),
                "{behaviour}"
            );
        }
    }

    #[test]
    fn the_one_list_names_every_behaviour_and_each_name_parses() {
        let names = names();
        for name in &names {
            let example = name.replace("<millis>", "200").replace("<n>", "2");
            assert!(example.parse::<Behaviour>().is_ok(), "{name}");
            assert!(help().contains(name), "--help lacks {name}");
        }
        assert!(names.contains(&LLM) && names.contains(&"adaptive") && names.contains(&"flaky:<n>"));
        let refused = "bogus".parse::<Behaviour>().expect_err("unknown");
        assert!(refused.to_string().ends_with(&names.join(", ")), "{refused}");
    }

    #[test]
    fn configuration_reads_a_behaviour_from_its_name() {
        let read = |name| Behaviour::deserialize(StrDeserializer::<Error>::new(name));
        assert_eq!(read("always_odd"), Ok(StrategyKind::AlwaysOdd.into()));
        assert!(read("late:x").is_err_and(|error| error.to_string().contains("whole number")));
    }
}
