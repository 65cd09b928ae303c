//! Misbehaving bots, for exercising the referee's fault handling: timeouts, refusals, invalid moves and
//! connection errors, each on demand and by name.
//!
//! | name            | invitation        | move request                                        |
//! |-----------------|-------------------|-----------------------------------------------------|
//! | `silent`        | never answered    | never answered (pending until the caller gives up)  |
//! | `late:<millis>` | accepted          | a random move, after the delay                      |
//! | `invalid`       | accepted          | `{"parity_choice": "maybe"}`                        |
//! | `declines`      | declined          | a random move (should it be asked at all)           |
//! | `flaky:<n>`     | accepted          | `unavailable` (E009) the first n times, then random |
//!
//! Notifications (GAME_OVER, GAME_ERROR, league events) are always taken and remembered, so tests can see
//! what a faulty bot was told.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::behaviour::ParseBehaviourError;

/// One way of misbehaving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    Silent,
    Late(Duration),
    Invalid,
    Declines,
    /// Fails this many move requests (counted over the bot's life), then plays.
    Flaky(u32),
}

impl Fault {
    /// Every fault's configuration name, an argument shown as `<what>`.
    pub const NAMES: [&'static str; 5] = ["silent", "late:<millis>", "invalid", "declines", "flaky:<n>"];
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Silent => f.write_str("silent"),
            Fault::Late(delay) => write!(f, "late:{}", delay.as_millis()),
            Fault::Invalid => f.write_str("invalid"),
            Fault::Declines => f.write_str("declines"),
            Fault::Flaky(failures) => write!(f, "flaky:{failures}"),
        }
    }
}

impl FromStr for Fault {
    type Err = ParseBehaviourError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (name, argument) = match text.split_once(':') {
            Some((name, argument)) => (name, Some(argument)),
            None => (text, None),
        };
        let number = |argument: Option<&str>| {
            argument
                .and_then(|argument| argument.parse::<u32>().ok())
                .ok_or_else(|| ParseBehaviourError::BadArgument(text.to_owned()))
        };
        match (name, argument) {
            ("silent", None) => Ok(Fault::Silent),
            ("invalid", None) => Ok(Fault::Invalid),
            ("declines", None) => Ok(Fault::Declines),
            ("late", argument) => Ok(Fault::Late(Duration::from_millis(number(argument)?.into()))),
            ("flaky", argument) => Ok(Fault::Flaky(number(argument)?)),
            _ => Err(ParseBehaviourError::Unknown(text.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_round_trips_through_its_name() {
        for fault in [
            Fault::Silent,
            Fault::Late(Duration::from_millis(250)),
            Fault::Invalid,
            Fault::Declines,
            Fault::Flaky(3),
        ] {
            assert_eq!(fault.to_string().parse::<Fault>(), Ok(fault), "{fault}");
        }
        assert_eq!("late:0".parse::<Fault>(), Ok(Fault::Late(Duration::ZERO)));
    }

    #[test]
    fn arguments_are_required_where_needed_and_refused_elsewhere() {
        for bad in ["late", "late:", "late:soon", "late:-5", "flaky", "flaky:1.5"] {
            assert_eq!(
                bad.parse::<Fault>(),
                Err(ParseBehaviourError::BadArgument(bad.into())),
                "{bad}"
            );
        }
        for unknown in ["silent:5", "Silent", "crash", ""] {
            assert_eq!(
                unknown.parse::<Fault>(),
                Err(ParseBehaviourError::Unknown(unknown.into())),
                "{unknown}"
            );
        }
    }
}
