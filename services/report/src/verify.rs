//! What `league verify <results folder>` checks (the command itself is the launcher's): a results
//! folder on its own, with no database and no manager. The manifest's checksums; every finished match's
//! result against its transcript ([`outcome`]); then the tables computed again from those results alone
//! — the standings with their tie-breaks (the manager's `standings::compute_standings`), the table after
//! each round, the head-to-head and the ratings (the report's own code) — against the folder's files,
//! line by line. It says each thing it checked and stops at the first disagreement, naming it.

mod outcome;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use league_manager::results::{Outcome, RecordedResult, Side};
use league_manager::standings::{self, compute_standings};
use league_proto::json::{StoredRecord, from_json, record_from_json_text};
use league_proto::v2::{
    GetLeagueStatusResponse, ResultStatus, RoundStandings, ScheduledMatch, ScheduledRound, StandingRow,
    TieBreak as ProtoTieBreak, TranscriptEntry,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::archive::{PROVENANCE, Provenance, TRANSCRIPTS, transcript_file};
use crate::data::LeagueData;
use crate::{manifest, tables};
use outcome::Checked;

/// Checks `folder`, telling `said` each check that passed; the first disagreement, or Ok. An error
/// is a folder that cannot be read at all.
pub fn check(folder: &Path, said: &mut dyn FnMut(String)) -> anyhow::Result<Result<(), String>> {
    anyhow::ensure!(folder.is_dir(), "{} is not a folder", folder.display());
    match manifest::check(folder)? {
        Ok(files) => said(format!(
            "{}: {files} files, each with its SHA-256, and no other",
            manifest::MANIFEST
        )),
        Err(disagreement) => return Ok(Err(disagreement)),
    }
    let Some(provenance) = Provenance::read(folder)? else {
        return Ok(Err(format!("{PROVENANCE} is missing")));
    };
    let matches = match read_transcripts(folder)? {
        Ok(matches) => matches,
        Err(disagreement) => return Ok(Err(disagreement)),
    };
    if let Err(disagreement) = every_match_is_there(&provenance, &matches) {
        return Ok(Err(disagreement));
    }
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for (scheduled, entries) in matches.values().filter(|(m, _)| m.result.is_some()) {
        match outcome::check(scheduled, entries) {
            Ok(how) => *counts.entry(checked_as(how)).or_default() += 1,
            Err(disagreement) => {
                return Ok(Err(format!(
                    "{}/{} ({} vs {}) {disagreement}",
                    TRANSCRIPTS,
                    transcript_file(&scheduled.match_id)?,
                    scheduled.player_a_id,
                    scheduled.player_b_id
                )));
            }
        }
    }
    for (how, count) in &counts {
        said(format!("{count} results {how}"));
    }
    let data = match recompute(&provenance, &matches) {
        Ok(data) => data,
        Err(disagreement) => return Ok(Err(disagreement)),
    };
    let files: [(&str, String, &str); 6] = [
        (
            "standings.csv",
            tables::standings_csv(&data),
            "the table, with each row's tie-break",
        ),
        (
            "standings.json",
            String::from_utf8(serde_json::to_vec_pretty(&tables::standings_json(&data))?)?,
            "the table, with each row's tie-break",
        ),
        (
            "standings_by_round.csv",
            tables::standings_by_round_csv(&data),
            "the table after each completed round",
        ),
        (
            "head_to_head.csv",
            tables::head_to_head_csv(&data),
            "every pair's meetings",
        ),
        ("ratings.csv", tables::ratings_csv(&data), "the ratings"),
        ("matches.csv", tables::matches_csv(&data), "every match"),
    ];
    for (file, computed, what) in files {
        let path = folder.join(file);
        let held = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        if let Some(disagreement) = first_difference(file, &held, &computed) {
            return Ok(Err(disagreement));
        }
        said(format!("{file}: {what}, as the transcripts give it"));
    }
    Ok(Ok(()))
}

fn checked_as(how: Checked) -> &'static str {
    match how {
        Checked::ByTheRule => "follow from the players' choices and the drawn number (even_odd's rule)",
        Checked::Technical => "are technical, the players at fault without a valid answer in the transcript",
        Checked::Replayed => "follow from the players' moves, replayed (tic_tac_toe's rules)",
        Checked::ByTheManager => "are forfeits the manager decided (withdrawals), with no referee",
    }
}

