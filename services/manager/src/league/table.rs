//! The league table from the database. The current table ranks each player's totals (the `standings`
//! rows every result adds to) with `standings::rank_totals`, which equals the pure recomputation
//! `standings::compute_standings` over all the results (tested there, and against the database by the
//! league tests). The table after an earlier round is that recomputation over the results of the rounds
//! up to it.

use league_domain::LeagueId;
use std::collections::HashMap;

use league_proto::v2::{RoundStandings, StandingRow, TieBreak as ProtoTieBreak};
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::results::{Outcome, RecordedResult, Side};
use crate::standings::{self, compute_standings, rank_totals};

/// A player id that sorts by the number the manager assigned (P2 < P10), the final tie-break.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Ranked {
    pub(crate) number: i32,
    pub(crate) id: String,
}

/// A finished match as standings need it.
#[derive(Debug)]
struct ResultRow {
    round_id: i32,
    player_a_id: String,
    a_number: i32,
    player_b_id: String,
    b_number: i32,
    result_status: String,
    winner_player_id: Option<String>,
    at_fault_player_ids: Option<Vec<String>>,
}

/// A league's players and finished matches, read once: the table after any round comes from them.
#[derive(Debug)]
pub struct LeagueResults {
    league_id: LeagueId,
    players: Vec<Ranked>,
    names: HashMap<String, String>,
    /// The finished matches in round order, and the round of each: the table after a round is the
    /// table of a prefix.
    results: Vec<RecordedResult<Ranked>>,
    rounds: Vec<u32>,
}

impl LeagueResults {
    pub async fn load(conn: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<Self> {
        let players: Vec<(String, i32, String)> = sqlx::query!(
            "select a.agent_id, a.agent_number, a.display_name
             from league_players lp join agents a on a.agent_id = lp.player_id
             where lp.league_id = $1 order by a.agent_number",
            league_id.as_str()
        )
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|player| (player.agent_id, player.agent_number, player.display_name))
        .collect();
        let rows = sqlx::query_as!(
            ResultRow,
            r#"select m.round_id, m.player_a_id, pa.agent_number as a_number, m.player_b_id,
                    pb.agent_number as b_number, m.result_status as "result_status!", m.winner_player_id,
                    m.at_fault_player_ids
             from matches m
             join agents pa on pa.agent_id = m.player_a_id
             join agents pb on pb.agent_id = m.player_b_id
             where m.league_id = $1 and m.status = 'finished'"#,
            league_id.as_str()
        )
        .fetch_all(&mut *conn)
        .await?;
        let mut results: Vec<(u32, RecordedResult<Ranked>)> = rows.into_iter().map(recorded).collect();
        results.sort_by_key(|(round, _)| *round);
        let (rounds, results) = results.into_iter().unzip();
        Ok(Self {
            league_id: league_id.clone(),
            players: players
                .iter()
                .map(|(id, number, _)| Ranked {
                    number: *number,
                    id: id.clone(),
                })
                .collect(),
            names: players.into_iter().map(|(id, _, name)| (id, name)).collect(),
            results,
            rounds,
        })
    }

    /// The table counting the finished matches of rounds 1 to `round_id`.
    pub fn after(&self, round_id: u32) -> ManagerResult<Vec<StandingRow>> {
        let table = compute_standings(&self.players, self.through(round_id))
            .map_err(|error| anyhow::anyhow!("standings of {}: {error}", self.league_id))?;
        Ok(to_proto(table, &self.names))
    }

    /// The tables after each of `rounds`.
    pub fn after_each(&self, rounds: impl IntoIterator<Item = u32>) -> ManagerResult<Vec<RoundStandings>> {
        rounds
            .into_iter()
            .map(|round_id| {
                Ok(RoundStandings {
                    round_id,
                    standings: self.after(round_id)?,
                })
            })
            .collect()
    }

    pub fn player_count(&self) -> usize {
        self.players.len()
    }

    /// The players in the order of their numbers, and each one's display name.
    pub(crate) fn players(&self) -> (&[Ranked], &HashMap<String, String>) {
        (&self.players, &self.names)
    }

    /// The finished matches of rounds 1 to `round_id`, in round order.
    pub(crate) fn through(&self, round_id: u32) -> &[RecordedResult<Ranked>] {
        &self.results[..self.rounds.partition_point(|&round| round <= round_id)]
    }
}

