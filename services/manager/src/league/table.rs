//! The league table from the database: players and recorded results go through the pure
//! `standings::compute_standings`, so what we store and send always equals a recomputation.

use league_proto::v2::StandingRow;
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::results::{Outcome, RecordedResult, Side};
use crate::standings::compute_standings;

/// A player id that sorts by the number the manager assigned (P2 < P10), the final tie-break.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Ranked {
    number: i32,
    id: String,
}

/// A finished match as standings need it.
#[derive(Debug, sqlx::FromRow)]
struct ResultRow {
    player_a_id: String,
    a_number: i32,
    player_b_id: String,
    b_number: i32,
    result_status: String,
    winner_player_id: Option<String>,
    at_fault_player_ids: Option<Vec<String>>,
}

/// The current table of `league_id`, best first.
pub async fn standings(conn: &mut PgConnection, league_id: &str) -> ManagerResult<Vec<StandingRow>> {
    let players: Vec<(String, i32, String)> = sqlx::query_as(
        "select a.agent_id, a.agent_number, a.display_name
         from league_players lp join agents a on a.agent_id = lp.player_id
         where lp.league_id = $1 order by a.agent_number",
    )
    .bind(league_id)
    .fetch_all(&mut *conn)
    .await?;
    let rows: Vec<ResultRow> = sqlx::query_as(
        "select m.player_a_id, pa.agent_number as a_number, m.player_b_id, pb.agent_number as b_number,
                m.result_status, m.winner_player_id, m.at_fault_player_ids
         from matches m
         join agents pa on pa.agent_id = m.player_a_id
         join agents pb on pb.agent_id = m.player_b_id
         where m.league_id = $1 and m.status = 'finished'",
    )
    .bind(league_id)
    .fetch_all(&mut *conn)
    .await?;

    let ranked: Vec<Ranked> = players
        .iter()
        .map(|(id, number, _)| Ranked {
            number: *number,
            id: id.clone(),
        })
        .collect();
    let results = rows
        .into_iter()
        .map(
            |ResultRow {
                 player_a_id: a,
                 a_number,
                 player_b_id: b,
                 b_number,
                 result_status: status,
                 winner_player_id: winner,
                 at_fault_player_ids: at_fault,
             }| {
                let side_of = |player: Option<&String>| if player == Some(&a) { Side::A } else { Side::B };
                let outcome = match status.as_str() {
                    "win" => Outcome::Win {
                        winner: side_of(winner.as_ref()),
                    },
                    "draw" => Outcome::Draw,
                    "technical_loss" => Outcome::TechnicalLoss {
                        loser: side_of(at_fault.as_ref().and_then(|players| players.first())),
                    },
                    _ => Outcome::DoubleForfeit,
                };
                RecordedResult {
                    player_a: Ranked {
                        number: a_number,
                        id: a.clone(),
                    },
                    player_b: Ranked {
                        number: b_number,
                        id: b,
                    },
                    outcome,
                }
            },
        )
        .collect::<Vec<_>>();
    let table = compute_standings(&ranked, &results)
        .map_err(|error| anyhow::anyhow!("standings of {league_id}: {error}"))?;
    let names: std::collections::HashMap<&str, &str> = players
        .iter()
        .map(|(id, _, name)| (id.as_str(), name.as_str()))
        .collect();
    Ok(table
        .into_iter()
        .map(|row| StandingRow {
            rank: row.rank,
            display_name: names
                .get(row.player_id.id.as_str())
                .copied()
                .unwrap_or_default()
                .to_owned(),
            player_id: row.player_id.id,
            played: row.played,
            wins: row.wins,
            draws: row.draws,
            losses: row.losses,
            technical_losses: row.technical_losses,
            points: row.points,
        })
        .collect())
}
