//! The evidence a results folder keeps, so that its results can be checked after the league's database
//! is gone (`league run` drops it): every match's transcript as JSON Lines under `transcripts/`, and
//! `provenance.json` — who wrote the folder (version, commit, command line), the league's settings and
//! times, its players, its referees and the matches each ran, and the database it was read from.
//!
//! A transcript file is `transcripts/<match_id>.jsonl`, one JSON object a line: first
//! `{"match": …}`, the match as the schedule holds it (players, round, referee, times, and its result
//! as recorded, with the game's account: even_odd's choices and drawn number), then one
//! `{"entry": …}` per transcript entry in order (a state transition or a message to or from a player).
//! Everything is proto3 JSON as `league_proto::json` writes it (the contracts' field names, enums by
//! name, RFC 3339 times). One file a match, so a match is found by its id, read with `jq` one message
//! a line, and a missing match is a missing file.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use futures::{StreamExt, TryStreamExt};
use league_proto::json::{Alphabetical, to_json};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{GetMatchRequest, MatchTiming, MatchTranscript, ScheduledMatch};
use league_runtime::credentials::operator_request;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Writing;
use crate::data::{LeagueData, strategy_of};

/// The folder of transcripts, inside the results folder.
pub const TRANSCRIPTS: &str = "transcripts";
/// The provenance file, inside the results folder.
pub const PROVENANCE: &str = "provenance.json";
/// What `provenance.json`'s `format` says: the layout this version writes and `league verify` reads.
pub const FORMAT: &str = "league-results/1";
/// Transcripts read from the manager at once.
const AT_ONCE: usize = 8;

/// Where transcripts are read from: a manager's `GetMatch`, with the operator token.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    pub client: &'a ManagerServiceClient<GrpcChannel>,
    pub token: &'a SecretString,
}

/// Reads the transcript of every match of `data` that a referee took or that has a result,
/// [`AT_ONCE`] at a time, and writes each to `<dir>/transcripts/<match_id>.jsonl` as it comes (a
/// 200-player league has 39 800: they are never all in memory). Returns the league's match timings.
pub async fn write_transcripts(
    reader: &Reader<'_>,
    data: &LeagueData,
    dir: &Path,
) -> anyhow::Result<Option<MatchTiming>> {
    let folder = dir.join(TRANSCRIPTS);
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    let league_id = data.league_id().to_owned();
    let wanted = data
        .matches()
        .filter(|m| m.result.is_some() || !m.referee_id.is_empty());
    let mut answers = futures::stream::iter(wanted)
        .map(|scheduled| {
            let mut client = reader.client.clone();
            let request = GetMatchRequest {
                league_id: league_id.clone(),
                match_id: scheduled.match_id.clone(),
            };
            async move {
                let answer = client
                    .get_match(operator_request(reader.token, request))
                    .await
                    .map_err(|status| anyhow::anyhow!("{}", status.message()))
                    .with_context(|| format!("reading the transcript of {}", scheduled.match_id))?;
                anyhow::Ok((scheduled, answer.into_inner()))
            }
        })
        .buffered(AT_ONCE);
    let mut timing = None;
    while let Some((scheduled, answer)) = answers.try_next().await? {
        let path = folder.join(transcript_file(&scheduled.match_id)?);
        let transcript = answer.transcript.unwrap_or_default();
        std::fs::write(&path, transcript_lines(scheduled, &transcript)?)
            .with_context(|| format!("writing {}", path.display()))?;
        timing = timing.or(answer.timing);
    }
    Ok(timing)
}

/// A match's transcript file name: its id (`R3M2`, checked to be one) and `.jsonl`.
pub fn transcript_file(match_id: &str) -> anyhow::Result<String> {
    let id =
        league_domain::MatchId::parse(match_id).with_context(|| format!("{match_id:?} is not a match id"))?;
    Ok(format!("{id}.jsonl"))
}

/// The JSON Lines of one match: the match, then each entry. Written straight to text with every
/// object's keys in alphabetical order, as the files were first written through reflection and
/// `serde_json::Value` ([`Alphabetical`]): 1.0 M instructions a 15-entry match that way, 67,000 now.
pub fn transcript_lines(scheduled: &ScheduledMatch, transcript: &MatchTranscript) -> anyhow::Result<String> {
    // About 250 bytes a line.
    let mut out = Vec::with_capacity(250 * (transcript.entries.len() + 2));
    line(&mut out, "match", &Alphabetical(scheduled))
        .with_context(|| format!("writing {} as JSON", scheduled.match_id))?;
    for (number, entry) in transcript.entries.iter().enumerate() {
        line(&mut out, "entry", &Alphabetical(entry))
            .with_context(|| format!("writing entry {} of {} as JSON", number + 1, scheduled.match_id))?;
    }
    Ok(String::from_utf8(out)?)
}

