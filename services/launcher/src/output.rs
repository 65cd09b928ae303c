//! How the operator commands print what they read: a table for people, CSV for spreadsheets, or JSON
//! (the record's proto3 JSON, every field, enum values in the league's lower-case words: `registering`,
//! not `LEAGUE_STATUS_REGISTERING`) for programs. A CSV stream is one table: a command that shows
//! several (a player's row and its matches) prints the one `--section` names.

use std::fmt::Display;

use clap::ValueEnum;
use comfy_table::presets::NOTHING;
use comfy_table::{CellAlignment, Table};
use league_proto::v2::{
    AgentKind, Direction, LeagueStatus, MatchState, MatchStatus, ResultStatus, Role, StallReason, TieBreak,
};
use serde_json::Value;

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
    json: impl FnOnce() -> anyhow::Result<Value>,
) -> anyhow::Result<()> {
    match format {
        Format::Table => println!("{}", rows.table()),
        Format::Csv => print!("{}", rows.csv()?),
        Format::Json => println!("{}", serde_json::to_string_pretty(&json()?)?),
    }
    Ok(())
}

/// Prints named tables: every one (or the one `section` names) as tables under their names, the one
/// `section` names as CSV (a CSV stream holds one table: without a section, CSV is refused, naming the
/// sections), or `json` (the whole record).
pub fn print_sections(
    format: Format,
    section: Option<&str>,
    sections: &[(&'static str, Rows)],
    json: impl FnOnce() -> anyhow::Result<Value>,
) -> anyhow::Result<()> {
    let names = || {
        sections
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<&(&str, Rows)> = match section {
        Some(wanted) => {
            let found = sections.iter().find(|(name, _)| *name == wanted);
            vec![found.ok_or_else(|| {
                anyhow::anyhow!("there is no section {wanted:?}: choose one of {}", names())
            })?]
        }
        None => sections.iter().collect(),
    };
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&json()?)?),
        Format::Csv => match chosen.as_slice() {
            [(_, rows)] => print!("{}", rows.csv()?),
            _ => anyhow::bail!("CSV holds one table: choose it with --section ({})", names()),
        },
        Format::Table => {
            for (index, (name, rows)) in chosen.iter().enumerate() {
                if index > 0 {
                    println!();
                }
                if chosen.len() > 1 {
                    println!("{name}");
                }
                println!("{}", rows.table());
            }
        }
    }
    Ok(())
}

/// A protobuf record as JSON (see `league_proto::json`), its enum values in lower-case words.
pub fn json<M: prost::Message>(full_name: &str, message: &M) -> anyhow::Result<Value> {
    let mut value = league_proto::json::to_json(full_name, message)?;
    lower_enums(&mut value);
    Ok(value)
}

/// Each enum value of the league.v2 contracts in `value` (`LEAGUE_STATUS_REGISTERING`) as the league
/// says it (`registering`): its name without the enum's prefix, in lower case.
pub fn lower_enums(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Some(word) = enum_word(text) {
                *text = word;
            }
        }
        Value::Array(values) => values.iter_mut().for_each(lower_enums),
        Value::Object(fields) => fields.values_mut().for_each(lower_enums),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// An enum's value-name prefix, and whether a name is one of its values.
type KnownEnum = (&'static str, fn(&str) -> bool);

/// `name` as a word, when it is an enum value of the contracts.
fn enum_word(name: &str) -> Option<String> {
    let known: [KnownEnum; 9] = [
        ("AGENT_KIND_", |n| AgentKind::from_str_name(n).is_some()),
        ("MATCH_STATE_", |n| MatchState::from_str_name(n).is_some()),
        ("MATCH_STATUS_", |n| MatchStatus::from_str_name(n).is_some()),
        ("RESULT_STATUS_", |n| ResultStatus::from_str_name(n).is_some()),
        ("ROLE_", |n| Role::from_str_name(n).is_some()),
        ("TIE_BREAK_", |n| TieBreak::from_str_name(n).is_some()),
        ("DIRECTION_", |n| Direction::from_str_name(n).is_some()),
        ("LEAGUE_STATUS_", |n| LeagueStatus::from_str_name(n).is_some()),
        ("STALL_REASON_", |n| StallReason::from_str_name(n).is_some()),
    ];
    known.into_iter().find_map(|(prefix, is_value)| {
        let word = name.strip_prefix(prefix)?;
        is_value(name).then(|| word.to_lowercase())
    })
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
    fn enum_values_are_the_leagues_words_and_nothing_else_changes() {
        let mut value = serde_json::json!({
            "status": "LEAGUE_STATUS_REGISTERING",
            "rows": [{"above_next_by": "TIE_BREAK_HEAD_TO_HEAD", "display_name": "LEAGUE_STATUS_SOON"}],
            "entries": [{"direction": "DIRECTION_TO_PLAYER", "to": "MATCH_STATE_COLLECTING_CHOICES"}],
            "reason": "P01 chose even",
            "played": 3,
        });
        lower_enums(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                "status": "registering",
                "rows": [{"above_next_by": "head_to_head", "display_name": "LEAGUE_STATUS_SOON"}],
                "entries": [{"direction": "to_player", "to": "collecting_choices"}],
                "reason": "P01 chose even",
                "played": 3,
            })
        );
    }

    #[test]
    fn a_csv_stream_is_one_section() {
        let sections = [("standing", sample()), ("matches", sample())];
        let json = || Ok(Value::Null);
        let refused = print_sections(Format::Csv, None, &sections, json).expect_err("two tables");
        assert!(
            refused.to_string().contains("--section (standing, matches)"),
            "{refused}"
        );
        assert!(print_sections(Format::Csv, Some("matches"), &sections, json).is_ok());
        let unknown = print_sections(Format::Table, Some("moves"), &sections, json).expect_err("no such");
        assert!(
            unknown.to_string().contains("choose one of standing, matches"),
            "{unknown}"
        );
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(
            sample().csv().expect("csv"),
            "player,name,points\nP01,\"bot, the first\",7\nP02,bot-adaptive,12\n"
        );
    }
}
