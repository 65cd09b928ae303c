//! How every bot plays tic-tac-toe: win if it can, else block, else any legal cell.
//!
//! The referee owns the rules; this only reads the board it is shown, so the one thing it must get right
//! is to pick from `legal_moves`.

use league_domain::tic_tac_toe::{CELLS, LINES};
use prost_types::Struct;
use rand::Rng;
use rand::seq::IndexedRandom;

use crate::payload::{self, as_index, as_str};

/// The cell to mark, or `None` when the step context is not a tic-tac-toe position this bot can read
/// (no board of nine strings, a mark other than X or O, or no legal move).
pub fn choose_position(step_context: &Struct, rng: &mut impl Rng) -> Option<usize> {
    let board: Vec<&str> = payload::read_list(step_context, "board")?
        .iter()
        .map(as_str)
        .collect::<Option<_>>()?;
    let board: [&str; CELLS] = board.try_into().ok()?;
    let mine = payload::read_string(step_context, "your_mark")?;
    let theirs = match mine {
        "X" => "O",
        "O" => "X",
        _ => return None,
    };
    let legal: Vec<usize> = payload::read_list(step_context, "legal_moves")?
        .iter()
        .map(|value| as_index(value).filter(|&cell| cell < CELLS))
        .collect::<Option<_>>()?;
    let completes = |mark: &str| {
        legal.iter().copied().find(|&cell| {
            LINES
                .iter()
                .any(|line| line.contains(&cell) && line.iter().all(|&c| c == cell || board[c] == mark))
        })
    };
    completes(mine)
        .or_else(|| completes(theirs))
        .or_else(|| legal.choose(rng).copied())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::payload::{list, number, object, string};

    /// A step context for `rows` (three strings of `X`, `O` or `.`), offering every empty cell.
    fn context(rows: [&str; 3], mark: &str) -> Struct {
        let cells: Vec<char> = rows.concat().chars().collect();
        let board = cells
            .iter()
            .map(|&c| string(if c == '.' { String::new() } else { c.to_string() }));
        let legal = (0..CELLS)
            .filter(|&cell| cells[cell] == '.')
            .map(|cell| number(cell as f64));
        object([
            ("board", list(board)),
            ("your_mark", string(mark)),
            ("legal_moves", list(legal)),
            ("turn", number(5)),
        ])
    }

    fn choose(context: &Struct) -> Option<usize> {
        choose_position(context, &mut StdRng::seed_from_u64(1))
    }

    #[test]
    fn takes_a_winning_move_before_blocking() {
        // X can win at 2 (top row) and O threatens 5 (middle row): winning comes first.
        assert_eq!(choose(&context(["XX.", "OO.", "..."], "X")), Some(2));
        assert_eq!(choose(&context(["XX.", "OO.", "X.."], "O")), Some(5));
        assert_eq!(
            choose(&context(["X.O", ".X.", "O.."], "X")),
            Some(8),
            "a diagonal"
        );
    }

    #[test]
    fn blocks_the_opponents_winning_move() {
        assert_eq!(choose(&context(["X..", "X..", "..."], "O")), Some(6));
        assert_eq!(
            choose(&context(["O.X", ".X.", "..."], "O")),
            Some(6),
            "the other diagonal"
        );
        assert_eq!(
            choose(&context(["...", "XX.", "OO."], "X")),
            Some(5),
            "X wins rather than blocks 8"
        );
        assert_eq!(
            choose(&context([".O.", ".O.", "X.."], "X")),
            Some(7),
            "X blocks the column"
        );
    }

    #[test]
    fn otherwise_plays_a_legal_move() {
        let mut rng = StdRng::seed_from_u64(3);
        let open = context(["X..", ".O.", "..."], "X");
        for _ in 0..50 {
            let cell = choose_position(&open, &mut rng);
            assert!(matches!(cell, Some(1 | 2 | 3 | 5 | 6 | 7 | 8)), "{cell:?}");
        }
    }

    #[test]
    fn only_offered_cells_are_played() {
        let mut offered = context(["...", "...", "..."], "O");
        offered.fields.insert("legal_moves".into(), list([number(4)]));
        assert_eq!(choose(&offered), Some(4));
    }

    #[test]
    fn an_unreadable_context_gets_no_move() {
        let good = context(["X..", "...", "..."], "O");
        let mut broken = Vec::new();
        for (field, value) in [
            ("board", list([string("X")])),
            ("board", string("X........")),
            ("your_mark", string("Z")),
            ("legal_moves", list([])),
            ("legal_moves", list([number(9)])),
            ("legal_moves", list([number(1.5)])),
        ] {
            let mut context = good.clone();
            context.fields.insert(field.into(), value);
            broken.push(context);
        }
        let mut missing = good.clone();
        missing.fields.remove("your_mark");
        broken.push(missing);
        broken.push(Struct::default());
        for context in broken {
            assert_eq!(choose(&context), None, "{context:?}");
        }
    }
}
