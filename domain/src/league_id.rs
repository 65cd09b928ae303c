//! What a league id may be: 1 to 64 characters of `a`–`z`, `0`–`9`, `_` and `-`, the first a letter or a
//! digit (`^[a-z0-9][a-z0-9_-]{0,63}$`). Ids are shown on the public page and in URLs and name a results
//! folder, so the grammar leaves out everything that could mean something there: separators and `..`,
//! markup, control and bidirectional characters, and upper case (two ids differing only in case would
//! share a folder on a case-insensitive file system). The manager refuses any other id in any request
//! (docs/operations.md, docs/adr/0057-typed-ids.md).

use crate::id::{IdKind, text_id};

/// The grammar, as the refusal states it.
pub const GRAMMAR: &str = "1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or a digit (^[a-z0-9][a-z0-9_-]{0,63}$)";

/// The longest league id.
pub const MAX_LEN: usize = 64;

/// A league's id: always one the grammar above allows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeagueId(String);

text_id!(LeagueId, IdKind::League, is_valid);

/// Whether `text` is a league id.
fn is_valid(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && text.len() <= MAX_LEN
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar() {
        for good in ["league_2025_even_odd", "a", "0", "a-b_c", &"x".repeat(64)] {
            let parsed = LeagueId::parse(good).map(|id| id.to_string());
            assert_eq!(parsed.as_deref(), Ok(good));
        }
        for bad in [
            "",
            "../../tmp/x",
            "a/b",
            "..",
            ".hidden",
            "a\u{202e}b",
            "<script>",
            "_a",
            "-a",
            "A",
            "a b",
            "a.b",
            "é",
            &"x".repeat(65),
        ] {
            let refused = LeagueId::parse(bad).map_err(|error| error.to_string());
            assert!(
                refused
                    .as_ref()
                    .is_err_and(|why| why.contains("is not a league id: a league id is 1 to 64")),
                "{bad}: {refused:?}"
            );
            assert_eq!(LeagueId::try_from(bad.to_owned()).ok(), None, "{bad}");
        }
    }
}
