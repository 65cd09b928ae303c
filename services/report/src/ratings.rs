//! The league's ratings (docs/adr/0049-ratings-in-the-league-s-points.md): each player's points per
//! match by the league's own 3/1/0 scoring, so the rating orders players as the table does, with the
//! player's own deviation; for each pair of neighbours in the table, the difference with a 95 % interval
//! and the likelihood that the upper one is the stronger (LOS); and whether the results are beyond chance —
//! the spread of the strategies' means against the spread their noise alone would give.
//!
//! One league is one game, so nothing here mixes games.

use std::collections::BTreeMap;

use crate::data::{LeagueData, Mark, mark_for, strategy_of};
use crate::head_to_head::mark_points;

/// A player's (or a strategy's) points per match and how sure that is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// Finished matches counted.
    pub matches: u32,
    /// Points per match, 0 to 3: the table's points divided by the matches played.
    pub points_per_match: f64,
    /// The standard error of `points_per_match`, from this player's own results.
    pub deviation: f64,
}

impl Rating {
    /// The rating of a run of results. The deviation is the spread of one match's points over √n; that
    /// spread is taken from the results with one more win, draw and loss added (a uniform prior), so a
    /// player who won every match still has a deviation, and one with no match has the widest.
    pub fn of(marks: &[Mark]) -> Rating {
        let n = marks.len() as f64;
        let points: f64 = marks.iter().map(|&m| f64::from(mark_points(m))).sum();
        let count = |wanted: &[Mark]| marks.iter().filter(|m| wanted.contains(m)).count() as f64;
        let weights = [
            (f64::from(mark_points(Mark::Win)), count(&[Mark::Win]) + 1.0),
            (f64::from(mark_points(Mark::Draw)), count(&[Mark::Draw]) + 1.0),
            (
                f64::from(mark_points(Mark::Loss)),
                count(&[Mark::Loss, Mark::TechnicalLoss]) + 1.0,
            ),
        ];
        let total = n + 3.0;
        let mean: f64 = weights.iter().map(|(p, w)| p * w / total).sum();
        let second: f64 = weights.iter().map(|(p, w)| p * p * w / total).sum();
        let spread = (second - mean * mean).max(0.0).sqrt();
        Rating {
            matches: marks.len() as u32,
            points_per_match: if marks.is_empty() { 0.0 } else { points / n },
            deviation: spread / n.max(1.0).sqrt(),
        }
    }
}

/// Two ratings compared: the first's lead, its 95 % interval, and the likelihood of superiority.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub difference: f64,
    pub low: f64,
    pub high: f64,
    /// The probability that the first is truly the stronger, given the two results (normal model).
    pub los: f64,
}

/// How `upper` compares with `lower`: independent normal estimates, so the difference's deviation is
/// the root of the sum of their squares.
pub fn compare(upper: &Rating, lower: &Rating) -> Comparison {
    let difference = upper.points_per_match - lower.points_per_match;
    let deviation = upper.deviation.hypot(lower.deviation);
    Comparison {
        difference,
        low: difference - Z_95 * deviation,
        high: difference + Z_95 * deviation,
        los: if deviation > 0.0 {
            normal_cdf(difference / deviation)
        } else {
            0.5
        },
    }
}

/// The two-sided 95 % point of the normal distribution.
const Z_95: f64 = 1.959_964;

/// One row of the ratings table, in the final table's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Rated {
    pub player_id: String,
    pub display_name: String,
    pub rating: Rating,
    /// Against the next player in the table; None for the last.
    pub above_next: Option<Comparison>,
}

/// Every player's rating, in the final table's order.
pub fn ratings(data: &LeagueData) -> Vec<Rated> {
    let marks = marks_by_player(data);
    let mut rated: Vec<Rated> = data
        .standings
        .iter()
        .map(|row| Rated {
            player_id: row.player_id.clone(),
            display_name: row.display_name.clone(),
            rating: Rating::of(marks.get(&row.player_id).map_or(&[], Vec::as_slice)),
            above_next: None,
        })
        .collect();
    for i in 1..rated.len() {
        let comparison = compare(&rated[i - 1].rating, &rated[i].rating);
        rated[i - 1].above_next = Some(comparison);
    }
    rated
}

