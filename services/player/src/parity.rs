//! A parity in Even/Odd: what a bot chooses and what it remembers its opponents chose.
//!
//! The referee has its own `Parity`; the player crate keeps this copy rather than depend on the referee,
//! because the wire form (`"even"` / `"odd"`) is the only contract between the two.

use std::fmt;

use rand::Rng;

/// `"even"` or `"odd"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Parity {
    Even,
    Odd,
}

impl Parity {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            Parity::Even => "even",
            Parity::Odd => "odd",
        }
    }

    /// Exactly `"even"` or `"odd"`, as the referee accepts them (case-sensitive).
    pub fn parse(text: &str) -> Option<Parity> {
        match text {
            "even" => Some(Parity::Even),
            "odd" => Some(Parity::Odd),
            _ => None,
        }
    }

    pub fn opposite(self) -> Parity {
        match self {
            Parity::Even => Parity::Odd,
            Parity::Odd => Parity::Even,
        }
    }

    /// Even or odd with equal probability.
    pub fn random(rng: &mut impl Rng) -> Parity {
        if rng.random_bool(0.5) {
            Parity::Even
        } else {
            Parity::Odd
        }
    }
}

impl fmt::Display for Parity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_round_trips_and_is_case_sensitive() {
        for parity in [Parity::Even, Parity::Odd] {
            assert_eq!(Parity::parse(parity.as_str()), Some(parity));
            assert_eq!(parity.opposite().opposite(), parity);
            assert_ne!(parity.opposite(), parity);
        }
        assert_eq!(Parity::parse("Even"), None);
        assert_eq!(Parity::parse("maybe"), None);
    }
}
