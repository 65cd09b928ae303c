//! Statistical checks that the OS draw of 1..=10 is fair, and that the checks can fail.
//!
//! Per draw of 100 000 numbers: χ² goodness of fit (df = 9) below 16.919, the p = 0.05 critical value;
//! each number within ±10% of its expected count; the even share within 49–51%; lag-1 autocorrelation
//! |r| < 0.05. Only χ² sits close to chance: the other bands are 6 to 16 standard deviations wide.

use super::test_support::{FixedChance, SeededChance};
use super::{Chance, OsChance};

const DRAWS: usize = 100_000;
const NUMBERS: u32 = 10;
/// χ² with 9 degrees of freedom exceeds this with probability 0.05 for a fair source.
const CHI_SQUARED_CRITICAL: f64 = 16.919;

fn draw(chance: &mut dyn Chance, high: u32) -> Vec<u32> {
    (0..DRAWS).map(|_| chance.number_between(1, high)).collect()
}

/// χ² of observed counts against the same expected count for every category.
fn chi_squared(observed: &[u64], expected: f64) -> f64 {
    observed
        .iter()
        .map(|&count| (count as f64 - expected).powi(2) / expected)
        .sum()
}

/// Correlation of each draw with the next; `None` when the draws do not vary, where it is undefined.
fn lag1_autocorrelation(draws: &[u32]) -> Option<f64> {
    let mean = draws.iter().map(|&x| f64::from(x)).sum::<f64>() / draws.len() as f64;
    let deviations: Vec<f64> = draws.iter().map(|&x| f64::from(x) - mean).collect();
    let variance: f64 = deviations.iter().map(|d| d * d).sum();
    let covariance: f64 = deviations.windows(2).map(|pair| pair[0] * pair[1]).sum();
    (variance > 0.0).then(|| covariance / variance)
}

/// The statistics of one sample of draws of 1..=10.
#[derive(Debug)]
struct Report {
    counts: [u64; NUMBERS as usize],
    chi_squared: f64,
    even_share: f64,
    autocorrelation: Option<f64>,
}

impl Report {
    fn of(draws: &[u32]) -> Report {
        let mut counts = [0; NUMBERS as usize];
        for &number in draws {
            assert!((1..=NUMBERS).contains(&number), "drew {number}");
            counts[number as usize - 1] += 1;
        }
        let even = draws.iter().filter(|&&number| number % 2 == 0).count();
        Report {
            counts,
            chi_squared: chi_squared(&counts, draws.len() as f64 / f64::from(NUMBERS)),
            even_share: even as f64 / draws.len() as f64,
            autocorrelation: lag1_autocorrelation(draws),
        }
    }

    fn fits_uniform(&self) -> bool {
        self.chi_squared < CHI_SQUARED_CRITICAL
    }

    /// The checks other than χ², each far enough from chance to need no second try.
    fn wide_band_failures(&self) -> Vec<String> {
        let expected = DRAWS as f64 / f64::from(NUMBERS);
        let mut failures = Vec::new();
        for (number, &count) in (1..).zip(&self.counts) {
            if (count as f64 - expected).abs() > 0.1 * expected {
                failures.push(format!("{number} drawn {count} times, expected {expected} ±10%"));
            }
        }
        if !(0.49..=0.51).contains(&self.even_share) {
            failures.push(format!("even share {:.4}, expected 0.49–0.51", self.even_share));
        }
        match self.autocorrelation {
            Some(r) if r.abs() < 0.05 => {}
            r => failures.push(format!("lag-1 autocorrelation {r:?}, expected |r| < 0.05")),
        }
        failures
    }
}

