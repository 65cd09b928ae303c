//! MATCH_RESULT_REPORT: the one result of a match, accepted only from the referee holding its lease.
//! A repeated report from that holder is a no-op that returns the stored result. Every report checks
//! whether its round is now complete (crate::league::round_completion): in its own transaction, which
//! completes the round with the same commit when it holds the round's last results, and otherwise again
//! after its commit. A repeated report checks again, so a manager that died between the two steps is
//! made good by the referee's retry.
//!
//! Reports that arrive together are recorded together ([`record`], fed by
//! crate::league::report_queue): one transaction, one statement and one commit (one fsync) for all of
//! them, and one completion check per round they finish, instead of one of each per report. Each report is still
//! judged on its own, in arrival order, as if recorded alone: a refused report changes nothing and does
//! not hold back the others.

use std::collections::{BTreeSet, HashMap, HashSet};

use league_domain::even_odd::Parity;
use league_domain::{LeagueId, MatchId, RefereeId};
use league_proto::ErrorCode;
use league_proto::json::{self, StoredRecord};
use league_proto::v2::MatchResult;
use prost::Message;
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerError, ManagerResult, reject};
use crate::ids;
use crate::league::even_odd_report;
use crate::league::kept_table::KeptTables;
use crate::league::round_completion;
use crate::league::verdict::{Verdict, verify};
use crate::league::waiting_claims::WaitingClaims;
use crate::report_route::ReportMatchResultBytes;
use crate::results::Side;
use crate::standings::StandingRow;

#[derive(Debug)]
pub struct Reported {
    pub recorded: MatchResult,
    pub duplicate: bool,
    /// Set when this report finished its round (a new round was released, or the league completed).
    pub round_completed: bool,
}

/// A referee's report, parsed and with its records encoded before it waits for any lock: the result as
/// protobuf and proto3 JSON (for the match_results view), the transcript as proto3 JSON only, the one
/// form it is stored in (the transcript_entries view reads it, GetMatch decodes it).
#[derive(Debug)]
pub struct Report {
    referee_id: RefereeId,
    league_id: LeagueId,
    match_id: MatchId,
    /// Empty: the referee's current lease (league.v2 reports carry none; the gateway reports for
    /// external referees this way).
    lease_id: String,
    result: MatchResult,
    result_bytes: Vec<u8>,
    result_json: String,
    transcript_json: String,
    /// When the match started and ended by its referee's clock (its transcript's first and last
    /// entries), in microseconds since the epoch: what schedules and `match_results` show, in columns
    /// of their own so that no reader parses the transcript's JSON for them.
    started_us: Option<i64>,
    ended_us: Option<i64>,
    /// What the players answered, as the transcript has it: an Even/Odd result must agree.
    answers: HashMap<String, Parity>,
}

impl Report {
    pub fn new(referee_id: RefereeId, request: impl Into<ReportMatchResultBytes>) -> ManagerResult<Self> {
        let ReportMatchResultBytes {
            league_id,
            match_id,
            lease_id,
            result,
            transcript,
        } = request.into();
        let league_id = ids::required("league_id", &league_id)?;
        let match_id = ids::required("match_id", &match_id)?;
        let result = result.ok_or_else(|| reject(ErrorCode::MissingRequiredField, "result is required"))?;
        // Written straight from its bytes (a report without a transcript, an external referee's, stores
        // an empty one); it refuses a transcript whose times proto3 JSON cannot write (out of the years
        // 1-9999), so the times below are in range.
        let mut answers = even_odd_report::Answers::default();
        let transcript = json::transcript_to_json_text(&transcript, |message| answers.note(message))
            .map_err(|error| {
                reject(
                    ErrorCode::InvalidMessageFormat,
                    format!("storing a league.v2.MatchTranscript as JSON: {error}"),
                )
            })?;
        Ok(Self {
            referee_id,
            league_id,
            match_id,
            lease_id,
            result_json: json_text(&result)?,
            answers: answers.0,
            started_us: transcript.first_at.as_ref().map(micros),
            ended_us: transcript.last_at.as_ref().map(micros),
            transcript_json: transcript.json,
            result_bytes: result.encode_to_vec(),
            result,
        })
    }

    fn key(&self) -> MatchKey {
        (self.league_id.to_string(), self.match_id.to_string())
    }
}