/// A match as its transcript file holds it: the match with its result, and its entries.
type Archived = (ScheduledMatch, Vec<TranscriptEntry>);

/// Where a match comes in play order: its round and number (from its id).
type PlayOrder = (u32, u32, String);

fn play_order(match_id: &str) -> PlayOrder {
    let (round, number) =
        league_domain::MatchId::parse(match_id).map_or((u32::MAX, u32::MAX), |id| (id.round(), id.number()));
    (round, number, match_id.to_owned())
}

/// Every transcript file, in play order; a file that is not one is a disagreement.
fn read_transcripts(folder: &Path) -> anyhow::Result<Result<BTreeMap<PlayOrder, Archived>, String>> {
    let dir = folder.join(TRANSCRIPTS);
    let mut matches = BTreeMap::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Err(format!("{TRANSCRIPTS}/ is missing")));
        }
        Err(error) => return Err(error).with_context(|| format!("reading {}", dir.display())),
    };
    for entry in entries {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        match parse_transcript(&text) {
            Ok((scheduled, lines)) if transcript_file(&scheduled.match_id).ok().as_deref() == Some(&name) => {
                matches.insert(play_order(&scheduled.match_id), (scheduled, lines));
            }
            Ok((scheduled, _)) => {
                return Ok(Err(format!(
                    "{TRANSCRIPTS}/{name} holds match {}",
                    scheduled.match_id
                )));
            }
            Err(problem) => return Ok(Err(format!("{TRANSCRIPTS}/{name}: {problem}"))),
        }
    }
    Ok(Ok(matches))
}

/// One transcript file: `{"match": …}` then `{"entry": …}` lines, each record read by the typed reader
/// (league_proto::json::read) rather than through `serde_json::Value` and reflection.
fn parse_transcript(text: &str) -> Result<Archived, String> {
    let mut lines = text.lines().enumerate().map(|(number, line)| (number + 1, line));
    let first = lines.next().ok_or("is empty")?;
    let scheduled = read_line(first, "match")?;
    let entries = lines
        .map(|line| read_line(line, "entry"))
        .collect::<Result<_, _>>()?;
    Ok((scheduled, entries))
}

/// Line `number`'s record under `key` (`{"<key>": …}`; other keys are left alone).
fn read_line<R: StoredRecord + DeserializeOwned>(
    (number, line): (usize, &str),
    key: &str,
) -> Result<R, String> {
    let not_one = || format!("line {number} is not {{\"{key}\": …}}");
    // JSON, but not an object: not a line of this file.
    let fields: BTreeMap<String, &RawValue> = serde_json::from_str(line).map_err(|error| {
        if error.is_data() {
            not_one()
        } else {
            format!("line {number} is not JSON: {error}")
        }
    })?;
    let record = fields.get(key).ok_or_else(not_one)?;
    record_from_json_text(record.get()).map_err(|error| format!("line {number}: {error}"))
}

/// The matches the provenance names (each referee's) and the league's count of finished matches are
/// all in the transcripts, and no match is there twice under another name.
fn every_match_is_there(
    provenance: &Provenance,
    matches: &BTreeMap<PlayOrder, Archived>,
) -> Result<(), String> {
    for referee in &provenance.referees {
        if let Some(missing) = referee
            .matches
            .iter()
            .find(|m| !matches.contains_key(&play_order(m)))
        {
            return Err(format!(
                "{missing} was run by {} ({PROVENANCE}) but {TRANSCRIPTS}/{missing}.jsonl is missing",
                referee.referee_id
            ));
        }
    }
    let finished = provenance
        .league
        .get("finished_matches")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let with_result = matches.values().filter(|(m, _)| m.result.is_some()).count() as u64;
    if with_result != finished {
        return Err(format!(
            "{PROVENANCE} says the league finished {finished} matches, {TRANSCRIPTS}/ holds {with_result} results"
        ));
    }
    Ok(())
}

