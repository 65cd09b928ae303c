//! What a finished match is worth to each of its players: 3 points for a win, 1 for a draw, 0 for a
//! loss (docs/adr/0004-standings-and-tie-breaks.md). A technical loss is a loss for the player at fault
//! and a win for the opponent; a double forfeit is a loss for both. The referee scores with these, the
//! gateway checks an external referee's scores against them, and the manager adds them up.
//!
//! One migration (20261125000001_round_completion.sql) converted the totals of older results with the
//! same numbers written in SQL; migrations are history and keep their text.

/// Points for a win (an opponent's technical loss included).
pub const WIN: u32 = 3;
/// Points for each player of a drawn match.
pub const DRAW: u32 = 1;
/// Points for a loss, technical or not.
pub const LOSS: u32 = 0;

/// Whether `points` is what some result is worth.
pub fn is_valid(points: u32) -> bool {
    [WIN, DRAW, LOSS].contains(&points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_win_is_three_a_draw_one_a_loss_none() {
        assert_eq!((WIN, DRAW, LOSS), (3, 1, 0));
    }

    #[test]
    fn only_the_points_of_a_result_are_valid() {
        let valid: Vec<u32> = (0..=10).filter(|points| is_valid(*points)).collect();
        assert_eq!(valid, [0, 1, 3]);
    }
}
