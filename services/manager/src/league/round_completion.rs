//! Completing a round: once every match of a round is finished, exactly one transaction marks it
//! completed, queues ROUND_COMPLETED and LEAGUE_STANDINGS_UPDATE, and releases the next round (or
//! completes the league and queues LEAGUE_COMPLETED) — so each of these happens exactly once.
//!
//! The transaction that records results checks their rounds before it commits ([`complete_in`]): when
//! it holds a round's last results, it completes the round with the same commit. Another transaction's
//! results it cannot see until they commit, so every recorded result is also followed by
//! [`complete_if_final`], in its own short transaction after the result's commit, unless its own
//! transaction completed the round (once per round for results recorded together:
//! crate::league::report). Why that finds the last result: whichever of a round's results commits
//! last, its check starts after that commit and so sees every match finished. Why only one check completes the
//! round: the checks update the round's row `where status = 'released'`, skipping it while another check
//! holds it. A round's last matches end together, so several checks often find it final at once; one
//! locks the row and completes it, the others answer at once instead of holding a connection while they
//! wait (and a check that comes after the commit finds the round completed). Should the completing
//! transaction fail, its referee's report fails and is repeated, and the repeat checks again. A manager that
//! dies between a result's commit and its check is made good by the referee, which reports again until it
//! gets an answer (a repeated report checks too), and by [`complete_final_rounds`] at start-up.

use league_domain::LeagueId;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{
    LeagueCompleted, MatchStatus, RoundAnnouncement, RoundCompleted, RoundSummary, ScheduledMatch,
    StandingsUpdate,
};
use sqlx::{PgConnection, PgPool};

use crate::error::ManagerResult;
use crate::ids;
use crate::league::events;
use crate::league::kept_table::{KeptTable, KeptTables};
use crate::league::queue;
use crate::league::table;
use crate::league::waiting_claims::{Handed, WaitingClaims};
use crate::results::RecordedResult;

/// A round completed by a transaction that has not committed yet, with the league table it made and
/// the next round's matches it handed to waiting claims: [`Completed::committed`] keeps that table for
/// the next round (crate::league::kept_table) and answers those claims
/// (crate::league::waiting_claims), once the transaction has committed.
#[must_use = "the table is kept and the claims answered only once the completing transaction has committed"]
#[derive(Debug)]
pub struct Completed {
    league_id: LeagueId,
    following: Following,
}

/// What a completion leaves for after its commit.
#[derive(Debug, Default)]
struct Following {
    /// `None` when the league is completed: no next round needs it.
    table: Option<KeptTable>,
    handed: Vec<Handed>,
    /// The round released, when it was final at its release: every match of it a forfeit of a
    /// player who withdrew (crate::league::withdrawal), so no result will come to complete it.
    released_final: Option<u32>,
}

impl Completed {
    /// Keeps the table and answers the handed claims. Returns the round released when it is final
    /// already, for the caller to complete in turn ([`complete_if_final`]).
    pub fn committed(self, pool: &PgPool, tables: &KeptTables) -> Option<u32> {
        if let Some(table) = self.following.table {
            tables.keep(&self.league_id, table);
        }
        for handed in self.following.handed {
            handed.answer(pool);
        }
        self.following.released_final
    }
}

/// Completes `round_id` of `league_id` if none of its matches is unfinished, and each round after it
/// that is final at its release (forfeits only). Returns whether this call completed `round_id`. Reads
/// only (no commit to wait for) when the round is not final.
pub async fn complete_if_final(
    pool: &PgPool,
    tables: &KeptTables,
    waiting: &WaitingClaims,
    league_id: &LeagueId,
    round_id: u32,
) -> ManagerResult<bool> {
    let mut next = Some(round_id);
    let mut completed_any = false;
    while let Some(round_id) = next {
        // Lock order (docs/subsystems/lock-order.md): the round (skip locked), the league, the next round,
        // its
        // matches (skip locked), new events.
        let mut tx = pool.begin().await?;
        let Some(completed) = complete_in(&mut tx, tables, waiting, league_id, round_id).await? else {
            tx.rollback().await?;
            break;
        };
        tx.commit().await?;
        next = completed.committed(pool, tables);
        completed_any = true;
    }
    Ok(completed_any)
}