/// A match by league and match id, as its row has them.
type MatchKey = (String, String);

/// How one report of a batch was judged inside the batch's transaction.
enum Judged {
    Refused(ManagerError),
    /// The holder's repeat of a result already recorded: `recorded` is what was stored.
    Duplicate {
        recorded: MatchResult,
        round_id: u32,
    },
    /// Recorded by this batch.
    Recorded {
        round_id: u32,
    },
}

/// Records `reports` in one transaction, then completes each round they finished. Returns each
/// report's outcome, in order. Should the transaction fail, every report of the batch fails with the
/// same error (the referees repeat them; a repeat is safe).
pub async fn record(
    pool: &PgPool,
    tables: &KeptTables,
    waiting: &WaitingClaims,
    reports: &[Report],
) -> Vec<ManagerResult<Reported>> {
    let (judged, completed) = match record_together(pool, tables, waiting, reports).await {
        Ok(recorded) => recorded,
        Err(error) => {
            // Turned into its status once, so it is logged once for the whole batch.
            let status = tonic::Status::from(error);
            return reports
                .iter()
                .map(|_| Err(ManagerError::Status(status.clone())))
                .collect();
        }
    };
    // One completion check per round the batch touched and did not complete itself; a duplicate checks
    // too (see the module doc).
    let mut rounds: HashMap<(&LeagueId, u32), Result<bool, tonic::Status>> =
        completed.into_iter().map(|round| (round, Ok(true))).collect();
    for (report, judged) in reports.iter().zip(&judged) {
        let Some(round_id) = judged.round_id() else {
            continue;
        };
        let round = (&report.league_id, round_id);
        if rounds.contains_key(&round) {
            continue;
        }
        let completed = round_completion::complete_if_final(pool, tables, waiting, round.0, round.1)
            .await
            .map_err(tonic::Status::from);
        rounds.insert(round, completed);
    }
    let mut completing: HashSet<(&LeagueId, u32)> = HashSet::new();
    reports
        .iter()
        .zip(judged)
        .map(|(report, judged)| {
            let (recorded, duplicate, round_id) = match judged {
                Judged::Refused(error) => return Err(error),
                Judged::Duplicate { recorded, round_id } => (recorded, true, round_id),
                Judged::Recorded { round_id } => (report.result.clone(), false, round_id),
            };
            let round = (&report.league_id, round_id);
            let completed = rounds[&round].clone().map_err(ManagerError::Status)?;
            // The round is reported completed to one of its reports only.
            let round_completed = completed && completing.insert(round);
            Ok(Reported {
                recorded,
                duplicate,
                round_completed,
            })
        })
        .collect()
}

