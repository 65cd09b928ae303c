//! One league measured from what the system recorded: its start and completion times, every match's
//! transcript, the processes' memory and CPU, the gRPC exchanges and the round boundaries.

use std::time::Duration;

use anyhow::Context;
use futures::{StreamExt, TryStreamExt};
use league_launcher::run::Finished;
use league_proto::v2::transcript_entry::Entry;
use league_proto::v2::{
    Direction, GetLeagueStatusRequest, GetLeagueStatusResponse, GetMatchRequest, LeagueStatus,
    TranscriptEntry,
};
use league_runtime::credentials::operator_request;

use crate::cpu::CpuUsed;
use crate::exchanges::{Exchanges, player_exchanges};
use crate::overhead::Overhead;
use crate::rounds;
use crate::wrk::Throughput;

/// How many match transcripts the bench reads at once after a league.
const TRANSCRIPT_READS: usize = 8;

/// One league's numbers.
#[derive(Debug)]
pub struct Measured {
    pub league_id: String,
    /// Its start and completion, milliseconds since the epoch (the manager's clock).
    pub started_ms: f64,
    pub completed_ms: f64,
    pub players: u32,
    pub matches: u32,
    pub wall: Duration,
    pub match_p50: Duration,
    pub match_p99: Duration,
    pub player_calls_per_match: f64,
    /// The gRPC exchanges those calls took (ADR 0058: many calls to an exchange).
    pub exchanges: Exchanges,
    pub notifications_per_match: f64,
    pub peak_rss_kib: Vec<(String, u64)>,
    /// The CPU the whole run had used when its leagues completed (shared by leagues played at once).
    pub cpu: CpuUsed,
    pub overhead: Option<Overhead>,
    pub throughput: Vec<Throughput>,
    pub rounds: rounds::RoundBoundaries,
}