/// [`complete_if_final`] inside the caller's transaction `tx`, which sees its own uncommitted results:
/// the transaction that records a round's last results completes the round too, with one commit. It
/// does not see another transaction's uncommitted results, so it may leave a final round for the check
/// after its commit (see the module doc). Returns the completion when it completed the round, for the
/// caller to call [`Completed::committed`] on once `tx` has committed.
pub async fn complete_in(
    tx: &mut PgConnection,
    tables: &KeptTables,
    waiting: &WaitingClaims,
    league_id: &LeagueId,
    round_id: u32,
) -> ManagerResult<Option<Completed>> {
    // The round completed and what follows it needs, in one statement: no row when the round is not
    // final (or another check holds it).
    let rows = sqlx::query_as!(
        RoundRow,
        r#"with completed as (
             update rounds set status = 'completed', completed_at = clock_timestamp()
             where (league_id, round_id) = (
                 select league_id, round_id from rounds
                 where league_id = $1 and round_id = $2 and status = 'released'
                   and not exists (select 1 from matches
                                   where league_id = $1 and round_id = $2 and status <> 'finished')
                 for update skip locked)
             returning league_id, round_id
         )
         select l.total_rounds, l.game_type,
                (select coalesce(sum(matches), 0) from rounds where league_id = $1)::bigint as "total_matches!",
                m.match_id as "match_id?", m.round_id as "round_id?", m.player_a_id as "player_a_id?",
                m.player_b_id as "player_b_id?", m.result_status as "result_status?",
                m.winner_player_id as "winner_player_id?", m.at_fault_player_ids as "at_fault_player_ids?"
         from completed c
         join leagues l on l.league_id = $1
         left join matches m on m.league_id = $1 and m.round_id in ($2, $2 + 1)
         order by m.round_id, m.match_number"#,
        league_id.as_str(),
        round_id as i32,
    )
    .fetch_all(&mut *tx)
    .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let following = follow_round(tx, tables, waiting, league_id, round_id, rows).await?;
    Ok(Some(Completed {
        league_id: league_id.clone(),
        following,
    }))
}

/// Completes every released round whose matches are all finished: what a manager that stopped between a
/// result and its check left undone. Run at start-up.
pub async fn complete_final_rounds(
    pool: &PgPool,
    tables: &KeptTables,
    waiting: &WaitingClaims,
) -> ManagerResult<u32> {
    let rounds = sqlx::query!(
        "select r.league_id, r.round_id from rounds r
         where r.status = 'released'
           and not exists (select 1 from matches m
                           where m.league_id = r.league_id and m.round_id = r.round_id and m.status <> 'finished')",
    )
    .fetch_all(pool)
    .await?;
    let mut completed = 0;
    for (league_id, round_id) in rounds.into_iter().map(|round| (round.league_id, round.round_id)) {
        let league_id = ids::stored("rounds.league_id", &league_id)?;
        if complete_if_final(pool, tables, waiting, &league_id, round_id as u32).await? {
            tracing::warn!(%league_id, round_id, "a round left final but not completed was completed");
            completed += 1;
        }
    }
    Ok(completed)
}

/// The league's size and game, with one row per match of the round completed (all finished) and of
/// the round after it (one row of nulls when there are none).
struct RoundRow {
    total_rounds: i32,
    game_type: String,
    total_matches: i64,
    match_id: Option<String>,
    round_id: Option<i32>,
    player_a_id: Option<String>,
    player_b_id: Option<String>,
    result_status: Option<String>,
    winner_player_id: Option<String>,
    at_fault_player_ids: Option<Vec<String>>,
}

/// The completing statement's rows, sorted: this round's results (and their summary), and the next
/// round's matches as ROUND_ANNOUNCEMENT lists them.
struct Sorted {
    round: Vec<RecordedResult<String>>,
    summary: RoundSummary,
    /// The next round's schedule, every match ready (or finished: a withdrawn player's forfeit).
    announced: Vec<ScheduledMatch>,
    /// Whether every match of the next round is finished already (forfeits of withdrawn players).
    next_final: bool,
}

