//! Small hand-built leagues for the standings tests.

#![allow(clippy::unwrap_used)]

use super::{StandingRow, compute_standings};
use crate::results::{Outcome, RecordedResult, Side};

pub(super) type Id = &'static str;

pub(super) fn beats(winner: Id, loser: Id) -> RecordedResult<Id> {
    result(winner, loser, Outcome::Win { winner: Side::A })
}

pub(super) fn draw(a: Id, b: Id) -> RecordedResult<Id> {
    result(a, b, Outcome::Draw)
}

pub(super) fn technical_loss(loser: Id, opponent: Id) -> RecordedResult<Id> {
    result(opponent, loser, Outcome::TechnicalLoss { loser: Side::B })
}

pub(super) fn double_forfeit(a: Id, b: Id) -> RecordedResult<Id> {
    result(a, b, Outcome::DoubleForfeit)
}

pub(super) fn result(player_a: Id, player_b: Id, outcome: Outcome) -> RecordedResult<Id> {
    RecordedResult {
        player_a,
        player_b,
        outcome,
    }
}

/// The table for a league whose players are everyone named in `results` plus `players`.
pub(super) fn table(players: &[Id], results: &[RecordedResult<Id>]) -> Vec<StandingRow<Id>> {
    let mut everyone = players.to_vec();
    for named in results.iter().flat_map(|r| [r.player_a, r.player_b]) {
        if !everyone.contains(&named) {
            everyone.push(named);
        }
    }
    compute_standings(&everyone, results).unwrap()
}

/// Player ids, best first.
pub(super) fn ranked(rows: &[StandingRow<Id>]) -> Vec<Id> {
    rows.iter().map(|row| row.player_id).collect()
}

pub(super) fn row(rows: &[StandingRow<Id>], id: Id) -> &StandingRow<Id> {
    rows.iter().find(|row| row.player_id == id).unwrap()
}

/// (played, wins, draws, losses, technical losses, points)
pub(super) fn record(rows: &[StandingRow<Id>], id: Id) -> (u32, u32, u32, u32, u32, u32) {
    let r = row(rows, id);
    (r.played, r.wins, r.draws, r.losses, r.technical_losses, r.points)
}

/// The rule that ranks `id` above the next row.
pub(super) fn above_next_by(rows: &[StandingRow<Id>], id: Id) -> Option<super::TieBreak> {
    row(rows, id).above_next_by
}
