//! Match durations: how long the referee took over each match (its transcript's first to last entry),
//! as a histogram, with the median marked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, FONT, draw_error, nothing_to_show};
use crate::data::{LeagueData, duration_ms};

const BINS: usize = 30;

#[derive(Debug)]
pub struct Durations {
    /// Every finished match's duration in milliseconds, sorted.
    millis: Vec<i64>,
}

impl Durations {
    pub fn new(data: &LeagueData) -> Self {
        let mut millis: Vec<i64> = data
            .matches()
            .filter_map(duration_ms)
            .filter(|ms| *ms >= 0)
            .collect();
        millis.sort_unstable();
        Self { millis }
    }

    /// Seconds when matches take seconds, else milliseconds.
    fn unit(&self) -> (&'static str, f64) {
        match self.millis.last() {
            Some(&longest) if longest >= 5_000 => ("s", 1000.0),
            _ => ("ms", 1.0),
        }
    }
}

impl Chart for Durations {
    fn name(&self) -> &'static str {
        "match_durations"
    }

    fn title(&self) -> &'static str {
        "Match durations: how long each match took, from invitation to result"
    }

    fn size(&self) -> (u32, u32) {
        (1000, 550)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let (Some(&shortest), Some(&longest)) = (self.millis.first(), self.millis.last()) else {
            return nothing_to_show(area, "No match with a transcript yet");
        };
        let (unit, per) = self.unit();
        // From zero: how long matches take is read against nothing at all, not against the fastest.
        let low = 0.0;
        let high = (longest as f64 / per).max(shortest as f64 / per + 1.0 / per);
        let width = (high - low) / BINS as f64;
        let mut counts = [0u32; BINS];
        for &ms in &self.millis {
            let bin = (((ms as f64 / per) - low) / width) as usize;
            counts[bin.min(BINS - 1)] += 1;
        }
        let tallest = counts.iter().copied().max().unwrap_or(1);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("Match durations ({} matches)", self.millis.len()),
                (FONT, 26),
            )
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(low..high + width * 0.01, 0u32..tallest + tallest / 10 + 1)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(format!("duration ({unit})"))
            .x_label_formatter(&|x: &f64| {
                if per > 1.0 {
                    format!("{x:.1}")
                } else {
                    format!("{x:.0}")
                }
            })
            .light_line_style(WHITE.mix(0.0))
            .y_desc("matches")
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .draw()
            .map_err(draw_error)?;
        let colour = RGBColor(70, 130, 180);
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, &count)| {
                        let from = low + width * i as f64;
                        let mut bar = Rectangle::new([(from, 0), (from + width, count)], colour.filled());
                        bar.set_margin(0, 0, 1, 1);
                        bar
                    }),
            )
            .map_err(draw_error)?;
        let median = self.millis[self.millis.len() / 2] as f64 / per;
        let red = RGBColor(214, 39, 40);
        chart
            .draw_series([PathElement::new(
                vec![(median, 0), (median, tallest + tallest / 10 + 1)],
                red.stroke_width(2),
            )])
            .map_err(draw_error)?
            .label(if per > 1.0 {
                format!("median {median:.1} {unit}")
            } else {
                format!("median {median:.0} {unit}")
            })
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.3))
            .label_font((FONT, 15))
            .draw()
            .map_err(draw_error)?;
        Ok(())
    }
}
