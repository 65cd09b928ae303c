//! MATCH_RESULT_REPORT: the one result of a match, accepted only from the referee holding its lease.
//! A repeated report from that holder is a no-op that returns the stored result. The report that
//! finishes a round completes it in the same transaction: standings broadcast, next round released (or
//! the league completed), all through the outbox — so each of these happens exactly once.

use league_proto::ErrorCode;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{
    LeagueCompleted, MatchResult, ReportMatchResultRequest, ResultStatus, RoundCompleted, RoundSummary,
    StandingsUpdate,
};
use prost::Message;
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerResult, reject};
use crate::league::{events, table};
use crate::wakeups::Wakeups;

#[derive(Debug)]
pub struct Reported {
    pub recorded: MatchResult,
    pub duplicate: bool,
    /// Set when this report finished its round (a new round was released, or the league completed).
    pub round_completed: bool,
}

pub async fn report(
    pool: &PgPool,
    referee_id: &str,
    mut request: ReportMatchResultRequest,
) -> ManagerResult<Reported> {
    let result = request
        .result
        .ok_or_else(|| reject(ErrorCode::MissingRequiredField, "result is required"))?;
    let transcript = request.transcript.take().unwrap_or_default();
    // The same records as JSON, for plain SQL (the match_results and transcript_entries views); made
    // before the transaction so no lock waits on the encoding.
    let result_json = json_text("league.v2.MatchResult", &result)?;
    let transcript_json = json_text("league.v2.MatchTranscript", &transcript)?;
    let mut tx = pool.begin().await?;
    let row: Option<LeasedMatch> = sqlx::query_as(
        "select status, referee_id as holder, lease_id::text, result as stored, player_a_id as player_a,
                player_b_id as player_b, round_id
         from matches where league_id = $1 and match_id = $2 for update",
    )
    .bind(&request.league_id)
    .bind(&request.match_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(LeasedMatch {
        status,
        holder,
        lease_id,
        stored,
        player_a,
        player_b,
        round_id,
    }) = row
    else {
        return Err(reject(
            ErrorCode::MatchNotFound,
            format!("no match {} in league {}", request.match_id, request.league_id),
        ));
    };
    // An empty lease id stands for the referee's current lease: league.v2 reports carry none, so the
    // gateway reports for external referees this way. Leases are per referee, so this still refuses a
    // report from a referee whose lease expired and went to another.
    let holds_lease = holder.as_deref() == Some(referee_id)
        && (request.lease_id.is_empty() || lease_id.as_deref() == Some(request.lease_id.as_str()));
    if status == "finished" && holds_lease {
        let recorded = stored
            .as_deref()
            .map(MatchResult::decode)
            .transpose()
            .map_err(|error| anyhow::anyhow!("stored result does not decode: {error}"))?
            .unwrap_or_default();
        return Ok(Reported {
            recorded,
            duplicate: true,
            round_completed: false,
        });
    }
    if status != "running" || !holds_lease {
        return Err(reject(
            ErrorCode::LeaseNotHeld,
            format!(
                "{referee_id} does not hold the lease of match {}",
                request.match_id
            ),
        ));
    }
    let verdict = verify(&result, &request.match_id, &player_a, &player_b)?;
    sqlx::query(
        "update matches set status = 'finished', result_status = $3, winner_player_id = $4,
             at_fault_player_ids = $5, result = $6, transcript = $7, finished_at = now(),
             result_json = $8::text::jsonb, transcript_json = $9::text::jsonb
         where league_id = $1 and match_id = $2",
    )
    .bind(&request.league_id)
    .bind(&request.match_id)
    .bind(verdict.status)
    .bind(verdict.winner)
    .bind(&result.at_fault_player_ids)
    .bind(result.encode_to_vec())
    .bind(transcript.encode_to_vec())
    .bind(result_json)
    .bind(transcript_json)
    .execute(&mut *tx)
    .await?;
    // Last statement before commit: the round row's lock is held as briefly as possible.
    let (remaining,): (i32,) = sqlx::query_as(
        "update rounds set remaining = remaining - 1 where league_id = $1 and round_id = $2 returning remaining",
    )
    .bind(&request.league_id)
    .bind(round_id)
    .fetch_one(&mut *tx)
    .await?;
    if remaining == 0 {
        complete_round(&mut tx, &request.league_id, round_id as u32).await?;
    }
    tx.commit().await?;
    tracing::info!(league_id = %request.league_id, match_id = %request.match_id, %referee_id,
        outcome = verdict.status, winner = verdict.winner.unwrap_or("-"), "result recorded");
    Ok(Reported {
        recorded: result,
        duplicate: false,
        round_completed: remaining == 0,
    })
}

/// `message` as proto3 JSON text, for a jsonb column.
fn json_text<M: Message>(full_name: &str, message: &M) -> ManagerResult<String> {
    league_proto::json::to_json(full_name, message)
        .map(|json| json.to_string())
        .map_err(|error| anyhow::anyhow!("storing a {full_name} as JSON: {error}").into())
}

/// The reported match, locked for the report's transaction.
#[derive(Debug, sqlx::FromRow)]
struct LeasedMatch {
    status: String,
    holder: Option<String>,
    lease_id: Option<String>,
    stored: Option<Vec<u8>>,
    player_a: String,
    player_b: String,
    round_id: i32,
}

/// The columns standings need, checked against the match's players and the 3/1/0 scoring.
#[derive(Debug)]
struct Verdict<'a> {
    status: &'static str,
    winner: Option<&'a str>,
}

