//! The league.v2 revision an agent says it speaks (`player_meta.protocol_version`,
//! `referee_meta.protocol_version`), read once at the boundary into one type. Agents write it many ways
//! — `"2.1.0"`, `"2.1"`, `"2"`, `"v2"`, `"league.v2"` — and all of those are league.v2; only a revision
//! really older than [`ProtocolVersion::MINIMUM`] is refused (E018).

use std::fmt;
use std::str::FromStr;

/// A protocol revision, `major.minor.patch`; missing parts are zero (`"2.1"` is 2.1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl ProtocolVersion {
    /// The revision the league speaks, assumed for an agent that names none.
    pub const CURRENT: ProtocolVersion = ProtocolVersion::new(2, 1, 0);
    /// The oldest revision the league accepts.
    pub const MINIMUM: ProtocolVersion = ProtocolVersion::new(2, 0, 0);

    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self { major, minor, patch }
    }

    /// Whether the league speaks with an agent of this revision (anything from 2.0.0 on).
    pub fn is_supported(self) -> bool {
        self >= Self::MINIMUM
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Not a protocol revision at all (`"two"`, `"2.x"`, `""`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAVersion(pub String);

impl fmt::Display for NotAVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a protocol version (e.g. \"2.1.0\" or \"league.v2\")",
            self.0
        )
    }
}

impl std::error::Error for NotAVersion {}

impl FromStr for ProtocolVersion {
    type Err = NotAVersion;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = || NotAVersion(text.to_owned());
        let trimmed = text.trim();
        let lower = trimmed.to_ascii_lowercase();
        // `league.v2`, `league.v2.1`, `v2.1.0`, `2.1.0`: the protocol's name and a `v` are decoration.
        let numbers = lower.strip_prefix("league.").unwrap_or(&lower);
        let numbers = numbers.strip_prefix('v').unwrap_or(numbers);
        let mut parts = numbers.split('.');
        let mut next = |required: bool| match parts.next() {
            None if !required => Ok(0),
            Some(part) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
                part.parse::<u32>().map_err(|_| fail())
            }
            _ => Err(fail()),
        };
        let version = ProtocolVersion::new(next(true)?, next(false)?, next(false)?);
        if parts.next().is_some() {
            return Err(fail());
        }
        Ok(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ProtocolVersion, NotAVersion> {
        text.parse()
    }

    #[test]
    fn every_spelling_of_league_v2_is_current_enough() {
        for text in [
            "league.v2",
            "LEAGUE.V2",
            "2",
            "2.1",
            "2.1.0",
            "v2",
            "v2.1.0",
            "league.v2.1",
            " 2.0.0 ",
        ] {
            let version = read(text).unwrap_or_else(|e| panic!("{e}"));
            assert!(version.is_supported(), "{text} → {version}");
        }
        assert_eq!(read("2.1"), Ok(ProtocolVersion::CURRENT));
        assert_eq!(read("league.v2").map(|v| v.to_string()).as_deref(), Ok("2.0.0"));
    }

    #[test]
    fn only_older_revisions_are_unsupported() {
        for text in ["1.9.9", "1", "1.0", "league.v1", "v0.9"] {
            assert!(!read(text).is_ok_and(ProtocolVersion::is_supported), "{text}");
        }
        assert!(read("3.0").is_ok_and(ProtocolVersion::is_supported));
    }

    #[test]
    fn text_that_is_no_version_is_told_apart() {
        for text in ["two", "", "2.x", "2..1", "2.1.0.0", "-2", "league.", "v"] {
            assert!(read(text).is_err(), "{text}");
        }
    }
}
