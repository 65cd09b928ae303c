//! The report's charts, each drawn once per backend: SVG for the page and for scaling, PNG for
//! anything that shows pictures. Text is drawn with a font embedded in the binary (Liberation Sans,
//! SIL OFL, fonts/OFL.txt), so charts look the same everywhere and need no system font configuration.

mod durations;
mod matrix;
mod progression;
mod results;
mod strategy;

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

use crate::data::{LeagueData, Mark};

pub use progression::progression_series;
pub use strategy::{StrategyGroup, strategy_groups};

/// The one font family the charts use.
pub const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("fonts/LiberationSans-Regular.ttf");

/// One chart: its size and how to draw it on any backend.
pub trait Chart {
    /// The file name without extension, e.g. `standings_progression`.
    fn name(&self) -> &'static str;
    /// What the chart shows, for the page.
    fn title(&self) -> &'static str;
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>;
}

/// Every chart of `data`, in the order the page shows them.
pub fn all(data: &LeagueData) -> Vec<Box<dyn Render + '_>> {
    vec![
        Box::new(progression::Progression::new(data)),
        Box::new(results::Results::new(data)),
        Box::new(strategy::Strategies::new(data)),
        Box::new(matrix::HeadToHead::new(data)),
        Box::new(durations::Durations::new(data)),
    ]
}

/// A chart written as `<name>.svg` and `<name>.png`.
pub trait Render {
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    fn size(&self) -> (u32, u32);
    fn write(&self, dir: &Path) -> anyhow::Result<()>;
}

impl<C: Chart> Render for C {
    fn name(&self) -> &'static str {
        Chart::name(self)
    }

    fn title(&self) -> &'static str {
        Chart::title(self)
    }

    fn size(&self) -> (u32, u32) {
        Chart::size(self)
    }

    fn write(&self, dir: &Path) -> anyhow::Result<()> {
        font_registered()?;
        let name = Chart::name(self);
        let size = Chart::size(self);
        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            area.fill(&WHITE).map_err(draw_error)?;
            self.draw(&area).with_context(|| format!("drawing {name}.svg"))?;
            area.present().map_err(draw_error)?;
        }
        std::fs::write(dir.join(format!("{name}.svg")), svg)
            .with_context(|| format!("writing {name}.svg"))?;
        let png = dir.join(format!("{name}.png"));
        let area = BitMapBackend::new(&png, size).into_drawing_area();
        area.fill(&WHITE).map_err(draw_error)?;
        self.draw(&area).with_context(|| format!("drawing {name}.png"))?;
        area.present().map_err(draw_error)?;
        Ok(())
    }
}

fn font_registered() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = REGISTERED.get_or_init(|| register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok());
    anyhow::ensure!(*ok, "the embedded chart font does not load");
    Ok(())
}

/// A drawing error as an error with context (plotters' errors differ per backend).
pub fn draw_error<E: std::fmt::Debug>(error: E) -> anyhow::Error {
    anyhow::anyhow!("drawing failed: {error:?}")
}

/// The colour each outcome has in every chart.
pub fn mark_colour(mark: Mark) -> RGBColor {
    match mark {
        Mark::Win => RGBColor(46, 160, 67),
        Mark::Draw => RGBColor(240, 180, 40),
        Mark::Loss => RGBColor(214, 39, 40),
        Mark::TechnicalLoss => RGBColor(110, 50, 150),
    }
}

/// Height of the strip above a chart that holds its title and the outcome colours' names.
pub const LEGEND_HEIGHT: u32 = 80;

/// `title`, and below it the outcome colours and their names in a row, along the top of `area`.
pub fn outcome_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str) -> anyhow::Result<()> {
    let (width, _) = area.dim_in_pixel();
    let caption = TextStyle::from((FONT, 24).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(title, &caption, (width as i32 / 2, 24))
        .map_err(draw_error)?;
    let items = [
        (Mark::Win, "win"),
        (Mark::Draw, "draw"),
        (Mark::Loss, "loss"),
        (Mark::TechnicalLoss, "technical loss"),
    ];
    let style = TextStyle::from((FONT, 16).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let total: i32 = items.iter().map(|(_, name)| 40 + 9 * name.len() as i32).sum();
    let mut x = (width as i32 - total) / 2;
    let y = 60;
    for (mark, name) in items {
        area.draw(&Rectangle::new(
            [(x, y - 8), (x + 16, y + 8)],
            mark_colour(mark).filled(),
        ))
        .map_err(draw_error)?;
        area.draw_text(name, &style, (x + 22, y)).map_err(draw_error)?;
        x += 40 + 9 * name.len() as i32;
    }
    Ok(())
}

/// A player as charts label it: `P01 bot-01-random`, shortened to `max` characters.
pub fn player_label(player_id: &str, display_name: &str, max: usize) -> String {
    let label = if display_name.is_empty() || display_name == player_id {
        player_id.to_owned()
    } else {
        format!("{player_id} {display_name}")
    };
    if label.chars().count() <= max {
        label
    } else {
        let mut short: String = label.chars().take(max.saturating_sub(1)).collect();
        short.push('…');
        short
    }
}

/// Draws `message` in the middle of an empty chart (a league with nothing to show yet).
pub fn nothing_to_show<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    message: &str,
) -> anyhow::Result<()> {
    let (width, height) = area.dim_in_pixel();
    let style = TextStyle::from((FONT, 20).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text(message, &style, (width as i32 / 2, height as i32 / 2))
        .map_err(draw_error)
}