/// League `league_id`'s status once it is completed and its league events are all delivered (the last
/// round's notifications may still be on their way when it completes).
pub async fn completed(finished: &mut Finished, league_id: &str) -> anyhow::Result<GetLeagueStatusResponse> {
    loop {
        let status = finished
            .client
            .get_league_status(operator_request(
                &finished.operator_token,
                GetLeagueStatusRequest {
                    league_id: league_id.to_owned(),
                },
            ))
            .await
            .with_context(|| format!("reading league {league_id}'s status"))?
            .into_inner();
        anyhow::ensure!(
            status.status != LeagueStatus::Cancelled as i32,
            "league {league_id} was cancelled"
        );
        if status.status == LeagueStatus::Completed as i32 && status.notifications_pending == 0 {
            return Ok(status);
        }
        // Polling what the manager reports, as `league run` follows its league: not synchronisation.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `t` in milliseconds since the epoch.
fn millis(t: &prost_types::Timestamp) -> f64 {
    t.seconds as f64 * 1e3 + f64::from(t.nanos) / 1e6
}

/// What the bench keeps of one match's transcript.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MatchSummary {
    /// From its first entry to its last, by the referee's clock (`None`: no entry has a time).
    duration: Option<Duration>,
    /// The messages its referee sent to the players.
    player_calls: usize,
}

impl MatchSummary {
    fn of(entries: &[TranscriptEntry]) -> Self {
        let times = || entries.iter().filter_map(|entry| entry.at.as_ref().map(millis));
        let duration = match (times().reduce(f64::min), times().reduce(f64::max)) {
            (Some(first), Some(last)) => Some(Duration::from_secs_f64((last - first).max(0.0) / 1e3)),
            _ => None,
        };
        let player_calls = entries
            .iter()
            .filter(|entry| matches!(&entry.entry, Some(Entry::Message(m)) if m.direction == Direction::ToPlayer as i32))
            .count();
        Self {
            duration,
            player_calls,
        }
    }
}

/// Measures league `league_id` of the finished system once it is completed (leagues played at once
/// may end after the one the run followed) and its league events are all delivered.
pub async fn measure(
    players: u32,
    finished: &mut Finished,
    league_id: &str,
    cpu: CpuUsed,
) -> anyhow::Result<Measured> {
    let status = completed(finished, league_id).await?;
    let (Some(started), Some(completed)) = (&status.started_at, &status.completed_at) else {
        anyhow::bail!("the league reports no start or completion time");
    };
    let (started_ms, completed_ms) = (millis(started), millis(completed));
    let wall = Duration::from_secs_f64(((completed_ms - started_ms) / 1e3).max(0.0));
    let schedule =
        league_report::data::schedule(&mut finished.client, &finished.operator_token, league_id).await?;
    // Every match's transcript, a few reads at a time: one after the other they took longer than a
    // 200-player league itself (20 s for 19,900 matches). Each is summed up as it arrives: kept whole,
    // a 1,000-player league's 499,500 transcripts took 6.7 GB of the bench's memory.
    let client = &finished.client;
    let token = &finished.operator_token;
    let summaries: Vec<MatchSummary> =
        futures::stream::iter(schedule.iter().flat_map(|round| &round.matches))
            .map(|scheduled| {
                let mut client = client.clone();
                async move {
                    let detail = client
                        .get_match(operator_request(
                            token,
                            GetMatchRequest {
                                league_id: league_id.to_owned(),
                                match_id: scheduled.match_id.clone(),
                            },
                        ))
                        .await
                        .with_context(|| format!("reading match {}", scheduled.match_id))?
                        .into_inner();
                    anyhow::Ok(MatchSummary::of(
                        &detail.transcript.map(|t| t.entries).unwrap_or_default(),
                    ))
                }
            })
            .buffer_unordered(TRANSCRIPT_READS)
            .try_collect()
            .await?;
    let mut durations: Vec<Duration> = summaries.iter().filter_map(|summary| summary.duration).collect();
    let player_calls: usize = summaries.iter().map(|summary| summary.player_calls).sum();
    durations.sort();
    let percentile = |p: f64| {
        durations
            .get(((durations.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    let matches = status.total_matches;
    let notifications = f64::from(status.notifications_delivered);
    Ok(Measured {
        league_id: league_id.to_owned(),
        started_ms,
        completed_ms,
        players,
        matches,
        wall,
        match_p50: percentile(0.50),
        match_p99: percentile(0.99),
        player_calls_per_match: player_calls as f64 / f64::from(matches.max(1)),
        exchanges: player_exchanges(finished).await?,
        notifications_per_match: notifications / f64::from(matches.max(1)),
        peak_rss_kib: finished.peak_rss_kib.clone(),
        cpu,
        overhead: None,
        throughput: Vec::new(),
        rounds: rounds::measure(&finished.database_url, league_id).await?,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_match_is_summed_up_by_its_span_of_times_and_its_calls_to_players() {
        use league_proto::v2::transcript_entry::Entry;
        use league_proto::v2::{Direction, MessageRecord, StateTransition, TranscriptEntry};
        use std::time::Duration;

        use super::MatchSummary;

        let at = |millis: i64| prost_types::Timestamp {
            seconds: millis / 1000,
            nanos: i32::try_from(millis % 1000).expect("under a second") * 1_000_000,
        };
        let message = |millis, direction: Direction| TranscriptEntry {
            at: Some(at(millis)),
            entry: Some(Entry::Message(MessageRecord {
                direction: direction as i32,
                ..MessageRecord::default()
            })),
        };
        let entries = [
            TranscriptEntry {
                at: Some(at(10_250)),
                entry: Some(Entry::StateTransition(StateTransition::default())),
            },
            message(10_000, Direction::ToPlayer),
            message(10_400, Direction::FromPlayer),
            message(10_300, Direction::ToPlayer),
            TranscriptEntry {
                at: None,
                entry: Some(Entry::Message(MessageRecord {
                    direction: Direction::ToPlayer as i32,
                    ..MessageRecord::default()
                })),
            },
        ];
        assert_eq!(
            MatchSummary::of(&entries),
            MatchSummary {
                duration: Some(Duration::from_millis(400)),
                player_calls: 3,
            },
            "the earliest to the latest time, whatever their order; every message to a player"
        );
        assert_eq!(
            MatchSummary::of(&[]),
            MatchSummary {
                duration: None,
                player_calls: 0,
            }
        );
    }
}