/// Judges every report against its match, locked, records the accepted ones and completes the rounds
/// they finished; commits once. Returns each report's judgement and the rounds completed.
async fn record_together<'r>(
    pool: &PgPool,
    tables: &KeptTables,
    waiting: &WaitingClaims,
    reports: &'r [Report],
) -> ManagerResult<(Vec<Judged>, HashSet<(&'r LeagueId, u32)>)> {
    // Lock order (docs/subsystems/lock-order.md): matches and standings in key order, then each round
    // completed
    // in league order (its league's row, the next round).
    let mut tx = pool.begin().await?;
    let leagues: Vec<&str> = reports.iter().map(|report| report.league_id.as_str()).collect();
    let match_ids: Vec<String> = reports.iter().map(|report| report.match_id.to_string()).collect();
    // Locked in one order, so two batches (two managers) cannot deadlock on each other's matches.
    let rows = sqlx::query_as!(
        LeasedMatch,
        r#"select m.league_id, m.match_id, m.status, m.referee_id as holder, m.lease_id::text as "lease_id?",
                m.result as stored, m.player_a_id as player_a, m.player_b_id as player_b, m.round_id
         from matches m
         where (m.league_id, m.match_id) in (select * from unnest($1::text[], $2::text[]))
         order by m.league_id, m.match_id
         for update of m"#,
        &leagues as &[&str],
        &match_ids as &[String],
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut matches: HashMap<MatchKey, LeasedMatch> = rows
        .into_iter()
        .map(|row| ((row.league_id.clone(), row.match_id.clone()), row))
        .collect();
    let mut judged = Vec::with_capacity(reports.len());
    let mut finishing = Finishing::default();
    let mut totals = Totals::default();
    for report in reports {
        let Some(leased) = matches.get_mut(&report.key()) else {
            judged.push(Judged::Refused(reject(
                ErrorCode::MatchNotFound,
                format!("no match {} in league {}", report.match_id, report.league_id),
            )));
            continue;
        };
        judged.push(judge(report, leased, &mut finishing, &mut totals)?);
    }
    finishing.finish(totals, &mut tx).await?;
    // Up to here nothing shared is locked: results commit side by side with other batches. Each round
    // the batch touched is completed here if this transaction sees it final; else by whichever check
    // after a commit first does.
    // In league order: a completion locks its league's row, and a batch that completed a round of
    // league B and then one of league A could wait for A's row while holding B's, held by a transaction
    // that takes A then B (docs/subsystems/lock-order.md).
    let checked: BTreeSet<(&LeagueId, u32)> = reports
        .iter()
        .zip(&judged)
        .filter_map(|(report, judged)| Some((&report.league_id, judged.round_id()?)))
        .collect();
    let mut completed = HashSet::new();
    let mut completions = Vec::new();
    let mut completed_in_order = Vec::new();
    for round in checked {
        if let Some(completion) =
            round_completion::complete_in(&mut tx, tables, waiting, round.0, round.1).await?
        {
            completed.insert(round);
            completed_in_order.push(round);
            completions.push(completion);
        }
    }
    tx.commit().await?;
    let mut released_final = Vec::new();
    for (completion, (league_id, _)) in completions.into_iter().zip(&completed_in_order) {
        if let Some(round_id) = completion.committed(pool, tables) {
            released_final.push((*league_id, round_id));
        }
    }
    // A round released final (forfeits only) gets no report to complete it: it is completed here. The
    // batch's results are committed whatever happens to it; should it fail, the next start of a
    // manager completes it (round_completion::complete_final_rounds).
    for (league_id, round_id) in released_final {
        if let Err(error) =
            round_completion::complete_if_final(pool, tables, waiting, league_id, round_id).await
        {
            tracing::error!(%league_id, round_id, %error, "completing a round of forfeits failed");
        }
    }
    for (report, judged) in reports.iter().zip(&judged) {
        if let Judged::Recorded { .. } = judged {
            tracing::info!(league_id = %report.league_id, match_id = %report.match_id,
                referee_id = %report.referee_id, outcome = ?report.result.status(),
                winner = %report.result.winner_player_id, "result recorded");
        }
    }
    Ok((judged, completed))
}

impl Judged {
    /// The round of a report that was recorded, now or before.
    fn round_id(&self) -> Option<u32> {
        match self {
            Judged::Refused(_) => None,
            Judged::Duplicate { round_id, .. } | Judged::Recorded { round_id } => Some(*round_id),
        }
    }
}

/// Judges one report against its locked match; if it is accepted, adds it to the matches the batch
/// finishes (`finishing`) and its players' points to `totals`. `leased` is updated as recording changes
/// it, so a repeat of the same report later in the batch is judged as it would be after this one's
/// commit.
fn judge<'r>(
    report: &'r Report,
    leased: &mut LeasedMatch,
    finishing: &mut Finishing<'r>,
    totals: &mut Totals,
) -> ManagerResult<Judged> {
    let round_id = leased.round_id as u32;
    // Leases are per referee, so an empty lease id still refuses a report from a referee whose lease
    // expired and went to another.
    let holds_lease = leased.holder.as_deref() == Some(report.referee_id.as_str())
        && (report.lease_id.is_empty() || leased.lease_id.as_deref() == Some(report.lease_id.as_str()));
    if leased.status == "finished" && holds_lease {
        let recorded = leased
            .stored
            .as_deref()
            .map(MatchResult::decode)
            .transpose()
            .map_err(|error| anyhow::anyhow!("stored result does not decode: {error}"))?
            .ok_or_else(|| {
                anyhow::anyhow!("match {} is finished but has no stored result", report.match_id)
            })?;
        return Ok(Judged::Duplicate { recorded, round_id });
    }
    // The operator ended the match: it has no lease any more, whoever held one.
    if leased.status == "cancelled" {
        return Ok(Judged::Refused(reject(
            ErrorCode::LeaseNotHeld,
            format!(
                "match {} was cancelled with league {}: its lease is void",
                report.match_id, report.league_id
            ),
        )));
    }
    if leased.status == "finished" && leased.holder.is_none() {
        return Ok(Judged::Refused(reject(
            ErrorCode::LeaseNotHeld,
            format!(
                "match {} was settled as a forfeit when a player withdrew: its lease is void",
                report.match_id
            ),
        )));
    }
    if leased.status != "running" || !holds_lease {
        return Ok(Judged::Refused(reject(
            ErrorCode::LeaseNotHeld,
            format!(
                "{} does not hold the lease of match {}",
                report.referee_id, report.match_id
            ),
        )));
    }
    let verdict = match verify(
        &report.result,
        report.match_id,
        &leased.player_a,
        &leased.player_b,
    ) {
        Ok(verdict) => verdict,
        Err(refusal) => return Ok(Judged::Refused(refusal)),
    };
    if let Some(why) = even_odd_report::refusal(
        &report.result,
        &report.answers,
        &leased.player_a,
        &leased.player_b,
    ) {
        return Ok(Judged::Refused(reject(
            ErrorCode::InvalidMessageFormat,
            format!("result of {}: {why}", report.match_id),
        )));
    }
    totals.add(&report.league_id, &verdict, &leased.player_a, &leased.player_b);
    finishing.add(report, verdict);
    leased.status = "finished".to_owned();
    leased.stored = Some(report.result_bytes.clone());
    Ok(Judged::Recorded { round_id })
}

/// The matches a batch finishes, written by one statement: a batch of 100 results is one round trip to
/// the database, not 100 (each carrying its transcript) while every match of the batch is locked.
#[derive(Default)]
struct Finishing<'r> {
    league_ids: Vec<&'r str>,
    match_ids: Vec<String>,
    statuses: Vec<&'static str>,
    winners: Vec<Option<&'r str>>,
    /// Every at-fault player with the number (from 1) of its match's row: an array per row does not
    /// pass through `unnest`, so the players are listed apart and gathered back by row.
    at_fault_rows: Vec<i32>,
    at_fault_players: Vec<&'r str>,
    results: Vec<&'r [u8]>,
    results_json: Vec<&'r str>,
    transcripts_json: Vec<&'r str>,
    started_us: Vec<Option<i64>>,
    ended_us: Vec<Option<i64>>,
}

