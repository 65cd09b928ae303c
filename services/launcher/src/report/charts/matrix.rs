//! Head-to-head matrix: row player against column player, coloured by what the row player got (win,
//! draw, loss, technical loss; blank: not played), players in the final table's order.

use std::collections::HashMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    Chart, FONT, LEGEND_HEIGHT, draw_error, mark_colour, nothing_to_show, outcome_legend, player_label,
};
use crate::report::data::{LeagueData, Mark, mark_for};

/// Up to this many players every row and column is named; beyond it, every few ranks.
const NAMED: usize = 40;

#[derive(Debug)]
pub struct HeadToHead {
    /// Player ids and labels, best first.
    players: Vec<(String, String)>,
    /// (row index, column index) → the row player's mark.
    cells: HashMap<(usize, usize), Mark>,
}

impl HeadToHead {
    pub fn new(data: &LeagueData) -> Self {
        let players: Vec<(String, String)> = data
            .standings
            .iter()
            .map(|row| {
                (
                    row.player_id.clone(),
                    player_label(&row.player_id, &row.display_name, 22),
                )
            })
            .collect();
        let index: HashMap<&str, usize> = players
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (id.as_str(), i))
            .collect();
        let mut cells = HashMap::new();
        for scheduled in data.matches() {
            let (Some(&a), Some(&b)) = (
                index.get(scheduled.player_a_id.as_str()),
                index.get(scheduled.player_b_id.as_str()),
            ) else {
                continue;
            };
            if let Some(mark) = mark_for(scheduled, &scheduled.player_a_id) {
                cells.insert((a, b), mark);
            }
            if let Some(mark) = mark_for(scheduled, &scheduled.player_b_id) {
                cells.insert((b, a), mark);
            }
        }
        Self { players, cells }
    }

    /// Pixels per cell: large enough to see, small enough that 200 players fit on a page.
    fn cell(&self) -> u32 {
        (900 / self.players.len().max(1) as u32).clamp(4, 36)
    }

    fn label_every(&self) -> usize {
        if self.players.len() <= NAMED {
            1
        } else {
            self.players.len().div_ceil(20)
        }
    }

    /// A row's label: the player's rank and name when every row is named, else the rank every few rows.
    fn row_label(&self, i: usize) -> String {
        if self.label_every() == 1 {
            format!("#{} {}", i + 1, self.players[i].1)
        } else {
            self.column_label(i)
        }
    }

    /// A column's label: the rank only, so labels stay short enough to sit side by side.
    fn column_label(&self, i: usize) -> String {
        if i.is_multiple_of(self.label_every()) {
            format!("#{}", i + 1)
        } else {
            String::new()
        }
    }

    fn row_label_width(&self) -> u32 {
        if self.label_every() == 1 { 210 } else { 60 }
    }
}

impl Chart for HeadToHead {
    fn name(&self) -> &'static str {
        "head_to_head"
    }

    fn title(&self) -> &'static str {
        "Head-to-head: what the row player got against the column player"
    }

    fn size(&self) -> (u32, u32) {
        let grid = self.cell() * self.players.len() as u32;
        (
            (grid + self.row_label_width() + 80).max(720),
            grid + LEGEND_HEIGHT + 90,
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let n = self.players.len() as u32;
        if n < 2 {
            return nothing_to_show(area, "Fewer than two players");
        }
        let (legend, area) = area.split_vertically(LEGEND_HEIGHT);
        outcome_legend(
            &legend,
            "Head-to-head: the row player's result against each opponent",
        )?;
        let grid = (self.cell() * n) as i32;
        let (width, _) = area.dim_in_pixel();
        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .margin_right((width as i32 - grid - self.row_label_width() as i32 - 24).max(12))
            .x_label_area_size(40)
            .y_label_area_size(self.row_label_width())
            .build_cartesian_2d((0..n - 1).into_segmented(), (0..n - 1).into_segmented())
            .map_err(draw_error)?;
        // Row r of the table is drawn at segment n - 1 - r: the champion's row on top.
        let flip = |segment: u32| (n - 1 - segment) as usize;
        let size = if n <= 40 { 12 } else { 13 };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(n as usize)
            .y_labels(n as usize)
            .x_label_formatter(&|value: &SegmentValue<u32>| match value {
                SegmentValue::CenterOf(i) if *i < n => self.column_label(*i as usize),
                _ => String::new(),
            })
            .y_label_formatter(&|value: &SegmentValue<u32>| match value {
                SegmentValue::CenterOf(i) if *i < n => self.row_label(flip(*i)),
                _ => String::new(),
            })
            .label_style((FONT, size))
            .x_desc("opponent (by final rank)")
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(draw_error)?;
        let gap = u32::from(self.cell() >= 8);
        chart
            .draw_series(self.cells.iter().map(|(&(row, column), &mark)| {
                let y = n - 1 - row as u32;
                let x = column as u32;
                let mut cell = Rectangle::new(
                    [
                        (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                        (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
                    ],
                    mark_colour(mark).filled(),
                );
                cell.set_margin(gap, gap, gap, gap);
                cell
            }))
            .map_err(draw_error)?;
        Ok(())
    }
}