/// `{"<key>":<value>}` and a newline.
fn line(out: &mut Vec<u8>, key: &str, value: &impl Serialize) -> serde_json::Result<()> {
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(&mut *out, value)?;
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// Who wrote a results folder, from what, and with which settings (`provenance.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// [`FORMAT`].
    pub format: String,
    pub league_id: String,
    pub game_type: String,
    /// The database the league was read from; null when it was read from a running manager by URL.
    pub database: Option<String>,
    /// When the league's schedule was released, and when it completed or was cancelled (RFC 3339, UTC;
    /// null until then).
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub cancelled_at: Option<String>,
    /// When this folder was written (UTC).
    pub written_at: String,
    pub written_by: WrittenBy,
    /// The settings `league run` was given (null when `league report` wrote the folder: it knows the
    /// league's own settings only, below).
    pub run_settings: Option<Value>,
    /// The league's match timings as the manager held them (`league.v2.MatchTiming`).
    pub timing: Option<Value>,
    /// The league as the manager described it (`league.v2.GetLeagueStatusResponse`).
    pub league: Value,
    /// The rounds the manager had completed, in order.
    pub completed_rounds: Vec<u32>,
    pub players: Vec<ArchivedPlayer>,
    /// Every referee that took a match, and those matches.
    pub referees: Vec<ArchivedReferee>,
    /// How the transcripts are laid out.
    pub transcripts: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrittenBy {
    /// `league run` or `league report`.
    pub command: String,
    pub version: String,
    /// The git commit the binary was built from, or `unknown` (built outside a git checkout).
    pub commit: String,
    /// The command line, as given.
    pub command_line: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchivedPlayer {
    pub player_id: String,
    pub display_name: String,
    pub strategy: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchivedReferee {
    pub referee_id: String,
    pub matches: Vec<String>,
}

/// What decides whether a results folder is a league's: its id, its database and its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub league_id: String,
    pub database: Option<String>,
    pub started_at: Option<String>,
}

impl Identity {
    /// Whether two folders' leagues are one: the same id and start, and the same database where both
    /// know it (a league read from a manager by URL does not know its database).
    pub fn is(&self, other: &Identity) -> bool {
        let databases = match (&self.database, &other.database) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        };
        self.league_id == other.league_id && self.started_at == other.started_at && databases
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "league {} of database {}, started {}",
            self.league_id,
            self.database.as_deref().unwrap_or("(a manager, by URL)"),
            self.started_at.as_deref().unwrap_or("(not started)")
        )
    }
}

impl Provenance {
    /// The provenance of `data` as `writing` writes it (its command, binary, database and run settings).
    /// Its `timing` is set once the transcripts, which carry it, are read.
    pub fn new(writing: &Writing, data: &LeagueData) -> anyhow::Result<Self> {
        let status = &data.status;
        let mut referees: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for scheduled in data.matches().filter(|m| !m.referee_id.is_empty()) {
            referees
                .entry(&scheduled.referee_id)
                .or_default()
                .push(scheduled.match_id.clone());
        }
        Ok(Provenance {
            format: FORMAT.to_owned(),
            league_id: status.league_id.clone(),
            game_type: status.game_type.clone(),
            database: writing.database.clone(),
            started_at: status.started_at.as_ref().map(rfc3339),
            completed_at: status.completed_at.as_ref().map(rfc3339),
            cancelled_at: status.cancelled_at.as_ref().map(rfc3339),
            written_at: humantime_serde::re::humantime::format_rfc3339_millis(std::time::SystemTime::now())
                .to_string(),
            written_by: WrittenBy {
                command: writing.command.to_owned(),
                version: writing.version.to_owned(),
                commit: writing.commit.to_owned(),
                command_line: std::env::args().collect(),
            },
            run_settings: writing.run_settings.clone(),
            timing: None,
            league: to_json("league.v2.GetLeagueStatusResponse", status)?,
            completed_rounds: data.by_round.iter().map(|round| round.round_id).collect(),
            players: data
                .standings
                .iter()
                .map(|row| ArchivedPlayer {
                    player_id: row.player_id.clone(),
                    display_name: row.display_name.clone(),
                    strategy: strategy_of(&row.display_name),
                })
                .collect(),
            referees: referees
                .into_iter()
                .map(|(referee_id, matches)| ArchivedReferee {
                    referee_id: referee_id.to_owned(),
                    matches,
                })
                .collect(),
            transcripts: format!(
                "{TRANSCRIPTS}/<match_id>.jsonl: the first line {{\"match\": ScheduledMatch with its result}}, then \
                 one line {{\"entry\": TranscriptEntry}} per transcript entry, in order (proto3 JSON)"
            ),
        })
    }

