//! What a player's and a referee's id may be. The manager numbers the agents of each kind in the order
//! they register and names them by kind and number: `P01`, `P02` … `P100` for players, `REF01` … for
//! referees. Parsing accepts only that canonical spelling — the upper-case prefix, a number from 1,
//! two digits at least and a leading zero only to make two — so every accepted id prints back exactly
//! as written and two spellings never name the same agent.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use crate::id::{IdKind, InvalidId, text_id};

/// A registered player's id: `P` and its number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlayerId(String);

text_id!(PlayerId, IdKind::Player, is_player_id);

/// A registered referee's id: `REF` and its number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RefereeId(String);

text_id!(RefereeId, IdKind::Referee, is_referee_id);

const PLAYER: &str = "P";
const REFEREE: &str = "REF";

impl PlayerId {
    /// The id of the `number`th player to register.
    pub fn numbered(number: NonZeroU32) -> PlayerId {
        PlayerId(format!("{PLAYER}{number:02}"))
    }
}

impl RefereeId {
    /// The id of the `number`th referee to register.
    pub fn numbered(number: NonZeroU32) -> RefereeId {
        RefereeId(format!("{REFEREE}{number:02}"))
    }
}

fn is_player_id(text: &str) -> bool {
    text.strip_prefix(PLAYER).is_some_and(is_number)
}

fn is_referee_id(text: &str) -> bool {
    text.strip_prefix(REFEREE).is_some_and(is_number)
}

/// A number from 1 as the manager writes it: at least two digits, a leading zero only to make two.
/// `u32::from_str` alone would also take "+1", "1" and "001".
fn is_number(digits: &str) -> bool {
    digits.bytes().all(|b| b.is_ascii_digit())
        && digits
            .parse::<u32>()
            .is_ok_and(|number| number >= 1 && format!("{number:02}") == digits)
}

/// The agent credentials name: a player or a referee, told apart by the id itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AgentId {
    Player(PlayerId),
    Referee(RefereeId),
}

impl AgentId {
    pub fn as_str(&self) -> &str {
        match self {
            AgentId::Player(id) => id.as_str(),
            AgentId::Referee(id) => id.as_str(),
        }
    }
}

impl FromStr for AgentId {
    type Err = InvalidId;

    fn from_str(text: &str) -> Result<AgentId, InvalidId> {
        let refused = || InvalidId::new(IdKind::Agent, text);
        if text.starts_with(REFEREE) {
            RefereeId::parse(text)
                .map(AgentId::Referee)
                .map_err(|_| refused())
        } else {
            PlayerId::parse(text).map(AgentId::Player).map_err(|_| refused())
        }
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<PlayerId> for AgentId {
    fn from(id: PlayerId) -> AgentId {
        AgentId::Player(id)
    }
}

impl From<RefereeId> for AgentId {
    fn from(id: RefereeId) -> AgentId {
        AgentId::Referee(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings no agent is named: empty, case, padding, signs, zero, spaces, other digits, overflow.
    const NOT_NUMBERED: [&str; 14] = [
        "",
        "1",
        "001",
        "00",
        "0",
        "+1",
        "-1",
        " 01",
        "01 ",
        "1.0",
        "１２",
        "x1",
        "4294967296",
        "01a",
    ];

    #[test]
    fn agents_are_their_kind_and_number() {
        for number in [1, 2, 9, 10, 12, 99, 100, 12345, u32::MAX] {
            let Some(number) = NonZeroU32::new(number) else {
                continue;
            };
            let player = PlayerId::numbered(number);
            let referee = RefereeId::numbered(number);
            assert_eq!(PlayerId::parse(player.as_str()), Ok(player.clone()));
            assert_eq!(RefereeId::parse(referee.as_str()), Ok(referee.clone()));
            assert_eq!(player.as_str().parse(), Ok(AgentId::Player(player)));
            assert_eq!(referee.as_str().parse(), Ok(AgentId::Referee(referee)));
        }
        let first = NonZeroU32::MIN;
        assert_eq!(PlayerId::numbered(first).to_string(), "P01");
        assert_eq!(RefereeId::numbered(first).to_string(), "REF01");
        assert_eq!(PlayerId::parse("P100").map(String::from).as_deref(), Ok("P100"));
    }

    #[test]
    fn anything_else_is_refused_with_the_grammar() {
        for digits in NOT_NUMBERED {
            for (prefix, kind) in [("P", IdKind::Player), ("REF", IdKind::Referee)] {
                let text = format!("{prefix}{digits}");
                let refused = match kind {
                    IdKind::Player => PlayerId::parse(&text).map(|_| ()),
                    _ => RefereeId::parse(&text).map(|_| ()),
                };
                assert_eq!(refused, Err(InvalidId::new(kind, &text)), "{text:?}");
                assert_eq!(text.parse::<AgentId>(), Err(InvalidId::new(IdKind::Agent, &text)));
            }
        }
        for text in [
            "p01", "ref01", "Ref01", "PREF01", "R01", "REFP01", "P-alice", "league",
        ] {
            assert!(PlayerId::parse(text).is_err(), "{text}");
            assert!(RefereeId::parse(text).is_err(), "{text}");
            assert!(text.parse::<AgentId>().is_err(), "{text}");
        }
        assert_eq!(
            PlayerId::parse("REF01").map_err(|error| error.to_string()),
            Err(
                "\"REF01\" is not a player id: a player id is P and its number, counted from 1 and \
                 written with at least two digits (P01, P12, P100)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_player_id_is_not_a_referee_id() {
        assert!(RefereeId::parse("P01").is_err());
        assert!(PlayerId::parse("REF01").is_err());
    }
}
