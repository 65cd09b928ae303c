//! What the league's ids share (docs/adr/0057-typed-ids.md). An id is parsed once, where a string
//! enters — a request, an option, a stored row — into its own type ([`LeagueId`], [`PlayerId`],
//! [`RefereeId`], [`AgentId`], [`MatchId`]), so a value of one is always a well-formed id of its kind
//! and a player id cannot be passed where a league id is meant. Each id is written and read as the plain
//! string (`Display`, `FromStr`, `as_str`, serde), so no wire format or column changes.
//!
//! [`LeagueId`]: crate::LeagueId
//! [`PlayerId`]: crate::PlayerId
//! [`RefereeId`]: crate::RefereeId
//! [`AgentId`]: crate::AgentId
//! [`MatchId`]: crate::MatchId

use std::fmt;

/// Which id a string was meant to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    League,
    Player,
    Referee,
    /// A player's or a referee's id, as credentials carry it.
    Agent,
    Match,
}

impl IdKind {
    /// The id's name in a sentence, with its article: "a league id", "an agent id".
    pub const fn a_name(self) -> &'static str {
        match self {
            IdKind::League => "a league id",
            IdKind::Player => "a player id",
            IdKind::Referee => "a referee id",
            IdKind::Agent => "an agent id",
            IdKind::Match => "a match id",
        }
    }

    /// What an id of this kind is, as a refusal states it.
    pub const fn grammar(self) -> &'static str {
        match self {
            IdKind::League => crate::league_id::GRAMMAR,
            IdKind::Player => {
                "P and its number, counted from 1 and written with at least two digits (P01, P12, P100)"
            }
            IdKind::Referee => {
                "REF and its number, counted from 1 and written with at least two digits (REF01, REF12, REF100)"
            }
            IdKind::Agent => "a player id (P01, P12, P100) or a referee id (REF01, REF12, REF100)",
            IdKind::Match => {
                "R<round>M<number>, both counted from 1 and written without leading zeros (R1M1, R12M25)"
            }
        }
    }
}

/// A string that is not an id of the kind it was meant to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidId {
    kind: IdKind,
    /// The start of the string, as the refusal quotes it.
    shown: String,
    /// Whether the string was longer than what is quoted.
    cut: bool,
}

/// How many characters of a refused string the refusal quotes: enough to recognise it, never a whole
/// megabyte sent as an id.
const QUOTED: usize = 80;

impl InvalidId {
    pub fn new(kind: IdKind, text: &str) -> Self {
        InvalidId {
            kind,
            shown: text.chars().take(QUOTED).collect(),
            cut: text.chars().nth(QUOTED).is_some(),
        }
    }

    pub fn kind(&self) -> IdKind {
        self.kind
    }
}

impl fmt::Display for InvalidId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let more = if self.cut { "…" } else { "" };
        let name = self.kind.a_name();
        write!(
            f,
            "{:?}{more} is not {name}: {name} is {}",
            self.shown,
            self.kind.grammar()
        )
    }
}

impl std::error::Error for InvalidId {}

/// The impls every id kept as its text shares: `$id(String)` holds a string that `$valid` accepted.
macro_rules! text_id {
    ($id:ident, $kind:expr, $valid:path) => {
        impl $id {
            /// `text` as this id, or why it is not one.
            pub fn parse(text: &str) -> Result<$id, $crate::id::InvalidId> {
                if $valid(text) {
                    Ok($id(text.to_owned()))
                } else {
                    Err($crate::id::InvalidId::new($kind, text))
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $id {
            type Error = $crate::id::InvalidId;

            fn try_from(text: String) -> Result<$id, $crate::id::InvalidId> {
                if $valid(&text) {
                    Ok($id(text))
                } else {
                    Err($crate::id::InvalidId::new($kind, &text))
                }
            }
        }

        impl std::str::FromStr for $id {
            type Err = $crate::id::InvalidId;

            fn from_str(text: &str) -> Result<$id, $crate::id::InvalidId> {
                $id::parse(text)
            }
        }

        impl std::fmt::Display for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $id {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        /// Maps and sets keyed by the id are looked up with the plain string too.
        impl std::borrow::Borrow<str> for $id {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<$id> for String {
            fn from(id: $id) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $id {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $id {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $id {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $id {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $id {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<$id, D::Error> {
                let text = <String as serde::Deserialize>::deserialize(deserializer)?;
                $id::try_from(text).map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use text_id;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_kind_and_its_grammar() {
        let refused = InvalidId::new(IdKind::Player, "p1").to_string();
        assert_eq!(
            refused,
            "\"p1\" is not a player id: a player id is P and its number, counted from 1 and written with \
             at least two digits (P01, P12, P100)"
        );
    }

    #[test]
    fn a_refusal_quotes_the_start_of_a_long_string() {
        let long = "x".repeat(1_000);
        let refused = InvalidId::new(IdKind::League, &long).to_string();
        assert!(
            refused.starts_with(&format!("{:?}… is not a league id", "x".repeat(80))),
            "{refused}"
        );
        let exact = InvalidId::new(IdKind::League, &"x".repeat(80)).to_string();
        assert!(!exact.contains('…'), "{exact}");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn ids_are_plain_strings_in_json() {
        use crate::{LeagueId, MatchId, PlayerId, RefereeId};
        let json = r#"["league_1","P01","REF02","R1M2"]"#;
        let ids: (LeagueId, PlayerId, RefereeId, MatchId) =
            serde_json::from_str(json).expect("well-formed ids");
        assert_eq!(ids.3, MatchId::new(1, 2));
        assert_eq!(serde_json::to_string(&ids).expect("written"), json);
        let refused = serde_json::from_str::<PlayerId>(r#""p1""#).map_err(|error| error.to_string());
        assert!(refused.is_err_and(|why| why.contains("\"p1\" is not a player id")));
        assert!(serde_json::from_str::<MatchId>(r#""R0M1""#).is_err());
    }
}