/// A player id ordered as the manager orders the table's last tie-break: by its number (P2 < P10).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Numbered(u64, String);

impl Numbered {
    fn of(player_id: &str) -> Self {
        let number = player_id
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .unwrap_or(u64::MAX);
        Numbered(number, player_id.to_owned())
    }
}

/// The league as the folder's tables show it, computed again from the transcripts' results alone.
fn recompute(provenance: &Provenance, matches: &BTreeMap<PlayOrder, Archived>) -> Result<LeagueData, String> {
    let status: GetLeagueStatusResponse = from_json("league.v2.GetLeagueStatusResponse", &provenance.league)
        .map_err(|error| format!("{PROVENANCE}: league: {error}"))?;
    let players: Vec<Numbered> = provenance
        .players
        .iter()
        .map(|p| Numbered::of(&p.player_id))
        .collect();
    let names: BTreeMap<&str, &str> = provenance
        .players
        .iter()
        .map(|p| (p.player_id.as_str(), p.display_name.as_str()))
        .collect();
    // In play order, as the map holds them.
    let ordered: Vec<&ScheduledMatch> = matches.values().map(|(m, _)| m).collect();
    let results: Vec<(u32, RecordedResult<Numbered>)> = ordered
        .iter()
        .filter_map(|m| Some((m.round_id, recorded(m)?)))
        .collect();
    let table = |round: Option<u32>| -> Result<Vec<StandingRow>, String> {
        let counted: Vec<_> = results
            .iter()
            .filter(|(r, _)| round.is_none_or(|round| *r <= round))
            .map(|(_, result)| result.clone())
            .collect();
        let rows =
            compute_standings(&players, &counted).map_err(|error| format!("the standings: {error}"))?;
        Ok(rows.into_iter().map(|row| proto_row(row, &names)).collect())
    };
    let mut by_round = vec![];
    for &round_id in &provenance.completed_rounds {
        by_round.push(RoundStandings {
            round_id,
            standings: table(Some(round_id))?,
        });
    }
    let mut rounds: Vec<ScheduledRound> = vec![];
    for scheduled in ordered {
        match rounds.last_mut() {
            Some(round) if round.round_id == scheduled.round_id => round.matches.push(scheduled.clone()),
            _ => rounds.push(ScheduledRound {
                round_id: scheduled.round_id,
                matches: vec![scheduled.clone()],
                bye_player_ids: vec![],
            }),
        }
    }
    Ok(LeagueData {
        status,
        standings: table(None)?,
        by_round,
        rounds,
        llm_moves: BTreeMap::new(),
        stopped: false,
    })
}

/// A finished match's result as the standings count it.
fn recorded(scheduled: &ScheduledMatch) -> Option<RecordedResult<Numbered>> {
    let result = scheduled.result.as_ref()?;
    let side = |player: &str| {
        if player == scheduled.player_a_id {
            Side::A
        } else {
            Side::B
        }
    };
    let outcome = match ResultStatus::try_from(result.status).ok()? {
        ResultStatus::Win => Outcome::Win {
            winner: side(&result.winner_player_id),
        },
        ResultStatus::Draw => Outcome::Draw,
        ResultStatus::TechnicalLoss => Outcome::TechnicalLoss {
            loser: side(result.at_fault_player_ids.first()?),
        },
        ResultStatus::DoubleForfeit => Outcome::DoubleForfeit,
        ResultStatus::Unspecified => return None,
    };
    Some(RecordedResult {
        player_a: Numbered::of(&scheduled.player_a_id),
        player_b: Numbered::of(&scheduled.player_b_id),
        outcome,
    })
}