fn sort(rows: Vec<RoundRow>, league_id: &LeagueId, round_id: u32, game_type: &str) -> Sorted {
    let mut sorted = Sorted {
        round: Vec::with_capacity(rows.len()),
        summary: RoundSummary::default(),
        announced: Vec::new(),
        next_final: true,
    };
    for row in rows {
        let (Some(match_id), Some(row_round), Some(player_a), Some(player_b)) =
            (row.match_id, row.round_id, row.player_a_id, row.player_b_id)
        else {
            continue;
        };
        if row_round as u32 != round_id {
            let forfeited = row.result_status.is_some();
            sorted.next_final &= forfeited;
            sorted.announced.push(ScheduledMatch {
                league_id: league_id.to_string(),
                round_id: row_round as u32,
                match_id,
                game_type: game_type.to_owned(),
                player_a_id: player_a,
                player_b_id: player_b,
                status: if forfeited {
                    MatchStatus::Finished
                } else {
                    MatchStatus::Ready
                } as i32,
                ..ScheduledMatch::default()
            });
            continue;
        }
        let Some(status) = row.result_status else {
            continue;
        };
        let summary = &mut sorted.summary;
        summary.total_matches += 1;
        match status.as_str() {
            "win" => summary.wins += 1,
            "draw" => summary.draws += 1,
            _ => summary.technical_losses += 1,
        }
        let outcome = table::outcome(
            &player_a,
            &status,
            row.winner_player_id.as_deref(),
            row.at_fault_player_ids.as_deref(),
        );
        sorted.round.push(RecordedResult {
            player_a,
            player_b,
            outcome,
        });
    }
    sorted
}

/// Everything that follows the completion of a round, from `rows` (the completing statement's). Returns
/// the league table to keep for the next round (none when the league is now completed) and the matches
/// handed to waiting claims. This is the path between two rounds, so it is one statement after the
/// completing one: the next round's release, which queues the events too; the table comes from the one
/// kept since the last round, with this round's results added.
async fn follow_round(
    tx: &mut PgConnection,
    tables: &KeptTables,
    waiting: &WaitingClaims,
    league_id: &LeagueId,
    round_id: u32,
    rows: Vec<RoundRow>,
) -> ManagerResult<Following> {
    let (total_rounds, total_matches, game_type) = rows
        .first()
        .map(|row| (row.total_rounds, row.total_matches, row.game_type.clone()))
        .ok_or_else(|| anyhow::anyhow!("league {league_id} not found"))?;
    let Sorted {
        round,
        summary,
        announced,
        next_final,
    } = sort(rows, league_id, round_id, &game_type);
    let (kept, standings) = tables.through(&mut *tx, league_id, round_id, &round).await?;
    let last = round_id as i32 >= total_rounds;
    let next_round_id = if last { 0 } else { round_id + 1 };
    let mut queued = vec![
        (
            round_id,
            Event::RoundCompleted(RoundCompleted {
                round_id,
                matches_completed: summary.total_matches,
                next_round_id,
                summary: Some(summary),
            }),
        ),
        (
            round_id,
            Event::StandingsUpdate(StandingsUpdate {
                round_id,
                standings: standings.clone(),
            }),
        ),
    ];
    if last {
        queued.push((
            round_id,
            Event::LeagueCompleted(LeagueCompleted {
                total_rounds: total_rounds as u32,
                total_matches: total_matches as u32,
                champion: standings.first().cloned(),
                final_standings: standings,
            }),
        ));
        events::enqueue(tx, league_id, queued).await?;
        sqlx::query!(
            "update leagues set status = 'completed', completed_at = now() where league_id = $1",
            league_id.as_str()
        )
        .execute(&mut *tx)
        .await?;
        tracing::info!(%league_id, "league completed");
        return Ok(Following::default());
    }
    // The next round released, its first matches handed to the claims waiting in this manager.
    queued.push((
        next_round_id,
        Event::RoundAnnouncement(RoundAnnouncement {
            round_id: next_round_id,
            matches: announced,
        }),
    ));
    let queued = events::Queued::new(league_id, queued);
    let claims = waiting.take_all();
    let handed = queue::release_round(tx, league_id, next_round_id, &claims, &queued).await?;
    let handed = claims
        .into_iter()
        .zip(handed)
        // A claim handed nothing is dropped unanswered: it looks again.
        .filter(|(_, assignments)| !assignments.is_empty())
        .map(|(claim, assignments)| Handed { claim, assignments })
        .collect();
    tracing::info!(%league_id, round_id, next_round_id, "round completed");
    Ok(Following {
        table: Some(kept),
        handed,
        released_final: next_final.then_some(next_round_id),
    })
}
