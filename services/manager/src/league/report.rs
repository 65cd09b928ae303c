//! MATCH_RESULT_REPORT: the one result of a match, accepted only from the referee holding its lease.
//! A repeated report from that holder is a no-op that returns the stored result. After its result is
//! committed, every report checks whether its round is now complete (crate::league::round_completion);
//! a repeated report checks again, so a manager that died between the two steps is made good by the
//! referee's retry.

use league_domain::points::{DRAW, LOSS, WIN};
use league_proto::ErrorCode;
use league_proto::v2::{MatchResult, ReportMatchResultRequest, ResultStatus};
use prost::Message;
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerResult, reject};
use crate::league::round_completion;
use crate::results::{Outcome, Side};
use crate::standings::{StandingRow, added_by};

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
        tx.commit().await?;
        let round_completed =
            round_completion::complete_if_final(pool, &request.league_id, round_id as u32).await?;
        return Ok(Reported {
            recorded,
            duplicate: true,
            round_completed,
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
             at_fault_player_ids = $5, result = $6, transcript = $7, finished_at = clock_timestamp(),
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
    add_to_standings(&mut tx, &request.league_id, &verdict, &player_a, &player_b).await?;
    // Nothing shared is locked: the round's reports commit side by side (their fsyncs grouped), and
    // the round is completed by whichever check first sees every match of it finished.
    tx.commit().await?;
    tracing::info!(league_id = %request.league_id, match_id = %request.match_id, %referee_id,
        outcome = verdict.status, winner = verdict.winner.unwrap_or("-"), "result recorded");
    let round_completed =
        round_completion::complete_if_final(pool, &request.league_id, round_id as u32).await?;
    Ok(Reported {
        recorded: result,
        duplicate: false,
        round_completed,
    })
}

/// Adds the result to its two players' totals: rows no other report of the round touches, since a
/// player plays once a round.
async fn add_to_standings(
    tx: &mut PgConnection,
    league_id: &str,
    verdict: &Verdict<'_>,
    player_a: &str,
    player_b: &str,
) -> ManagerResult<()> {
    let outcome = verdict.outcome(player_a);
    let rows = [
        (player_a, added_by(outcome.mark_for(Side::A))),
        (player_b, added_by(outcome.mark_for(Side::B))),
    ];
    let column =
        |pick: fn(&StandingRow<()>) -> u32| rows.iter().map(|(_, row)| pick(row) as i32).collect::<Vec<_>>();
    sqlx::query(
        "update standings s
         set played = s.played + 1, wins = s.wins + d.wins, draws = s.draws + d.draws,
             losses = s.losses + d.losses, technical_losses = s.technical_losses + d.technical_losses,
             points = s.points + d.points
         from unnest($2::text[], $3::int[], $4::int[], $5::int[], $6::int[], $7::int[])
              as d(player_id, wins, draws, losses, technical_losses, points)
         where s.league_id = $1 and s.player_id = d.player_id",
    )
    .bind(league_id)
    .bind([player_a, player_b])
    .bind(column(|row| row.wins))
    .bind(column(|row| row.draws))
    .bind(column(|row| row.losses))
    .bind(column(|row| row.technical_losses))
    .bind(column(|row| row.points))
    .execute(&mut *tx)
    .await?;
    Ok(())
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

impl Verdict<'_> {
    /// How the match ended, by seat (`player_a` is seat A).
    fn outcome(&self, player_a: &str) -> Outcome {
        let winner = if self.winner == Some(player_a) {
            Side::A
        } else {
            Side::B
        };
        match self.status {
            "win" => Outcome::Win { winner },
            "draw" => Outcome::Draw,
            "technical_loss" => Outcome::TechnicalLoss {
                loser: match winner {
                    Side::A => Side::B,
                    Side::B => Side::A,
                },
            },
            _ => Outcome::DoubleForfeit,
        }
    }
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
                && winner.map(points) == Some(Some(WIN))
                && winner.map(|w| points(other(w))) == Some(Some(LOSS))
        }
        ResultStatus::Draw => winner.is_none() && at_fault.is_empty() && points_a == DRAW && points_b == DRAW,
        ResultStatus::TechnicalLoss => {
            winner.is_some_and(|w| w == a || w == b)
                && winner.map(|w| vec![other(w)]) == Some(at_fault.clone())
                && winner.map(points) == Some(Some(WIN))
                && winner.map(|w| points(other(w))) == Some(Some(LOSS))
        }
        ResultStatus::DoubleForfeit => {
            winner.is_none()
                && points_a == LOSS
                && points_b == LOSS
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