/// A computed row as the contracts carry it, with the player's display name.
fn proto_row(row: standings::StandingRow<Numbered>, names: &BTreeMap<&str, &str>) -> StandingRow {
    let rule = row
        .above_next_by
        .map_or(ProtoTieBreak::Unspecified, ProtoTieBreak::from);
    StandingRow {
        rank: row.rank,
        display_name: names
            .get(row.player_id.1.as_str())
            .copied()
            .unwrap_or_default()
            .to_owned(),
        player_id: row.player_id.1,
        played: row.played,
        wins: row.wins,
        draws: row.draws,
        losses: row.losses,
        technical_losses: row.technical_losses,
        points: row.points,
        above_next_by: rule as i32,
    }
}

/// The first line where the folder's `file` and the one computed from the transcripts differ.
fn first_difference(file: &str, held: &str, computed: &str) -> Option<String> {
    let (mut held_lines, mut computed_lines) = (held.lines(), computed.lines());
    for number in 1.. {
        match (held_lines.next(), computed_lines.next()) {
            (None, None) => return None,
            (held, computed) if held == computed => continue,
            (held, computed) => {
                return Some(format!(
                    "{file} line {number}: the folder has {}, the transcripts give {}",
                    shown(held),
                    shown(computed)
                ));
            }
        }
    }
    None
}

fn shown(line: Option<&str>) -> String {
    line.map_or_else(|| "nothing".to_owned(), |line| format!("`{line}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transcript file as `league run` wrote it (an even_odd match of a 4-player league).
    const WRITTEN: &str = include_str!("../fixtures/R1M1.jsonl");

    /// How the lines were read before: each parsed into a `Value`, then through reflection.
    fn through_reflection(text: &str) -> Result<Archived, String> {
        let mut lines = text.lines().enumerate();
        let json = |(number, line): (usize, &str), key: &str| -> Result<Value, String> {
            let value: Value = serde_json::from_str(line)
                .map_err(|error| format!("line {} is not JSON: {error}", number + 1))?;
            value
                .get(key)
                .cloned()
                .ok_or_else(|| format!("line {} is not {{\"{key}\": …}}", number + 1))
        };
        let first = lines.next().ok_or("is empty")?;
        let scheduled: ScheduledMatch = from_json("league.v2.ScheduledMatch", &json(first, "match")?)
            .map_err(|error| format!("line 1: {error}"))?;
        let mut entries = vec![];
        for line in lines {
            let number = line.0 + 1;
            let entry = from_json("league.v2.TranscriptEntry", &json(line, "entry")?)
                .map_err(|error| format!("line {number}: {error}"))?;
            entries.push(entry);
        }
        Ok((scheduled, entries))
    }

    #[test]
    fn transcript_files_are_read_as_reflection_read_them() {
        let read = parse_transcript(WRITTEN).expect("read");
        assert_eq!(read.1.len(), 15);
        assert_eq!(Ok(read), through_reflection(WRITTEN));
        let first = r#"{"match":{"match_id":"R1M1"},"note":1}"#;
        for (text, said) in [
            (String::new(), "is empty"),
            ("{\"match\":".to_owned(), "line 1 is not JSON"),
            ("[1]".to_owned(), "line 1 is not {\"match\": …}"),
            (r#"{"entry":{}}"#.to_owned(), "line 1 is not {\"match\": …}"),
            (
                r#"{"match":{"status":"LOST"}}"#.to_owned(),
                "line 1: not a league.v2.ScheduledMatch",
            ),
            (
                format!("{first}\n{{\"entry\":{{}}}}\nnot JSON"),
                "line 3 is not JSON",
            ),
            (
                format!("{first}\n{{\"match\":{{}}}}"),
                "line 2 is not {\"entry\": …}",
            ),
            (
                format!("{first}\n{{\"entry\":{{\"at\":\"yesterday\"}}}}"),
                "line 2: not a league.v2.TranscriptEntry",
            ),
        ] {
            let typed = parse_transcript(&text).expect_err(&text);
            let reflection = through_reflection(&text).expect_err(&text);
            assert!(typed.starts_with(said), "{typed}");
            assert!(reflection.starts_with(said), "{reflection}");
        }
    }
}
