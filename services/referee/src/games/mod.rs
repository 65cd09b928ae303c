//! The games a referee can run, by the league's name for each.

pub mod even_odd;
pub mod tic_tac_toe;

use crate::game::{Game, GameEngine};
use even_odd::EvenOdd;
use tic_tac_toe::TicTacToe;

/// Every game type [`new_game`] knows, as referees advertise them when they register.
pub const GAME_TYPES: &[&str] = &[EvenOdd::GAME_TYPE, TicTacToe::GAME_TYPE];

/// A fresh game of `game_type` between `players` (index = seat), or `None` for a game we do not know.
pub fn new_game(game_type: &str, players: [String; 2]) -> Option<Box<dyn Game>> {
    match game_type {
        EvenOdd::GAME_TYPE => Some(Box::new(EvenOdd::new(players))),
        TicTacToe::GAME_TYPE => Some(Box::new(TicTacToe::new(players))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn players() -> [String; 2] {
        ["P01".into(), "P02".into()]
    }

    #[test]
    fn every_listed_game_type_makes_that_game() {
        assert_eq!(GAME_TYPES, ["even_odd", "tic_tac_toe"]);
        for &game_type in GAME_TYPES {
            let game = new_game(game_type, players()).expect(game_type);
            assert_eq!(game.game_type(), game_type);
            assert!(!game.is_terminal());
        }
    }

    #[test]
    fn an_unknown_game_type_makes_nothing() {
        for unknown in ["chess", "", "Even_Odd", "even_odd "] {
            assert!(new_game(unknown, players()).is_none(), "{unknown:?}");
        }
    }
}
