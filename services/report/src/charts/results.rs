//! Results per player: wins, draws, losses and technical losses as one stacked horizontal bar per
//! player, in the final table's order (the champion on top).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::mark_colour;
use super::{Chart, FONT, LEGEND_HEIGHT, draw_error, nothing_to_show, outcome_legend, player_label};
use crate::data::{LeagueData, Mark};

/// Pixels per player row: readable labels up to a few hundred players.
const ROW: u32 = 14;

#[derive(Debug)]
pub struct Results {
    /// (label, [wins, draws, losses other than technical, technical losses]) best first.
    rows: Vec<(String, [u32; 4])>,
}

impl Results {
    pub fn new(data: &LeagueData) -> Self {
        Self {
            rows: data
                .standings
                .iter()
                .map(|row| {
                    let label = format!(
                        "#{} {}",
                        row.rank,
                        player_label(&row.player_id, &row.display_name, 24)
                    );
                    let counts = [
                        row.wins,
                        row.draws,
                        row.losses - row.technical_losses.min(row.losses),
                        row.technical_losses,
                    ];
                    (label, counts)
                })
                .collect(),
        }
    }
}

const STACK: [Mark; 4] = [Mark::Win, Mark::Draw, Mark::Loss, Mark::TechnicalLoss];

impl Chart for Results {
    fn name(&self) -> &'static str {
        "results_per_player"
    }

    fn title(&self) -> &'static str {
        "Results per player: wins, draws, losses and technical losses"
    }

    fn size(&self) -> (u32, u32) {
        (1100, (180 + ROW * self.rows.len() as u32).max(420))
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let played = self
            .rows
            .iter()
            .map(|(_, c)| c.iter().sum::<u32>())
            .max()
            .unwrap_or(0);
        if played == 0 {
            return nothing_to_show(area, "No match played yet");
        }
        let n = self.rows.len();
        let (legend, area) = area.split_vertically(LEGEND_HEIGHT);
        outcome_legend(&legend, "Results per player")?;
        let mut chart = ChartBuilder::on(&area)
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(250)
            .build_cartesian_2d(0u32..played, (0..n as u32 - 1).into_segmented())
            .map_err(draw_error)?;
        // Segment s shows table row n - 1 - s: the champion on top.
        let row_of = |segment: u32| n - 1 - segment as usize;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("matches")
            .x_labels((played as usize + 1).min(16))
            .x_label_formatter(&|x: &u32| x.to_string())
            .y_labels(n)
            .y_label_formatter(&|value: &SegmentValue<u32>| match value {
                SegmentValue::CenterOf(segment) if (*segment as usize) < n => {
                    self.rows[row_of(*segment)].0.clone()
                }
                _ => String::new(),
            })
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(draw_error)?;
        for (part, mark) in STACK.iter().enumerate() {
            let colour = mark_colour(*mark);
            let bars = (0..n as u32).filter_map(|segment| {
                let counts = &self.rows[row_of(segment)].1;
                let start: u32 = counts[..part].iter().sum();
                let end = start + counts[part];
                (end > start).then(|| {
                    let mut bar = Rectangle::new(
                        [
                            (start, SegmentValue::Exact(segment)),
                            (end, SegmentValue::Exact(segment + 1)),
                        ],
                        colour.filled(),
                    );
                    bar.set_margin(1, 1, 0, 0);
                    bar
                })
            });
            chart.draw_series(bars).map_err(draw_error)?;
        }
        Ok(())
    }
}
