//! Strategy comparison: the mean final points of each strategy group's players, with a 95% confidence
//! interval (Student's t; none for a group of one) kept within the points they could have. Bots are grouped by behaviour, external agents
//! form one group.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Chart, FONT, draw_error, nothing_to_show};
use crate::data::{LeagueData, strategy_of};

/// One group's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyGroup {
    pub strategy: String,
    pub players: usize,
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean; None for a single player.
    pub margin: Option<f64>,
    /// That interval within the points the group's players could have: from 0 to a win in each of
    /// their matches (the t interval of a handful of players runs past both).
    pub interval: Option<(f64, f64)>,
}

/// The groups, best mean first.
pub fn strategy_groups(data: &LeagueData) -> Vec<StrategyGroup> {
    let mut scheduled: BTreeMap<&str, u32> = BTreeMap::new();
    for scheduled_match in data.rounds.iter().flat_map(|round| &round.matches) {
        for player in [&scheduled_match.player_a_id, &scheduled_match.player_b_id] {
            *scheduled.entry(player).or_default() += 1;
        }
    }
    let mut points: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut possible: BTreeMap<String, f64> = BTreeMap::new();
    for row in &data.standings {
        let strategy = strategy_of(&row.display_name);
        let matches = scheduled
            .get(row.player_id.as_str())
            .copied()
            .unwrap_or(0)
            .max(row.played);
        let most = possible.entry(strategy.clone()).or_default();
        *most = most.max(f64::from(league_domain::points::WIN * matches));
        points.entry(strategy).or_default().push(f64::from(row.points));
    }
    let mut groups: Vec<StrategyGroup> = points
        .into_iter()
        .map(|(strategy, points)| {
            let most = possible.get(&strategy).copied().unwrap_or(0.0);
            let n = points.len();
            let mean = points.iter().sum::<f64>() / n as f64;
            let margin = (n > 1).then(|| {
                let variance = points.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
                t_975(n - 1) * (variance / n as f64).sqrt()
            });
            StrategyGroup {
                strategy,
                players: n,
                mean,
                margin,
                interval: margin.map(|margin| ((mean - margin).max(0.0), (mean + margin).min(most))),
            }
        })
        .collect();
    groups.sort_by(|x, y| {
        y.mean
            .total_cmp(&x.mean)
            .then_with(|| x.strategy.cmp(&y.strategy))
    });
    groups
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        31..=60 => 2.00,
        61..=120 => 1.98,
        _ => 1.96,
    }
}

#[derive(Debug)]
pub struct Strategies {
    groups: Vec<StrategyGroup>,
}

impl Strategies {
    pub fn new(data: &LeagueData) -> Self {
        Self {
            groups: strategy_groups(data),
        }
    }
}

impl Chart for Strategies {
    fn name(&self) -> &'static str {
        "strategy_comparison"
    }

    fn title(&self) -> &'static str {
        "Strategy comparison: mean points per strategy, with a 95% confidence interval"
    }

    fn size(&self) -> (u32, u32) {
        ((200 + 130 * self.groups.len() as u32).clamp(700, 1400), 600)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        if self.groups.is_empty() {
            return nothing_to_show(area, "No players");
        }
        let top = self
            .groups
            .iter()
            .map(|g| g.interval.map_or(g.mean, |(_, high)| high))
            .fold(0.0, f64::max);
        let n = self.groups.len() as u32;
        let mut chart = ChartBuilder::on(area)
            .caption("Mean points per strategy (95% CI)", (FONT, 26))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d((0..n - 1).into_segmented(), 0f64..(top * 1.15).max(1.0))
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n as usize)
            .x_label_formatter(&|value: &SegmentValue<u32>| match value {
                SegmentValue::CenterOf(i) => self
                    .groups
                    .get(*i as usize)
                    .map(|g| g.strategy.clone())
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .y_desc("final points")
            .y_label_formatter(&|y: &f64| format!("{y:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .draw()
            .map_err(draw_error)?;
        let bar_colour = RGBColor(70, 130, 180);
        chart
            .draw_series(self.groups.iter().zip(0..).map(|(group, i)| {
                let mut bar = Rectangle::new(
                    [
                        (SegmentValue::Exact(i), 0.0),
                        (SegmentValue::Exact(i + 1), group.mean),
                    ],
                    bar_colour.filled(),
                );
                bar.set_margin(0, 0, 18, 18);
                bar
            }))
            .map_err(draw_error)?;
        for (group, i) in self.groups.iter().zip(0..) {
            let centre = SegmentValue::CenterOf(i);
            if let Some((low, high)) = group.interval {
                let whisker = vec![(centre.clone(), low), (centre.clone(), high)];
                chart
                    .draw_series([PathElement::new(whisker, BLACK.stroke_width(2))])
                    .map_err(draw_error)?;
                for end in [low, high] {
                    chart
                        .draw_series([EmptyElement::at((centre.clone(), end))
                            + PathElement::new(vec![(-10, 0), (10, 0)], BLACK.stroke_width(2))])
                        .map_err(draw_error)?;
                }
            }
            let note = format!("{:.1} pts · n={}", group.mean, group.players);
            let height = group.interval.map_or(group.mean, |(_, high)| high);
            // Above the bar and its whisker, clear of the whisker's cap.
            chart
                .draw_series([EmptyElement::at((centre, height))
                    + Text::new(
                        note,
                        (0, -6),
                        TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )])
                .map_err(draw_error)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t_quantile_falls_towards_the_normal_one() {
        assert!((t_975(1) - 12.706).abs() < 1e-9);
        assert!(t_975(10) > t_975(30) && t_975(30) > t_975(200));
        assert!((t_975(1000) - 1.96).abs() < 1e-9);
    }
}