/// Each player's marks in play order.
fn marks_by_player(data: &LeagueData) -> BTreeMap<String, Vec<Mark>> {
    let mut marks: BTreeMap<String, Vec<Mark>> = BTreeMap::new();
    for scheduled in data.matches() {
        for player in [&scheduled.player_a_id, &scheduled.player_b_id] {
            if let Some(mark) = mark_for(scheduled, player) {
                marks.entry(player.clone()).or_default().push(mark);
            }
        }
    }
    marks
}

/// Whether results in this game follow from strategy or from chance.
#[derive(Debug, Clone, PartialEq)]
pub struct Luck {
    /// "strategies" when players fall into two or more strategy groups, else "players".
    pub compared: &'static str,
    /// How many groups (or players) were compared.
    pub groups: usize,
    /// The standard deviation of their points per match.
    pub spread: f64,
    /// The spread chance alone would give them: the root mean square of their deviations.
    pub noise: f64,
}

impl Luck {
    /// Mostly luck when the means spread less than twice what noise alone spreads them: then over a
    /// quarter of the spread's variance is noise, and with a handful of groups a spread that small is
    /// often seen when every strategy is equally good.
    pub fn mostly_luck(&self) -> bool {
        self.spread < 2.0 * self.noise
    }

    /// The share of the spread's variance that noise does not explain (0 when noise explains it all).
    pub fn beyond_noise(&self) -> f64 {
        if self.spread > 0.0 {
            (1.0 - (self.noise / self.spread).powi(2)).max(0.0)
        } else {
            0.0
        }
    }

    /// The page's line about it.
    pub fn sentence(&self, game_type: &str) -> String {
        let numbers = format!(
            "the {} {}' points per match spread by {:.3} (standard deviation of their means) against {:.3} \
             that chance alone would give them",
            self.groups, self.compared, self.spread, self.noise
        );
        if self.mostly_luck() {
            // What the numbers show is about these players, not the game: equally good strategies
            // spread as little in a game of pure skill.
            format!(
                "Within chance in this league: {numbers}, less than twice that, so the order of the table \
                 says little about skill: these {} may be equally good, or {game_type} mostly luck.",
                self.compared
            )
        } else {
            format!(
                "{game_type} rewards strategy in this league: {numbers}; {:.0} % of the spread is beyond \
                 chance.",
                100.0 * self.beyond_noise()
            )
        }
    }
}

/// The spread of strategy means against their noise; players stand for themselves when fewer than two
/// strategy groups played. None when fewer than two groups (or players) have a match.
pub fn luck(data: &LeagueData) -> Option<Luck> {
    let marks = marks_by_player(data);
    let mut by_strategy: BTreeMap<String, Vec<Mark>> = BTreeMap::new();
    for row in &data.standings {
        if let Some(played) = marks.get(&row.player_id) {
            by_strategy
                .entry(strategy_of(&row.display_name))
                .or_default()
                .extend(played);
        }
    }
    let (compared, groups): (&'static str, Vec<Rating>) = if by_strategy.len() >= 2 {
        (
            "strategies",
            by_strategy.values().map(|m| Rating::of(m)).collect(),
        )
    } else {
        ("players", marks.values().map(|m| Rating::of(m)).collect())
    };
    spread_against_noise(compared, &groups)
}