impl<'r> Finishing<'r> {
    fn add(&mut self, report: &'r Report, verdict: Verdict<'r>) {
        let row = i32::try_from(self.match_ids.len() + 1).unwrap_or(i32::MAX);
        for player in &report.result.at_fault_player_ids {
            self.at_fault_rows.push(row);
            self.at_fault_players.push(player);
        }
        self.league_ids.push(report.league_id.as_str());
        self.match_ids.push(report.match_id.to_string());
        self.statuses.push(verdict.status);
        self.winners.push(verdict.winner);
        self.results.push(&report.result_bytes);
        self.results_json.push(&report.result_json);
        self.transcripts_json.push(&report.transcript_json);
        self.started_us.push(report.started_us);
        self.ended_us.push(report.ended_us);
    }

    /// Finishes the matches and adds `totals` (their players' points) to the standings, in one
    /// statement: every batch's path to its commit, and the last result's to the next round.
    async fn finish(self, totals: Totals, tx: &mut PgConnection) -> ManagerResult<()> {
        if self.match_ids.is_empty() {
            return Ok(());
        }
        let totals = totals.columns();
        sqlx::query!(
            "with finished as (
             update matches m
             set status = 'finished', result_status = d.result_status, winner_player_id = d.winner,
                 at_fault_player_ids = array(
                     select f.player_id
                     from unnest($8::int[], $9::text[]) with ordinality as f(row_number, player_id, k)
                     where f.row_number = d.row_number order by f.k),
                 result = d.result, finished_at = clock_timestamp(),
                 result_json = d.result_json::jsonb, transcript_json = d.transcript_json,
                 started_at = timestamptz 'epoch' + d.started_us * interval '1 microsecond',
                 ended_at = timestamptz 'epoch' + d.ended_us * interval '1 microsecond'
             from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[],
                         $6::text[], $7::text[], $18::bigint[], $19::bigint[])
                  with ordinality as d(league_id, match_id, result_status, winner, result,
                                       result_json, transcript_json, started_us, ended_us, row_number)
             where m.league_id = d.league_id and m.match_id = d.match_id
             ), added as (
             update standings s
             set played = s.played + d.played, wins = s.wins + d.wins, draws = s.draws + d.draws,
                 losses = s.losses + d.losses, technical_losses = s.technical_losses + d.technical_losses,
                 points = s.points + d.points
             from unnest($10::text[], $11::text[], $12::int[], $13::int[], $14::int[], $15::int[],
                         $16::int[], $17::int[])
                  as d(league_id, player_id, played, wins, draws, losses, technical_losses, points)
             where s.league_id = d.league_id and s.player_id = d.player_id
             )
             -- No columns: the statement is run for what its parts write.
             select",
            &self.league_ids as &[&str],
            &self.match_ids as &[String],
            &self.statuses as &[&str],
            &self.winners as &[Option<&str>],
            &self.results as &[&[u8]],
            &self.results_json as &[&str],
            &self.transcripts_json as &[&str],
            &self.at_fault_rows,
            &self.at_fault_players as &[&str],
            &totals.league_ids,
            &totals.player_ids,
            &totals.played,
            &totals.wins,
            &totals.draws,
            &totals.losses,
            &totals.technical_losses,
            &totals.points,
            &self.started_us as &[Option<i64>],
            &self.ended_us as &[Option<i64>],
        )
        .execute(&mut *tx)
        .await?;
        Ok(())
    }
}

