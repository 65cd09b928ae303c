//! What a league id may be: 1 to 64 characters of `a`–`z`, `0`–`9`, `_` and `-`, the first a letter or a
//! digit (`^[a-z0-9][a-z0-9_-]{0,63}$`). Ids are shown on the public page and in URLs and name a results
//! folder, so the grammar leaves out everything that could mean something there: separators and `..`,
//! markup, control and bidirectional characters, and upper case (two ids differing only in case would
//! share a folder on a case-insensitive file system). The manager refuses any other id when a league is
//! created (docs/operations.md).

/// The grammar, as the refusal states it.
pub const GRAMMAR: &str = "1 to 64 characters of a-z, 0-9, '_' and '-', starting with a letter or a digit (^[a-z0-9][a-z0-9_-]{0,63}$)";

/// The longest league id.
pub const MAX_LEN: usize = 64;

/// Whether `text` is a league id.
pub fn is_valid(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && text.len() <= MAX_LEN
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Why `text` is not a league id, or `None` when it is one.
pub fn refusal(text: &str) -> Option<String> {
    (!is_valid(text)).then(|| {
        let shown: String = text.chars().take(80).collect();
        let more = if text.chars().count() > 80 { "…" } else { "" };
        format!("league_id {shown:?}{more} is not a league id: a league id is {GRAMMAR}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar() {
        for good in ["league_2025_even_odd", "a", "0", "a-b_c", &"x".repeat(64)] {
            assert!(is_valid(good), "{good}");
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
            &"x".repeat(65),
        ] {
            assert!(!is_valid(bad), "{bad}");
            assert!(refusal(bad).is_some_and(|why| why.contains("a-z, 0-9")), "{bad}");
        }
    }
}
