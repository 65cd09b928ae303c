//! Match ids: `R<round>M<number>`, the name a match goes by on the wire, in the database and in logs.
//! The manager's schedule makes them; everyone else parses them where they arrive.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use crate::id::{IdKind, InvalidId};

/// Which match of which round, both counted from 1.
///
/// Written `R<round>M<number>` ("R1M1", "R12M25"). Parsing accepts only that canonical form — an
/// uppercase `R` and `M`, decimal digits, no sign, no leading zero, no zero — so every accepted id
/// prints back exactly as it was written and two spellings never name the same match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MatchId {
    // Never zero, which also makes an `Option<MatchId>` 8 bytes: a player host keeps one for every game
    // each of its bots played (ADR 0059).
    round: NonZeroU32,
    number: NonZeroU32,
}

impl MatchId {
    /// Both numbers must be at least 1; only the manager's schedule makes ids this way (a zero, which
    /// only a bug could pass, fails debug builds and counts as 1 in release ones).
    pub fn new(round: u32, number: u32) -> Self {
        debug_assert!(round >= 1 && number >= 1, "match ids count from 1");
        let at_least_one = |n| NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        Self {
            round: at_least_one(round),
            number: at_least_one(number),
        }
    }

    /// `text` as a match id, or why it is not one.
    pub fn parse(text: &str) -> Result<MatchId, InvalidId> {
        text.parse()
    }

    pub fn round(self) -> u32 {
        self.round.get()
    }

    /// The match's place within its round.
    pub fn number(self) -> u32 {
        self.number.get()
    }
}

impl fmt::Display for MatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R{}M{}", self.round, self.number)
    }
}

impl FromStr for MatchId {
    type Err = InvalidId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parsed = s
            .strip_prefix('R')
            .and_then(|rest| rest.split_once('M'))
            .and_then(|(round, number)| {
                Some(Self {
                    round: counter(round)?,
                    number: counter(number)?,
                })
            });
        parsed.ok_or_else(|| InvalidId::new(IdKind::Match, s))
    }
}

/// The match a string names, when it names one: the same as comparing with the id's canonical text.
impl PartialEq<str> for MatchId {
    fn eq(&self, other: &str) -> bool {
        other.parse::<MatchId>().is_ok_and(|id| id == *self)
    }
}

impl PartialEq<&str> for MatchId {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for MatchId {
    fn eq(&self, other: &String) -> bool {
        *self == *other.as_str()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for MatchId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for MatchId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<MatchId, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A count from 1 in canonical decimal. `u32::from_str` alone would also take "+1" and "01".
fn counter(digits: &str) -> Option<NonZeroU32> {
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_round_and_number() {
        assert_eq!(MatchId::new(1, 1).to_string(), "R1M1");
        assert_eq!(MatchId::new(12, 25).to_string(), "R12M25");
    }

    #[test]
    fn parses_what_it_displays() {
        for round in (1..=40).chain([999, u32::MAX]) {
            for number in (1..=40).chain([1000, u32::MAX]) {
                let id = MatchId::new(round, number);
                assert_eq!(id.to_string().parse::<MatchId>(), Ok(id));
            }
        }
        let id: MatchId = "R12M25".parse().unwrap();
        assert_eq!((id.round(), id.number()), (12, 25));
    }

    #[test]
    fn rejects_anything_but_the_canonical_form() {
        let rejected = [
            "",
            "R",
            "M",
            "RM",
            "R1",
            "R1M",
            "RM1",
            "R0M1",
            "R1M0",
            "R0M0",
            "R01M1",
            "R1M01",
            "r1m1",
            "R1m1",
            "r1M1",
            " R1M1",
            "R1M1 ",
            "R+1M1",
            "R1M+1",
            "R-1M1",
            "R1M1M1",
            "R1MM1",
            "M1R1",
            "R1.0M1",
            "R１M1",
            "R4294967296M1",
            "R1M4294967296",
            "RxM1",
        ];
        for input in rejected {
            let error = input.parse::<MatchId>().unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "{input:?} is not a match id: a match id is R<round>M<number>, both counted from 1 \
                     and written without leading zeros (R1M1, R12M25)"
                )
            );
        }
    }

    #[test]
    fn equals_its_canonical_text_only() {
        let id = MatchId::new(12, 25);
        let owned = String::from("R12M25");
        assert!(id == "R12M25" && id == *"R12M25" && id == owned);
        assert!(id != "R12M025" && id != "R12M26" && id != "r12m25" && id != "");
    }

    #[test]
    fn orders_by_round_then_number() {
        let mut ids = [
            MatchId::new(2, 1),
            MatchId::new(1, 10),
            MatchId::new(1, 2),
            MatchId::new(10, 1),
        ];
        ids.sort();
        let written: Vec<_> = ids.iter().map(MatchId::to_string).collect();
        assert_eq!(written, ["R1M2", "R1M10", "R2M1", "R10M1"]);
    }
}