/// What a batch's results add to each player's totals, summed per player (a player plays once a
/// round, but a batch may hold two rounds of a league).
#[derive(Default)]
struct Totals {
    rows: HashMap<(String, String), StandingRow<()>>,
}

impl Totals {
    fn add(&mut self, league_id: &LeagueId, verdict: &Verdict<'_>, player_a: &str, player_b: &str) {
        let outcome = verdict.outcome(player_a);
        for (player, side) in [(player_a, Side::A), (player_b, Side::B)] {
            self.rows
                .entry((league_id.to_string(), player.to_owned()))
                .or_insert_with(|| StandingRow::new(()))
                .record(outcome.mark_for(side));
        }
    }

    /// The totals as columns, by league and player (the order their rows are updated in).
    fn columns(self) -> TotalsColumns {
        let mut rows: Vec<_> = self.rows.into_iter().collect();
        rows.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        let mut columns = TotalsColumns::default();
        for ((league_id, player_id), row) in rows {
            columns.league_ids.push(league_id);
            columns.player_ids.push(player_id);
            columns.played.push(row.played as i32);
            columns.wins.push(row.wins as i32);
            columns.draws.push(row.draws as i32);
            columns.losses.push(row.losses as i32);
            columns.technical_losses.push(row.technical_losses as i32);
            columns.points.push(row.points as i32);
        }
        columns
    }
}

/// [`Totals`] as the statement's arrays.
#[derive(Default)]
struct TotalsColumns {
    league_ids: Vec<String>,
    player_ids: Vec<String>,
    played: Vec<i32>,
    wins: Vec<i32>,
    draws: Vec<i32>,
    losses: Vec<i32>,
    technical_losses: Vec<i32>,
    points: Vec<i32>,
}

/// A record as proto3 JSON text, for a jsonb column. A record proto3 JSON cannot write (a non-finite
/// number in a payload) is the referee's error: its report is refused and nothing is stored.
fn json_text<R: StoredRecord>(record: &R) -> ManagerResult<String> {
    league_proto::json::record_to_json_text(record).map_err(|error| {
        reject(
            ErrorCode::InvalidMessageFormat,
            format!("storing a {} as JSON: {error}", R::NAME),
        )
    })
}

/// `at` in microseconds since the epoch, rounded as Postgres rounds a time it reads from text.
fn micros(at: &prost_types::Timestamp) -> i64 {
    at.seconds
        .saturating_mul(1_000_000)
        .saturating_add(i64::from(at.nanos).saturating_add(500).div_euclid(1_000))
}

/// The reported match, locked for the report's transaction.
#[derive(Debug)]
struct LeasedMatch {
    league_id: String,
    match_id: String,
    status: String,
    holder: Option<String>,
    lease_id: Option<String>,
    stored: Option<Vec<u8>>,
    player_a: String,
    player_b: String,
    round_id: i32,
}
