//! The engines of the games a referee can run: every game league-domain knows (`GameType`) has one.

pub mod even_odd;
pub mod tic_tac_toe;

use league_domain::GameType;

use crate::game::{Game, GameEngine};
use even_odd::EvenOdd;
use tic_tac_toe::TicTacToe;

/// A fresh game of `game_type` between `players` (index = seat), or `None` for a game we do not know.
pub fn new_game(game_type: &str, players: [String; 2]) -> Option<Box<dyn Game>> {
    Some(match GameType::parse(game_type)? {
        GameType::EvenOdd => Box::new(EvenOdd::new(players)),
        GameType::TicTacToe => Box::new(TicTacToe::new(players)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn players() -> [String; 2] {
        ["P01".into(), "P02".into()]
    }

    #[test]
    fn every_listed_game_type_makes_that_game() {
        for game_type in GameType::all().map(GameType::as_str) {
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