/// The spread of `groups`' means (sample standard deviation) and the root mean square of their
/// deviations.
pub fn spread_against_noise(compared: &'static str, groups: &[Rating]) -> Option<Luck> {
    if groups.len() < 2 {
        return None;
    }
    let n = groups.len() as f64;
    let mean = groups.iter().map(|g| g.points_per_match).sum::<f64>() / n;
    let variance = groups
        .iter()
        .map(|g| (g.points_per_match - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    let noise = (groups.iter().map(|g| g.deviation.powi(2)).sum::<f64>() / n).sqrt();
    Some(Luck {
        compared,
        groups: groups.len(),
        spread: variance.sqrt(),
        noise,
    })
}

/// The standard normal distribution function, through erf (Abramowitz and Stegun 7.1.26: absolute
/// error under 1.5e-7, far below what a rating's likelihood is shown with).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn a_rating_is_points_per_match_with_the_players_own_deviation() {
        // 2 wins, 1 draw, 1 loss: 7 points in 4 matches. With one of each outcome added: 3 wins, 2
        // draws, 2 losses of 7, mean 11/7 and mean square 29/7, so the variance is 29/7 − 121/49 =
        // 82/49 and the deviation √(82/49 / 4) = √82 / 14.
        let rating = Rating::of(&[Mark::Win, Mark::Draw, Mark::Loss, Mark::Win]);
        assert_eq!(rating.matches, 4);
        assert!(close(rating.points_per_match, 1.75), "{rating:?}");
        assert!(close(rating.deviation, 82f64.sqrt() / 14.0), "{rating:?}");
        // A technical loss is a loss; all wins still leave a deviation; no match, the widest.
        let technical = Rating::of(&[Mark::Win, Mark::Draw, Mark::TechnicalLoss, Mark::Win]);
        assert_eq!(technical, rating);
        let perfect = Rating::of(&[Mark::Win; 4]);
        assert!(close(perfect.points_per_match, 3.0) && perfect.deviation > 0.0);
        assert!(
            perfect.deviation < rating.deviation,
            "steadier results, smaller deviation"
        );
        let none = Rating::of(&[]);
        assert_eq!((none.matches, none.points_per_match), (0, 0.0));
        assert!(none.deviation > rating.deviation);
    }

    #[test]
    fn neighbours_get_an_interval_and_a_likelihood_of_superiority() {
        let upper = Rating {
            matches: 10,
            points_per_match: 2.0,
            deviation: 0.3,
        };
        let lower = Rating {
            matches: 10,
            points_per_match: 1.5,
            deviation: 0.4,
        };
        // Difference 0.5 with deviation √(0.09 + 0.16) = 0.5: z = 1, LOS = Φ(1) = 0.841345.
        let comparison = compare(&upper, &lower);
        assert!(close(comparison.difference, 0.5));
        assert!(close(comparison.low, 0.5 - 1.959964 * 0.5));
        assert!(close(comparison.high, 0.5 + 1.959964 * 0.5));
        assert!((comparison.los - 0.841_345).abs() < 1e-6, "{comparison:?}");
        assert!((compare(&lower, &upper).los - 0.158_655).abs() < 1e-6);
        assert!(close(compare(&upper, &upper).los, 0.5));
    }

    #[test]
    fn the_normal_distribution_function_matches_its_table() {
        for (z, phi) in [
            (0.0, 0.5),
            (1.0, 0.841_345),
            (1.959_964, 0.975),
            (-2.0, 0.022_750),
            (3.0, 0.998_650),
        ] {
            assert!((normal_cdf(z) - phi).abs() < 1e-6, "Φ({z}) = {}", normal_cdf(z));
        }
    }

    #[test]
    fn luck_is_a_spread_no_wider_than_the_noise() {
        let group = |points_per_match, deviation| Rating {
            matches: 100,
            points_per_match,
            deviation,
        };
        // Means 1.2, 1.25, 1.3: standard deviation 0.05; deviations 0.1 each: noise 0.1. Luck.
        let even_odd = spread_against_noise(
            "strategies",
            &[group(1.2, 0.1), group(1.25, 0.1), group(1.3, 0.1)],
        )
        .unwrap();
        assert!(close(even_odd.spread, 0.05) && close(even_odd.noise, 0.1));
        assert!(even_odd.mostly_luck());
        assert_eq!(even_odd.beyond_noise(), 0.0);
        assert!(
            even_odd
                .sentence("even_odd")
                .starts_with("Within chance in this league: the 3 strategies' points")
        );
        // Means 0.5 and 2.5: standard deviation √2; deviations 0.1 and 0.2: noise √0.025. Strategy.
        let tic_tac_toe = spread_against_noise("strategies", &[group(0.5, 0.1), group(2.5, 0.2)]).unwrap();
        assert!(close(tic_tac_toe.spread, 2f64.sqrt()));
        assert!(close(tic_tac_toe.noise, 0.025f64.sqrt()));
        assert!(!tic_tac_toe.mostly_luck());
        assert!(close(tic_tac_toe.beyond_noise(), 1.0 - 0.025 / 2.0));
        assert!(
            tic_tac_toe
                .sentence("tic_tac_toe")
                .contains("99 % of the spread is beyond chance")
        );
        assert_eq!(spread_against_noise("players", &[group(1.0, 0.1)]), None);
    }
}
