//! Standings progression: each player's points after each round, one line per player; the leaders in
//! colour and named in the legend, everyone else in grey.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, FONT, draw_error, nothing_to_show, player_label};
use crate::data::LeagueData;

/// Players named and coloured: more lines in colour would be told apart by nobody.
const LEADERS: usize = 8;

/// One player's line: points after round 0 (none played), 1, 2, … in the final table's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub player_id: String,
    pub label: String,
    pub points: Vec<u32>,
}

/// The lines, best final rank first: exactly the points of the standings after each completed round.
pub fn progression_series(data: &LeagueData) -> Vec<Series> {
    data.standings
        .iter()
        .map(|row| Series {
            player_id: row.player_id.clone(),
            label: player_label(&row.player_id, &row.display_name, 28),
            points: std::iter::once(0)
                .chain(data.by_round.iter().map(|round| {
                    round
                        .standings
                        .iter()
                        .find(|r| r.player_id == row.player_id)
                        .map_or(0, |r| r.points)
                }))
                .collect(),
        })
        .collect()
}

#[derive(Debug)]
pub struct Progression {
    series: Vec<Series>,
}

impl Progression {
    pub fn new(data: &LeagueData) -> Self {
        Self {
            series: progression_series(data),
        }
    }
}

impl Chart for Progression {
    fn name(&self) -> &'static str {
        "standings_progression"
    }

    fn title(&self) -> &'static str {
        "Standings progression: points after each round (leaders in colour)"
    }

    fn size(&self) -> (u32, u32) {
        (1200, 700)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let rounds = self.series.first().map_or(0, |s| s.points.len() - 1);
        if rounds == 0 {
            return nothing_to_show(area, "No round completed yet");
        }
        let top = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .max()
            .unwrap_or(0);
        let y_max = (top + (top / 20).max(1)).max(3);
        let mut chart = ChartBuilder::on(area)
            .caption("Points after each round", (FONT, 26))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(0u32..rounds as u32, 0u32..y_max)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc("round")
            .y_desc("points")
            .x_labels(rounds.min(20) + 1)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(draw_error)?;
        let line = |series: &Series| {
            series
                .points
                .iter()
                .enumerate()
                .map(|(round, points)| (round as u32, *points))
                .collect::<Vec<_>>()
        };
        let grey = RGBColor(190, 190, 190).mix(if self.series.len() > 50 { 0.35 } else { 0.7 });
        // The others first, so the leaders' lines are drawn over them.
        for series in self.series.iter().skip(LEADERS).rev() {
            chart
                .draw_series(LineSeries::new(line(series), grey.stroke_width(1)))
                .map_err(draw_error)?;
        }
        for (i, series) in self.series.iter().take(LEADERS).enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            let final_points = series.points.last().copied().unwrap_or(0);
            chart
                .draw_series(LineSeries::new(line(series), colour.stroke_width(3)))
                .map_err(draw_error)?
                .label(format!("#{} {} — {final_points} pts", i + 1, series.label))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.3))
            .label_font((FONT, 15))
            .draw()
            .map_err(draw_error)?;
        Ok(())
    }
}
