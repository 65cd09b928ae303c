//! The games the league knows, each named once: the league's name for it (`even_odd`), the list a
//! referee advertises and a league's game is checked against, and the game a league plays when none
//! is named.

use strum::{EnumIter, IntoEnumIterator};

/// A game a league can play and a referee can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, EnumIter)]
pub enum GameType {
    /// Even/Odd, the specification's game: the default when a league names none.
    #[default]
    EvenOdd,
    TicTacToe,
}

impl GameType {
    /// The league's name for the game, as leagues, registrations and contracts carry it.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameType::EvenOdd => "even_odd",
            GameType::TicTacToe => "tic_tac_toe",
        }
    }

    /// The game the league calls `name` (exactly: names are not case-folded), or `None`.
    pub fn parse(name: &str) -> Option<GameType> {
        GameType::all().find(|game| game.as_str() == name)
    }

    /// Every game, in the order above.
    pub fn all() -> impl Iterator<Item = GameType> {
        GameType::iter()
    }

    /// The names of every game, in the order above, joined with `, ` (for messages).
    pub fn names() -> String {
        GameType::all()
            .map(GameType::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `name` as a known game, or why not: the known games named.
    pub fn known(name: &str) -> Result<GameType, UnknownGame> {
        GameType::parse(name).ok_or_else(|| UnknownGame(name.to_owned()))
    }
}

/// [`GameType::known`]: options and configuration name a game this way.
impl std::str::FromStr for GameType {
    type Err = UnknownGame;

    fn from_str(name: &str) -> Result<GameType, UnknownGame> {
        GameType::known(name)
    }
}

impl std::fmt::Display for GameType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A game name no referee can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownGame(pub String);

impl std::fmt::Display for UnknownGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown game {:?}: the known games are {}",
            self.0,
            GameType::names()
        )
    }
}

impl std::error::Error for UnknownGame {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_parses_back_from_its_name() {
        let names: Vec<&str> = GameType::all().map(GameType::as_str).collect();
        assert_eq!(names, ["even_odd", "tic_tac_toe"]);
        for game in GameType::all() {
            assert_eq!(GameType::parse(game.as_str()), Some(game));
            assert_eq!(game.to_string(), game.as_str());
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_known_ones() {
        for unknown in ["chess", "", "Even_Odd", "even_odd "] {
            assert_eq!(GameType::parse(unknown), None, "{unknown:?}");
        }
        assert_eq!(
            GameType::known("chess").map_err(|error| error.to_string()),
            Err("unknown game \"chess\": the known games are even_odd, tic_tac_toe".to_owned())
        );
    }

    #[test]
    fn a_name_parses_as_known_does() {
        assert_eq!("tic_tac_toe".parse(), Ok(GameType::TicTacToe));
        assert_eq!("chess".parse::<GameType>(), Err(UnknownGame("chess".to_owned())));
    }

    #[test]
    fn a_league_plays_even_odd_unless_told() {
        assert_eq!(GameType::default(), GameType::EvenOdd);
    }
}
