//! External agents against bots, measured in pairs (`league-bench --external --against-bots N`). The
//! machine's speed drifts from one minute to the next (the same league's wall has varied by a third
//! within an hour, docs/benchmarks.md), so a bots league measured at one time and an external league at
//! another compare the minutes as much as the players. A pair is a bots league and the external league
//! played right after it; the median of the pairs' ratios is the comparison.

use std::time::Duration;

/// The walls of a bots league and of the external league played right after it.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub bots: Duration,
    pub external: Duration,
}

impl Pair {
    fn ratio(&self) -> f64 {
        self.external.as_secs_f64() / self.bots.as_secs_f64().max(1e-9)
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// A table per league size: each pair's walls and ratio, then the medians. Nothing without pairs.
pub fn render(comparisons: &[(u32, Vec<Pair>)]) -> String {
    let mut out = String::new();
    for (players, pairs) in comparisons {
        out.push_str(&format!(
            "\nexternal agents against bots, {players} players, {} pairs played alternately (wall, s):\n\n\
             | pair | bots | external | external / bots |\n|---:|---:|---:|---:|\n",
            pairs.len()
        ));
        for (index, pair) in pairs.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {:.2} | {:.2} | {:.2} |\n",
                index + 1,
                pair.bots.as_secs_f64(),
                pair.external.as_secs_f64(),
                pair.ratio()
            ));
        }
        let walls =
            |pick: fn(&Pair) -> Duration| median(pairs.iter().map(|p| pick(p).as_secs_f64()).collect());
        out.push_str(&format!(
            "| median | {:.2} | {:.2} | {:.2} |\n",
            walls(|pair| pair.bots),
            walls(|pair| pair.external),
            median(pairs.iter().map(Pair::ratio).collect())
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(bots: f64, external: f64) -> Pair {
        Pair {
            bots: Duration::from_secs_f64(bots),
            external: Duration::from_secs_f64(external),
        }
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn each_pair_and_the_median_of_the_ratios() {
        let table = render(&[(50, vec![pair(1.0, 1.3), pair(2.0, 2.2), pair(1.5, 3.0)])]);
        assert!(table.contains("50 players, 3 pairs"), "{table}");
        assert!(table.contains("| 1 | 1.00 | 1.30 | 1.30 |\n"), "{table}");
        assert!(table.contains("| 3 | 1.50 | 3.00 | 2.00 |\n"), "{table}");
        // The median ratio is the middle pair's (1.30), not the ratio of the median walls (2.20 / 1.50).
        assert!(table.contains("| median | 1.50 | 2.20 | 1.30 |\n"), "{table}");
        assert_eq!(render(&[]), "");
    }
}