fn verify<'a>(result: &'a MatchResult, match_id: &str, a: &str, b: &str) -> ManagerResult<Verdict<'a>> {
    let invalid = |why: String| {
        reject(
            ErrorCode::InvalidMessageFormat,
            format!("result of {match_id}: {why}"),
        )
    };
    if !result.match_id.is_empty() && result.match_id != match_id {
        return Err(invalid(format!("names match {}", result.match_id)));
    }
    let points = |player: &str| {
        result
            .scores
            .iter()
            .find(|score| score.player_id == player)
            .map(|score| score.points)
    };
    let (Some(points_a), Some(points_b)) = (points(a), points(b)) else {
        return Err(invalid(format!("scores must name exactly {a} and {b}")));
    };
    if result.scores.len() != 2 {
        return Err(invalid(format!("scores must name exactly {a} and {b}")));
    }
    let winner = (!result.winner_player_id.is_empty()).then_some(result.winner_player_id.as_str());
    let at_fault: Vec<&str> = result.at_fault_player_ids.iter().map(String::as_str).collect();
    let status = ResultStatus::try_from(result.status).unwrap_or(ResultStatus::Unspecified);
    let other = |player: &str| if player == a { b } else { a };
    let consistent = match status {
        ResultStatus::Win => {
            winner.is_some_and(|w| w == a || w == b)
                && at_fault.is_empty()
                && winner.map(points) == Some(Some(3))
                && winner.map(|w| points(other(w))) == Some(Some(0))
        }
        ResultStatus::Draw => winner.is_none() && at_fault.is_empty() && points_a == 1 && points_b == 1,
        ResultStatus::TechnicalLoss => {
            winner.is_some_and(|w| w == a || w == b)
                && winner.map(|w| vec![other(w)]) == Some(at_fault.clone())
                && winner.map(points) == Some(Some(3))
                && winner.map(|w| points(other(w))) == Some(Some(0))
        }
        ResultStatus::DoubleForfeit => {
            winner.is_none()
                && points_a == 0
                && points_b == 0
                && at_fault.len() == 2
                && at_fault.contains(&a)
                && at_fault.contains(&b)
        }
        ResultStatus::Unspecified => false,
    };
    if !consistent {
        return Err(invalid(
            "status, winner, scores and players at fault disagree".to_owned(),
        ));
    }
    let status = match status {
        ResultStatus::Win => "win",
        ResultStatus::Draw => "draw",
        ResultStatus::TechnicalLoss => "technical_loss",
        _ => "double_forfeit",
    };
    Ok(Verdict { status, winner })
}

/// Everything that follows the last result of a round. Returns whether the league is now completed.
async fn complete_round(tx: &mut PgConnection, league_id: &str, round_id: u32) -> ManagerResult<bool> {
    sqlx::query("update rounds set status = 'completed' where league_id = $1 and round_id = $2")
        .bind(league_id)
        .bind(round_id as i32)
        .execute(&mut *tx)
        .await?;
    let (total_rounds, total_matches): (i32, i64) = sqlx::query_as(
        "select total_rounds, (select count(*) from matches where league_id = $1) from leagues where league_id = $1",
    )
    .bind(league_id)
    .fetch_one(&mut *tx)
    .await?;
    let (played, wins, draws, technical): (i64, i64, i64, i64) = sqlx::query_as(
        "select count(*), count(*) filter (where result_status = 'win'), count(*) filter (where result_status = 'draw'),
                count(*) filter (where result_status in ('technical_loss', 'double_forfeit'))
         from matches where league_id = $1 and round_id = $2",
    )
    .bind(league_id)
    .bind(round_id as i32)
    .fetch_one(&mut *tx)
    .await?;
    let standings = table::standings(&mut *tx, league_id).await?;
    let last = round_id as i32 >= total_rounds;
    let next_round_id = if last { 0 } else { round_id + 1 };
    events::enqueue(
        tx,
        league_id,
        round_id,
        Event::RoundCompleted(RoundCompleted {
            round_id,
            matches_completed: played as u32,
            next_round_id,
            summary: Some(RoundSummary {
                total_matches: played as u32,
                wins: wins as u32,
                draws: draws as u32,
                technical_losses: technical as u32,
            }),
        }),
    )
    .await?;
    events::enqueue(
        tx,
        league_id,
        round_id,
        Event::StandingsUpdate(StandingsUpdate {
            round_id,
            standings: standings.clone(),
        }),
    )
    .await?;
    if last {
        sqlx::query("update leagues set status = 'completed', completed_at = now() where league_id = $1")
            .bind(league_id)
            .execute(&mut *tx)
            .await?;
        events::enqueue(
            tx,
            league_id,
            round_id,
            Event::LeagueCompleted(LeagueCompleted {
                total_rounds: total_rounds as u32,
                total_matches: total_matches as u32,
                champion: standings.first().cloned(),
                final_standings: standings,
            }),
        )
        .await?;
        tracing::info!(%league_id, "league completed");
        return Ok(true);
    }
    sqlx::query("update rounds set status = 'released' where league_id = $1 and round_id = $2")
        .bind(league_id)
        .bind(next_round_id as i32)
        .execute(&mut *tx)
        .await?;
    sqlx::query("update matches set status = 'ready' where league_id = $1 and round_id = $2")
        .bind(league_id)
        .bind(next_round_id as i32)
        .execute(&mut *tx)
        .await?;
    sqlx::query("update leagues set current_round = $2 where league_id = $1")
        .bind(league_id)
        .bind(next_round_id as i32)
        .execute(&mut *tx)
        .await?;
    events::announce_round(tx, league_id, next_round_id).await?;
    Wakeups::matches_ready_on_commit(tx).await?;
    tracing::info!(%league_id, round_id, next_round_id, "round completed");
    Ok(false)
}