/// The current table of `league_id`, best first: each player's totals (kept with every result),
/// ranked with the results between players level on points — one statement, so the totals and those
/// results are read from the same snapshot.
pub async fn standings(conn: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<Vec<StandingRow>> {
    let lines = sqlx::query_as!(
        TableLine,
        r#"with totals as (
             select a.agent_id, a.agent_number, a.display_name,
                    coalesce(s.played, 0) as played, coalesce(s.wins, 0) as wins,
                    coalesce(s.draws, 0) as draws, coalesce(s.losses, 0) as losses,
                    coalesce(s.technical_losses, 0) as technical_losses, coalesce(s.points, 0) as points
             from league_players lp
             join agents a on a.agent_id = lp.player_id
             left join standings s on s.league_id = lp.league_id and s.player_id = lp.player_id
             where lp.league_id = $1
         )
         select agent_id as "player_a_id!", agent_number as "a_number!", display_name as "display_name?",
                played as "played?", wins as "wins?", draws as "draws?", losses as "losses?",
                technical_losses as "technical_losses?", points as "points?",
                null::text as "player_b_id?", null::int as "b_number?", null::text as "result_status?",
                null::text as "winner_player_id?", null::text[] as "at_fault_player_ids?"
         from totals
         union all
         select ta.agent_id, ta.agent_number, null, null, null, null, null, null, null,
                tb.agent_id, tb.agent_number, m.result_status, m.winner_player_id, m.at_fault_player_ids
         from totals ta
         -- Only players who have played can have a result between them. Before the first result
         -- every player is level with every other, and each table read while players register
         -- (every external agent's greeting asks for one) probed the matches once per pair:
         -- 5.3 million buffers for the reads of 200 registrations.
         join totals tb on tb.points = ta.points and tb.agent_id <> ta.agent_id
                        and ta.played > 0 and tb.played > 0
         -- One index probe per pair of level players (matches_player_a or _b); `offset 0` keeps the
         -- planner from turning it into a join over every finished match, which it does when its
         -- statistics lag behind a league that grows by thousands of results.
         cross join lateral (
             select result_status, winner_player_id, at_fault_player_ids from matches
             where league_id = $1 and player_a_id = ta.agent_id and player_b_id = tb.agent_id
               and status = 'finished'
             offset 0
         ) m"#,
        league_id.as_str()
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut totals = Vec::new();
    let mut names = HashMap::new();
    let mut level = Vec::new();
    for line in lines {
        let player = Ranked {
            number: line.a_number,
            id: line.player_a_id,
        };
        match (line.player_b_id, line.b_number, line.result_status) {
            (Some(player_b_id), Some(b_number), Some(result_status)) => {
                let (_, result) = recorded(ResultRow {
                    round_id: 0,
                    player_a_id: player.id,
                    a_number: player.number,
                    player_b_id,
                    b_number,
                    result_status,
                    winner_player_id: line.winner_player_id,
                    at_fault_player_ids: line.at_fault_player_ids,
                });
                level.push(result);
            }
            _ => {
                let count = |value: Option<i32>| u32::try_from(value.unwrap_or(0)).unwrap_or(0);
                names.insert(player.id.clone(), line.display_name.unwrap_or_default());
                totals.push(standings::StandingRow {
                    rank: 0,
                    player_id: player,
                    played: count(line.played),
                    wins: count(line.wins),
                    draws: count(line.draws),
                    losses: count(line.losses),
                    technical_losses: count(line.technical_losses),
                    points: count(line.points),
                    above_next_by: None,
                });
            }
        }
    }
    let table =
        rank_totals(totals, &level).map_err(|error| anyhow::anyhow!("standings of {league_id}: {error}"))?;
    Ok(to_proto(table, &names))
}

/// One line of [`standings`]' statement: a player's totals, or a result between two level players.
#[derive(Debug)]
struct TableLine {
    player_a_id: String,
    a_number: i32,
    display_name: Option<String>,
    played: Option<i32>,
    wins: Option<i32>,
    draws: Option<i32>,
    losses: Option<i32>,
    technical_losses: Option<i32>,
    points: Option<i32>,
    player_b_id: Option<String>,
    b_number: Option<i32>,
    result_status: Option<String>,
    winner_player_id: Option<String>,
    at_fault_player_ids: Option<Vec<String>>,
}

/// The table as the contracts carry it, with each player's display name.
pub(crate) fn to_proto(
    table: Vec<standings::StandingRow<Ranked>>,
    names: &HashMap<String, String>,
) -> Vec<StandingRow> {
    table
        .into_iter()
        .map(|row| StandingRow {
            rank: row.rank,
            display_name: names.get(&row.player_id.id).cloned().unwrap_or_default(),
            player_id: row.player_id.id,
            played: row.played,
            wins: row.wins,
            draws: row.draws,
            losses: row.losses,
            technical_losses: row.technical_losses,
            points: row.points,
            above_next_by: row
                .above_next_by
                .map_or(ProtoTieBreak::Unspecified, ProtoTieBreak::from) as i32,
        })
        .collect()
}

fn recorded(row: ResultRow) -> (u32, RecordedResult<Ranked>) {
    let outcome = outcome(
        &row.player_a_id,
        &row.result_status,
        row.winner_player_id.as_deref(),
        row.at_fault_player_ids.as_deref(),
    );
    let result = RecordedResult {
        player_a: Ranked {
            number: row.a_number,
            id: row.player_a_id,
        },
        player_b: Ranked {
            number: row.b_number,
            id: row.player_b_id,
        },
        outcome,
    };
    (u32::try_from(row.round_id).unwrap_or(0), result)
}

/// A finished match's outcome from its stored columns (`player_a_id`, `result_status`,
/// `winner_player_id`, `at_fault_player_ids`).
pub(crate) fn outcome(
    player_a: &str,
    status: &str,
    winner: Option<&str>,
    at_fault: Option<&[String]>,
) -> Outcome {
    let side_of = |player: Option<&str>| {
        if player == Some(player_a) {
            Side::A
        } else {
            Side::B
        }
    };
    match status {
        "win" => Outcome::Win {
            winner: side_of(winner),
        },
        "draw" => Outcome::Draw,
        "technical_loss" => Outcome::TechnicalLoss {
            loser: side_of(at_fault.and_then(|players| players.first()).map(String::as_str)),
        },
        _ => Outcome::DoubleForfeit,
    }
}
