//! The Even/Odd rule, written once: the parities, the drawn number's range, and who wins.
//!
//! The referee plays a match by it and the gateway checks an external referee's report by it, so the
//! rule has this one home (docs/protocol.md, "Reporting a result").

use std::fmt;

/// The drawn number lies in `LOWEST..=HIGHEST`: five even and five odd numbers.
pub const LOWEST: u32 = 1;
/// The highest number a referee may draw.
pub const HIGHEST: u32 = 10;

/// A player's choice, and the parity of the drawn number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parity {
    Even,
    Odd,
}

impl Parity {
    pub fn of(number: u32) -> Parity {
        if number.is_multiple_of(2) {
            Parity::Even
        } else {
            Parity::Odd
        }
    }

    /// The wire form: `"even"` or `"odd"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Parity::Even => "even",
            Parity::Odd => "odd",
        }
    }

    /// Exactly `"even"` or `"odd"`: the rule is case-sensitive and accepts no abbreviation.
    pub fn parse(text: &str) -> Option<Parity> {
        match text {
            "even" => Some(Parity::Even),
            "odd" => Some(Parity::Odd),
            _ => None,
        }
    }

    /// The other parity.
    pub fn opposite(self) -> Parity {
        match self {
            Parity::Even => Parity::Odd,
            Parity::Odd => Parity::Even,
        }
    }
}

impl fmt::Display for Parity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `drawn` is a number a referee may draw.
pub fn in_range(drawn: u32) -> bool {
    (LOWEST..=HIGHEST).contains(&drawn)
}

/// The seat (0 or 1) whose choice matched the drawn number's parity; `None` for a draw. The same
/// choices are a draw whatever the number, so a game with different choices always has a winner.
pub fn winner(choices: [Parity; 2], drawn: u32) -> Option<usize> {
    if choices[0] == choices[1] {
        return None;
    }
    let parity = Parity::of(drawn);
    Some(if choices[0] == parity { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_player_who_matched_the_numbers_parity_wins() {
        assert_eq!(winner([Parity::Even, Parity::Odd], 4), Some(0));
        assert_eq!(winner([Parity::Even, Parity::Odd], 7), Some(1));
        assert_eq!(winner([Parity::Odd, Parity::Even], 7), Some(0));
        assert_eq!(winner([Parity::Odd, Parity::Even], 10), Some(1));
    }

    #[test]
    fn the_same_choices_are_a_draw_whatever_the_number() {
        for drawn in LOWEST..=HIGHEST {
            assert_eq!(winner([Parity::Even, Parity::Even], drawn), None);
            assert_eq!(winner([Parity::Odd, Parity::Odd], drawn), None);
        }
    }

    #[test]
    fn only_the_exact_lowercase_words_are_choices() {
        assert_eq!(Parity::parse("even"), Some(Parity::Even));
        assert_eq!(Parity::parse("odd"), Some(Parity::Odd));
        for wrong in ["Even", "ODD", "e", "", " even"] {
            assert_eq!(Parity::parse(wrong), None, "{wrong:?}");
        }
        assert_eq!(Parity::Odd.to_string(), "odd");
        assert_eq!(Parity::of(3), Parity::Odd);
        assert_eq!(Parity::of(2), Parity::Even);
    }

    #[test]
    fn the_range_holds_five_numbers_of_each_parity() {
        let even = (LOWEST..=HIGHEST)
            .filter(|&n| Parity::of(n) == Parity::Even)
            .count();
        assert_eq!(even, 5);
        assert!(in_range(LOWEST) && in_range(HIGHEST));
        assert!(!in_range(0) && !in_range(HIGHEST + 1));
    }
}
