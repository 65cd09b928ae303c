//! Where the referee's randomness comes from: the operating system's CSPRNG, and nothing seedable.
//!
//! The league requires a cryptographically secure draw so that no player can predict it. Production
//! code therefore has exactly one [`Chance`], [`OsChance`]; the seeded and fixed sources that tests need
//! exist only under `cfg(test)` (the production draw must always be cryptographically random).

use rand::TryRngCore;
use rand::distr::{Distribution, Uniform};
use rand::rngs::OsRng;

#[cfg(test)]
mod fairness_tests;
#[cfg(test)]
pub(crate) mod test_support;

/// A source of random numbers for games of chance.
pub trait Chance: Send {
    /// A number from `low` to `high` inclusive, every one equally likely.
    ///
    /// # Panics
    /// If `low > high`: games ask for fixed ranges, so an empty one is a bug in the game.
    fn number_between(&mut self, low: u32, high: u32) -> u32;

    /// Which source drew the number, for the audit log, e.g. `"os"`.
    fn source(&self) -> &'static str;
}

/// The operating system's CSPRNG (`getrandom`), read afresh for every draw.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsChance;

impl Chance for OsChance {
    /// # Panics
    /// Also if the operating system cannot provide randomness; a match must not be decided without it,
    /// and on the platforms we run on `getrandom` does not fail once the system has booted.
    fn number_between(&mut self, low: u32, high: u32) -> u32 {
        // `Uniform` rejects the few raw values that would favour some numbers (Lemire's method), so the
        // draw is exactly uniform; `random_range` takes a shortcut that is very slightly biased.
        let numbers = match Uniform::new_inclusive(low, high) {
            Ok(numbers) => numbers,
            Err(_) => panic!("no number between {low} and {high}"),
        };
        numbers.sample(&mut OsRng.unwrap_err())
    }

    fn source(&self) -> &'static str {
        "os"
    }
}