    pub fn identity(&self) -> Identity {
        Identity {
            league_id: self.league_id.clone(),
            database: self.database.clone(),
            started_at: self.started_at.clone(),
        }
    }

    /// Reads `<dir>/provenance.json`; None when the folder has none.
    pub fn read(dir: &Path) -> anyhow::Result<Option<Self>> {
        let path = dir.join(PROVENANCE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
        };
        let provenance: Provenance = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a provenance file", path.display()))?;
        anyhow::ensure!(
            provenance.format == FORMAT,
            "{} is of format {:?}; this version reads {FORMAT:?}",
            path.display(),
            provenance.format
        );
        Ok(Some(provenance))
    }
}

/// A protobuf time in RFC 3339, UTC, to the millisecond.
pub fn rfc3339(at: &prost_types::Timestamp) -> String {
    let time = std::time::SystemTime::try_from(*at).unwrap_or(std::time::UNIX_EPOCH);
    humantime_serde::re::humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests {
    use league_proto::json::from_json;
    use league_proto::v2::transcript_entry::Entry;
    use league_proto::v2::{StateTransition, TranscriptEntry};
    use serde_json::json;

    use super::*;

    /// A transcript file as `league run` wrote it through reflection and `serde_json::Value`, before
    /// the lines were written straight to text (an even_odd match of a 4-player league).
    const WRITTEN: &str = include_str!("../fixtures/R1M1.jsonl");

    /// The file's match and transcript, read through reflection.
    fn read(text: &str) -> (ScheduledMatch, MatchTranscript) {
        let mut lines = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("JSON"));
        let first = lines.next().expect("a first line");
        let scheduled: ScheduledMatch =
            from_json("league.v2.ScheduledMatch", &first["match"]).expect("a match");
        let entries = lines
            .map(|line| from_json("league.v2.TranscriptEntry", &line["entry"]).expect("an entry"))
            .collect();
        let match_id = scheduled.match_id.clone();
        (scheduled, MatchTranscript { match_id, entries })
    }

    /// The lines as they were written: each record through reflection into a `Value`.
    fn through_value(scheduled: &ScheduledMatch, transcript: &MatchTranscript) -> String {
        let mut out = String::new();
        let mut line = |value: Value| {
            out.push_str(&serde_json::to_string(&value).expect("text"));
            out.push('\n');
        };
        line(json!({ "match": to_json("league.v2.ScheduledMatch", scheduled).expect("reflection") }));
        for entry in &transcript.entries {
            line(json!({ "entry": to_json("league.v2.TranscriptEntry", entry).expect("reflection") }));
        }
        out
    }

    #[test]
    fn a_transcript_file_is_written_as_it_was_byte_for_byte() {
        let (scheduled, transcript) = read(WRITTEN);
        assert_eq!(transcript.entries.len(), 15);
        assert_eq!(
            transcript_lines(&scheduled, &transcript).expect("written"),
            WRITTEN
        );
        // A match with no result or times, enums the contracts do not name, escapes and unicode.
        let odd = ScheduledMatch {
            status: 9,
            referee_id: "R\u{e9}F \"1\"\n\u{0}".into(),
            ..ScheduledMatch::default()
        };
        let transition = StateTransition {
            from: -1,
            to: 42,
            reason: "\u{1f600}\\".into(),
        };
        let transcript = MatchTranscript {
            match_id: String::new(),
            entries: vec![
                TranscriptEntry::default(),
                TranscriptEntry {
                    at: None,
                    entry: Some(Entry::StateTransition(transition)),
                },
            ],
        };
        assert_eq!(
            transcript_lines(&odd, &transcript).expect("written"),
            through_value(&odd, &transcript)
        );
    }
}