#[test]
fn os_chance_draws_one_to_ten_fairly() {
    // A fair source fails a p = 0.05 χ² test one time in twenty, so a single sample would make this test
    // flaky. Up to three independent samples are drawn and one must pass: a fair source fails all three
    // with probability 0.05³ ≈ 1e-4, while any real bias visible in 100 000 draws fails every one.
    let mut chi_squares = Vec::new();
    for _ in 0..3 {
        let report = Report::of(&draw(&mut OsChance, NUMBERS));
        assert_eq!(report.wide_band_failures(), Vec::<String>::new(), "{report:?}");
        if report.fits_uniform() {
            return;
        }
        chi_squares.push(report.chi_squared);
    }
    panic!("χ² at or above {CHI_SQUARED_CRITICAL} in every sample: {chi_squares:?}");
}

#[test]
fn os_chance_names_its_source_and_stays_in_range() {
    let mut chance = OsChance;
    assert_eq!(chance.source(), "os");
    assert!((0..1000).all(|_| chance.number_between(7, 7) == 7));
    assert!((0..1000).all(|_| (1..=2).contains(&chance.number_between(1, 2))));
}

#[test]
#[should_panic(expected = "no number between 10 and 1")]
fn os_chance_refuses_an_empty_range() {
    OsChance.number_between(10, 1);
}

#[test]
fn chi_squared_matches_hand_computation() {
    assert_eq!(chi_squared(&[10; 10], 10.0), 0.0);
    // (12-10)²/10 + (8-10)²/10
    assert!((chi_squared(&[12, 8], 10.0) - 0.8).abs() < 1e-12);
    // Two numbers 1 000 off in 100 000 draws: 2 × 1 000² / 10 000.
    let counts = [
        9_000, 11_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000,
    ];
    assert!((chi_squared(&counts, 10_000.0) - 200.0).abs() < 1e-9);
}

#[test]
fn autocorrelation_matches_hand_computation() {
    // Deviations -2 -1 0 1 2: products of neighbours 2 + 0 + 0 + 2 = 4, squares 10.
    assert_eq!(lag1_autocorrelation(&[1, 2, 3, 4, 5]), Some(0.4));
    // Deviations ±4.5: three products of -20.25 over four squares of 20.25.
    assert_eq!(lag1_autocorrelation(&[1, 10, 1, 10]), Some(-0.75));
    assert_eq!(lag1_autocorrelation(&[7, 7, 7]), None);
}

#[test]
fn the_checks_pass_a_uniform_seeded_source() {
    let report = Report::of(&draw(&mut SeededChance::new(2025), NUMBERS));
    assert!(report.fits_uniform(), "{report:?}");
    assert_eq!(report.wide_band_failures(), Vec::<String>::new());
}

#[test]
fn the_checks_flag_a_source_that_never_draws_ten() {
    let report = Report::of(&draw(&mut SeededChance::new(2025), 9));
    assert!(!report.fits_uniform(), "{report:?}");
    let failures = report.wide_band_failures();
    assert!(
        failures.iter().any(|f| f.starts_with("10 drawn 0 times")),
        "{failures:?}"
    );
    assert!(
        failures.iter().any(|f| f.starts_with("even share")),
        "{failures:?}"
    );
}

#[test]
fn the_checks_flag_a_constant_source() {
    let report = Report::of(&draw(&mut FixedChance::new(vec![7; DRAWS]), NUMBERS));
    assert!(!report.fits_uniform(), "{report:?}");
    let failures = report.wide_band_failures();
    assert!(
        failures
            .iter()
            .any(|f| f.starts_with("lag-1 autocorrelation None")),
        "{failures:?}"
    );
}

#[test]
fn the_checks_flag_a_predictable_cycle_that_looks_uniform() {
    // 1, 2, …, 10, 1, 2, … has perfect counts, so only the independence check can catch it.
    let cycle: Vec<u32> = (0..DRAWS as u32).map(|i| i % NUMBERS + 1).collect();
    let report = Report::of(&cycle);
    assert!(report.fits_uniform(), "{report:?}");
    let failures = report.wide_band_failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("lag-1 autocorrelation Some(0.45"),
        "{failures:?}"
    );
}
