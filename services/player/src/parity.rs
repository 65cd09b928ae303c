//! A parity in Even/Odd, as a bot chooses one: the league's own `Parity` (`league_domain::even_odd`,
//! the rule's one home), and a fair random choice of it.

use rand::Rng;

pub use league_domain::even_odd::Parity;

/// Even or odd with equal probability.
pub fn random(rng: &mut impl Rng) -> Parity {
    if rng.random_bool(0.5) {
        Parity::Even
    } else {
        Parity::Odd
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

    #[test]
    fn a_random_choice_takes_both_parities() {
        let mut rng = rand::rng();
        let chosen: std::collections::HashSet<_> = (0..64).map(|_| random(&mut rng)).collect();
        assert_eq!(chosen.len(), 2);
    }
}
