//! How the operator commands print what they read: a table for people, CSV for spreadsheets, or JSON
//! (the record's canonical proto3 JSON, every field) for programs.

use std::fmt::Display;

use clap::ValueEnum;
use comfy_table::presets::NOTHING;
use comfy_table::{CellAlignment, Table};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
}

/// Rows under named columns.
#[derive(Debug, Default)]
pub struct Rows {
    columns: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Rows {
    pub fn new(columns: &[&'static str]) -> Self {
        Self {
            columns: columns.to_vec(),
            rows: vec![],
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Appends a column whose cell in each row is `value(row)`.
    pub fn add_column(&mut self, name: &'static str, value: impl Fn(&[String]) -> String) {
        self.columns.push(name);
        for row in &mut self.rows {
            let cell = value(row);
            row.push(cell);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Aligned columns; numbers to the right.
    pub fn table(&self) -> String {
        let mut table = Table::new();
        table.load_preset(NOTHING).set_header(&self.columns);
        for row in &self.rows {
            table.add_row(row);
        }
        for (index, column) in table.column_iter_mut().enumerate() {
            let numeric = self
                .rows
                .iter()
                .all(|row| row.get(index).is_some_and(|cell| cell.parse::<f64>().is_ok()));
            if numeric && !self.rows.is_empty() {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        table.to_string()
    }

    pub fn csv(&self) -> anyhow::Result<String> {
        let mut writer = csv::Writer::from_writer(vec![]);
        writer.write_record(&self.columns)?;
        for row in &self.rows {
            writer.write_record(row)?;
        }
        Ok(String::from_utf8(writer.into_inner()?)?)
    }
}

/// Prints `rows` as a table or CSV, or `json` (the whole record) as JSON.
pub fn print(
    format: Format,
    rows: &Rows,
    json: impl FnOnce() -> anyhow::Result<serde_json::Value>,
) -> anyhow::Result<()> {
    match format {
        Format::Table => println!("{}", rows.table()),
        Format::Csv => print!("{}", rows.csv()?),
        Format::Json => println!("{}", serde_json::to_string_pretty(&json()?)?),
    }
    Ok(())
}

/// A protobuf record as JSON (see `league_proto::json`).
pub fn json<M: prost::Message>(full_name: &str, message: &M) -> anyhow::Result<serde_json::Value> {
    Ok(league_proto::json::to_json(full_name, message)?)
}

/// A cell: the value, or empty.
pub fn cell(value: impl Display) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Rows {
        let mut rows = Rows::new(&["player", "name", "points"]);
        rows.push(vec!["P01".into(), "bot, the first".into(), "7".into()]);
        rows.push(vec!["P02".into(), "bot-adaptive".into(), "12".into()]);
        rows
    }

    #[test]
    fn a_table_aligns_numbers_right() {
        let table = sample().table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[0].contains("player") && lines[0].contains("points"));
        assert!(lines[1].trim_end().ends_with(" 7") && lines[2].trim_end().ends_with("12"));
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(
            sample().csv().expect("csv"),
            "player,name,points\nP01,\"bot, the first\",7\nP02,bot-adaptive,12\n"
        );
    }
}
