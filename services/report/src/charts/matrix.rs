//! Head-to-head matrix: row player against column player, players in the final table's order. A cell
//! holds one stripe per meeting, in play order, coloured by what the row player got (win, draw, loss,
//! technical loss; blank: never met), so a double round-robin shows both meetings. Every row is named
//! up to [`NAMED`] players; beyond, the chart says where the names are.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Chart, FONT, LEGEND_HEIGHT, draw_error, mark_colour, nothing_to_show, outcome_legend, player_label,
};
use crate::data::LeagueData;
use crate::head_to_head::HeadToHead as Counted;

/// Up to this many players every row is named (cells stay at least [`NAMED_CELL`] pixels high, room for
/// a line of text); beyond, every few ranks, and the chart points to the table and the players' pages.
const NAMED: usize = 64;
/// The smallest cell a named row gets, in pixels.
const NAMED_CELL: u32 = 14;
/// The grid's size when the cells need not grow for names.
const GRID: u32 = 900;
/// Room above the grid for the column numbers, and below it for the axis words.
const TOP: u32 = 28;
const BOTTOM: u32 = 44;

#[derive(Debug)]
pub struct HeadToHead {
    counted: Counted,
    /// Each player's row label: `#rank id name`.
    labels: Vec<String>,
}

impl HeadToHead {
    pub fn new(data: &LeagueData) -> Self {
        let counted = Counted::new(data);
        let labels = counted
            .players
            .iter()
            .enumerate()
            .map(|(i, player)| {
                format!(
                    "#{} {}",
                    i + 1,
                    player_label(&player.player_id, &player.display_name, 22)
                )
            })
            .collect();
        Self { counted, labels }
    }

    fn players(&self) -> usize {
        self.counted.players.len()
    }

    fn named(&self) -> bool {
        self.players() <= NAMED
    }

    /// Pixels per cell: the grid fits [`GRID`], named rows never below [`NAMED_CELL`].
    fn cell(&self) -> u32 {
        let fitted = GRID / self.players().max(1) as u32;
        if self.named() {
            fitted.clamp(NAMED_CELL, 36)
        } else {
            fitted.max(4)
        }
    }

    /// Every how many ranks a column (and, beyond [`NAMED`], a row) is numbered.
    fn number_every(&self) -> usize {
        let cell = self.cell() as usize;
        // A rank number needs about 18 pixels side by side.
        18usize.div_ceil(cell).max(1)
    }

    fn label_width(&self) -> u32 {
        if self.named() { 230 } else { 60 }
    }

    fn grid_origin(&self) -> (i32, i32) {
        (self.label_width() as i32 + 12, (LEGEND_HEIGHT + TOP) as i32)
    }
}

impl Chart for HeadToHead {
    fn name(&self) -> &'static str {
        "head_to_head"
    }

    fn title(&self) -> &'static str {
        "Head-to-head: what the row player got against the column player, one stripe per meeting"
    }

    fn size(&self) -> (u32, u32) {
        let grid = self.cell() * self.players() as u32;
        let (x, y) = self.grid_origin();
        ((x as u32 + grid + 24).max(720), y as u32 + grid + BOTTOM)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()> {
        let n = self.players();
        if n < 2 {
            return nothing_to_show(area, "Fewer than two players");
        }
        let (legend, _) = area.split_vertically(LEGEND_HEIGHT);
        outcome_legend(&legend, "Head-to-head: the row player's result in each meeting")?;
        let cell = self.cell() as i32;
        let (x0, y0) = self.grid_origin();
        let grid = cell * n as i32;
        let font = if cell >= 16 { 12 } else { 11 };
        let right = TextStyle::from((FONT, font).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        let centred = TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
        let every = self.number_every();
        for (i, label) in self.labels.iter().enumerate() {
            let middle = cell * i as i32 + cell / 2;
            if self.named() {
                area.draw_text(label, &right, (x0 - 6, y0 + middle))
                    .map_err(draw_error)?;
            } else if i % every == 0 {
                area.draw_text(&format!("#{}", i + 1), &right, (x0 - 6, y0 + middle))
                    .map_err(draw_error)?;
            }
            if i % every == 0 {
                area.draw_text(&(i + 1).to_string(), &centred, (x0 + middle, y0 - 4))
                    .map_err(draw_error)?;
            }
        }
        // Faint lines every five ranks help follow a row or a column across a large grid.
        let faint = RGBColor(225, 225, 225);
        for i in (0..=n).step_by(5) {
            let at = cell * i as i32;
            area.draw(&PathElement::new([(x0 + at, y0), (x0 + at, y0 + grid)], faint))
                .map_err(draw_error)?;
            area.draw(&PathElement::new([(x0, y0 + at), (x0 + grid, y0 + at)], faint))
                .map_err(draw_error)?;
        }
        let gap = i32::from(cell >= 8);
        let self_colour = RGBColor(200, 200, 200);
        for row in 0..n {
            let top = y0 + cell * row as i32;
            for column in 0..n {
                let left = x0 + cell * column as i32;
                if row == column {
                    area.draw(&Rectangle::new(
                        [(left + gap, top + gap), (left + cell - gap, top + cell - gap)],
                        self_colour.filled(),
                    ))
                    .map_err(draw_error)?;
                    continue;
                }
                let Some(met) = self.counted.between(row, column) else {
                    continue;
                };
                let inner = cell - 2 * gap;
                let stripes = met.marks.len() as i32;
                for (k, &mark) in met.marks.iter().enumerate() {
                    let k = k as i32;
                    let from = left + gap + inner * k / stripes;
                    let to = left + gap + inner * (k + 1) / stripes;
                    area.draw(&Rectangle::new(
                        [(from, top + gap), (to, top + cell - gap)],
                        mark_colour(mark).filled(),
                    ))
                    .map_err(draw_error)?;
                }
            }
        }
        let words = if self.named() {
            "columns: opponents by final rank (the row of that rank); a cell's stripes are its meetings in play order"
        } else {
            "too many players to name every row: the head-to-head table on the page and each player's page name them"
        };
        let below = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
        let (width, _) = area.dim_in_pixel();
        area.draw_text(words, &below, (width as i32 / 2, y0 + grid + BOTTOM as i32 / 2))
            .map_err(draw_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::StandingRow;

    use super::*;

    fn league(players: usize) -> LeagueData {
        LeagueData {
            status: Default::default(),
            standings: (1..=players)
                .map(|i| StandingRow {
                    player_id: format!("P{i:02}"),
                    display_name: format!("bot-{i:02}-random"),
                    ..StandingRow::default()
                })
                .collect(),
            by_round: vec![],
            rounds: vec![],
            llm_moves: Default::default(),
            stopped: false,
        }
    }

    #[test]
    fn fifty_players_are_every_one_named_and_numbered() {
        let chart = HeadToHead::new(&league(50));
        assert!(chart.named());
        assert_eq!(chart.cell(), 18, "900 pixels over 50 rows");
        assert_eq!(chart.number_every(), 1, "every column numbered");
        assert_eq!(chart.labels[49], "#50 P50 bot-50-random");
        let big = HeadToHead::new(&league(200));
        assert!(!big.named());
        assert_eq!((big.cell(), big.number_every()), (4, 5));
    }
}
