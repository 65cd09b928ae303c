//! Sources of chance for tests only: a seeded one for reproducible sequences and a fixed one for scenarios.

use std::collections::VecDeque;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::Chance;

/// A reproducible pseudo-random source. Never used outside tests: its seed would make draws predictable.
#[derive(Debug)]
pub(crate) struct SeededChance(StdRng);

impl SeededChance {
    pub(crate) fn new(seed: u64) -> SeededChance {
        SeededChance(StdRng::seed_from_u64(seed))
    }
}

impl Chance for SeededChance {
    fn number_between(&mut self, low: u32, high: u32) -> u32 {
        self.0.random_range(low..=high)
    }

    fn source(&self) -> &'static str {
        "seeded (test)"
    }
}

/// Hands out the given numbers in order, so a test can say which number a game draws.
#[derive(Debug)]
pub(crate) struct FixedChance(VecDeque<u32>);

impl FixedChance {
    pub(crate) fn new(numbers: impl IntoIterator<Item = u32>) -> FixedChance {
        FixedChance(numbers.into_iter().collect())
    }

    /// Numbers not drawn yet: lets a test show that a game drew exactly when, and as often as, expected.
    pub(crate) fn left(&self) -> usize {
        self.0.len()
    }
}

impl Chance for FixedChance {
    fn number_between(&mut self, low: u32, high: u32) -> u32 {
        let Some(number) = self.0.pop_front() else {
            panic!("FixedChance ran out of numbers");
        };
        assert!(
            (low..=high).contains(&number),
            "FixedChance was asked for {low}..={high} but holds {number}"
        );
        number
    }

    fn source(&self) -> &'static str {
        "fixed (test)"
    }
}
