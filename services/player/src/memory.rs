//! What each bot remembers: its games (from GAME_OVER), the league events it took, and the GAME_ERRORs it
//! was sent. Strategies read the games; tests read all three.
//!
//! One host runs every bot, so what repeats from bot to bot is kept once per host ([`Shared`]): each
//! league event the bots took ([`events`]), and each name — league ids, player ids, event ids
//! ([`name`]). A bot keeps which of the events it took, and its games with the names they mention
//! shared; at 1,000 players that is a million games and three million events taken (ADR 0059).
//!
//! Bounded for a host that runs for days of back-to-back leagues: what a bot keeps of a league goes when
//! its next league completes. When LEAGUE_COMPLETED of a league arrives, every other league that had
//! already completed is forgotten (games, events, errors, the ids that deduplicate them); the league that
//! just completed stays readable until then (its table is checked against the bots' memory after it
//! ends), and leagues still running are kept. The host then forgets the events and names no bot keeps
//! ([`Shared::forget_unused`]). A redelivered GAME_OVER is recognised by a binary search of the bot's
//! games sorted by league and match, not by scanning the history.
//!
//! Everything here is parsed leniently: a result with fields missing is still remembered as well as it can
//! be. GAME_OVER is best effort for the referee, so refusing one would only make the bot forget a game.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::mem;

use league_domain::MatchId;
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{MatchContext, MatchResult, NotifyGameErrorRequest, ResultStatus};

use crate::parity::Parity;
use crate::payload;

pub mod events;
pub mod name;

pub use events::{EventLog, HostEvent, TakenEvents};
pub use name::{Name, Names};

#[cfg(test)]
mod tests;

/// How a match ended for the bot that remembers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// One finished match, seen from one bot.
///
/// 32 bytes, and nothing on the heap of its own: the names are the host's ([`Names`]) and the match id is
/// two numbers (`size_of::<GameRecord>()`, checked by a test). A bot keeps one per match it played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    pub league_id: Name,
    /// `None` when neither the result nor the context names a match, or names one by no match id
    /// (`R<round>M<number>`): such a game is remembered, but a redelivery of it cannot be recognised.
    pub match_id: Option<MatchId>,
    /// Empty when the result names no other player.
    pub opponent_id: Name,
    /// Even/Odd only, and only for a player that chose in time.
    pub my_choice: Option<Parity>,
    pub opponent_choice: Option<Parity>,
    pub outcome: Outcome,
    pub status: ResultStatus,
    /// Whether the referee held this bot responsible (a technical loss or a double forfeit).
    pub at_fault: bool,
}

impl GameRecord {
    /// The record of `result` for `player_id`; `context` fills in what the result itself does not carry.
    /// The names are `names`'s copies.
    pub fn from_result(
        player_id: &str,
        context: Option<&MatchContext>,
        result: &MatchResult,
        names: &mut Names,
    ) -> GameRecord {
        let context = context.cloned().unwrap_or_default();
        let choices = result
            .game_metadata
            .as_ref()
            .and_then(|metadata| payload::read_struct(metadata, "choices"));
        let opponent_id = opponent_of(player_id, result).unwrap_or_default();
        let choice_of = |id: &str| {
            choices
                .and_then(|choices| payload::read_string(choices, id))
                .and_then(Parity::parse)
        };
        let match_id = if result.match_id.is_empty() {
            &context.match_id
        } else {
            &result.match_id
        };
        GameRecord {
            league_id: names.intern(&context.league_id),
            match_id: match_id.parse().ok(),
            my_choice: choice_of(player_id),
            opponent_choice: if opponent_id.is_empty() {
                None
            } else {
                choice_of(&opponent_id)
            },
            outcome: outcome_for(player_id, result),
            status: result.status(),
            at_fault: result.at_fault_player_ids.iter().any(|id| id == player_id),
            opponent_id: names.intern(&opponent_id),
        }
    }
}

/// The other player of the match: from the scores, else the choices, else whoever was at fault or won.
fn opponent_of(player_id: &str, result: &MatchResult) -> Option<String> {
    let choices = result
        .game_metadata
        .as_ref()
        .and_then(|metadata| payload::read_struct(metadata, "choices"));
    let scored = result.scores.iter().map(|score| &score.player_id);
    let chose = choices.into_iter().flat_map(|choices| choices.fields.keys());
    let named = result
        .at_fault_player_ids
        .iter()
        .chain([&result.winner_player_id]);
    scored
        .chain(chose)
        .chain(named)
        .find(|id| !id.is_empty() && *id != player_id)
        .cloned()
}

/// Win, draw or loss for `player_id`: the status first, then the winner, then who was at fault, then the
/// points. A result that says none of these counts as a draw, the one outcome that credits nobody.
fn outcome_for(player_id: &str, result: &MatchResult) -> Outcome {
    match result.status() {
        ResultStatus::Draw => return Outcome::Draw,
        ResultStatus::DoubleForfeit => return Outcome::Loss,
        ResultStatus::Win | ResultStatus::TechnicalLoss | ResultStatus::Unspecified => {}
    }
    if !result.winner_player_id.is_empty() {
        return if result.winner_player_id == player_id {
            Outcome::Win
        } else {
            Outcome::Loss
        };
    }
    if !result.at_fault_player_ids.is_empty() {
        let me_at_fault = result.at_fault_player_ids.iter().any(|id| id == player_id);
        return if me_at_fault { Outcome::Loss } else { Outcome::Win };
    }
    let (mine, theirs) = result.scores.iter().fold((0, 0), |(mine, theirs), score| {
        if score.player_id == player_id {
            (mine + score.points, theirs)
        } else {
            (mine, theirs + score.points)
        }
    });
    match mine.cmp(&theirs) {
        Ordering::Greater => Outcome::Win,
        Ordering::Equal => Outcome::Draw,
        Ordering::Less => Outcome::Loss,
    }
}

/// Which league notification an event was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    RoundAnnouncement,
    StandingsUpdate,
    RoundCompleted,
    LeagueCompleted,
    /// The `event` oneof was not set (or is newer than this build).
    Unknown,
}

impl EventKind {
    pub fn of(event: Option<&Event>) -> EventKind {
        match event {
            Some(Event::RoundAnnouncement(_)) => EventKind::RoundAnnouncement,
            Some(Event::StandingsUpdate(_)) => EventKind::StandingsUpdate,
            Some(Event::RoundCompleted(_)) => EventKind::RoundCompleted,
            Some(Event::LeagueCompleted(_)) => EventKind::LeagueCompleted,
            None => EventKind::Unknown,
        }
    }

    /// The league.v2 message type.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::RoundAnnouncement => "ROUND_ANNOUNCEMENT",
            EventKind::StandingsUpdate => "LEAGUE_STANDINGS_UPDATE",
            EventKind::RoundCompleted => "ROUND_COMPLETED",
            EventKind::LeagueCompleted => "LEAGUE_COMPLETED",
            EventKind::Unknown => "UNKNOWN",
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The league and match of the game at `place` in `history`; `None` (sorting first) for no game, which
/// [`Memory`] never asks for.
fn match_key(history: &[GameRecord], place: u32) -> Option<(&str, Option<MatchId>)> {
    let game = history.get(place as usize)?;
    Some((game.league_id.as_str(), game.match_id))
}

/// The places in `history` of the games with a match id, sorted by league and match.
fn sorted_by_match(history: &[GameRecord]) -> Vec<u32> {
    let mut places: Vec<u32> = (0..)
        .zip(history)
        .filter(|(_, game)| game.match_id.is_some())
        .map(|(place, _)| place)
        .collect();
    places.sort_by(|&a, &b| match_key(history, a).cmp(&match_key(history, b)));
    places
}

/// A GAME_ERROR as the bot received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameErrorRecord {
    pub league_id: String,
    pub match_id: String,
    /// The league.v2 code as sent (kept as text so that a code newer than this build is still recorded).
    pub code: String,
    pub description: String,
    pub action_required: String,
    pub retry_count: u32,
    pub max_retries: u32,
    pub consequence: String,
}

impl From<&NotifyGameErrorRequest> for GameErrorRecord {
    fn from(request: &NotifyGameErrorRequest) -> GameErrorRecord {
        GameErrorRecord {
            league_id: request
                .context
                .as_ref()
                .map(|c| c.league_id.clone())
                .unwrap_or_default(),
            match_id: request
                .context
                .as_ref()
                .map(|c| c.match_id.clone())
                .unwrap_or_default(),
            code: request.error_code.clone(),
            description: request.error_description.clone(),
            action_required: request.action_required.clone(),
            retry_count: request.retry_count,
            max_retries: request.max_retries,
            consequence: request.consequence.clone(),
        }
    }
}

/// What the bots of one host share: one copy of each name and of each league event they took.
#[derive(Debug, Default)]
pub struct Shared {
    pub names: Names,
    pub events: EventLog,
}

impl Shared {
    /// The event `event_id` of `league_id` as the host keeps it (see [`EventLog::enter`]).
    pub fn event(&mut self, league_id: &str, event_id: &str, kind: EventKind) -> HostEvent {
        let league = self.names.intern(league_id);
        self.events.enter(league, event_id, kind)
    }

    /// Forgets the events of every league none of `memories` took events of, and the names nothing holds
    /// any more: after bots forgot a league (LEAGUE_COMPLETED), given every bot of the host.
    pub fn forget_unused<'a>(&mut self, memories: impl IntoIterator<Item = &'a Memory>) {
        let kept: HashSet<&str> = memories
            .into_iter()
            .flat_map(|memory| memory.events.leagues())
            .collect();
        self.events.keep_only(|league| kept.contains(league));
        self.names.forget_unused();
    }
}

/// One bot's memory.
#[derive(Debug, Default)]
pub struct Memory {
    history: Vec<GameRecord>,
    /// The place in `history` of every game with a match id, sorted by league and match: a redelivered
    /// GAME_OVER is found by a binary search, with 4 bytes a game rather than a second copy of its key.
    by_match: Vec<u32>,
    events: TakenEvents,
    game_errors: Vec<GameErrorRecord>,
    /// Leagues whose LEAGUE_COMPLETED this bot took and whose memory it still keeps (the last one).
    completed: Vec<Name>,
}

impl Memory {
    /// Remembers a finished match; `false` when the same match of the same league is already remembered
    /// (a redelivered GAME_OVER must not count twice in the strategies' statistics).
    pub fn record_game(&mut self, record: GameRecord) -> bool {
        if let Some(match_id) = record.match_id
            && let Ok(place) = u32::try_from(self.history.len())
        {
            let key = (record.league_id.as_str(), match_id);
            match self.find_game(key) {
                Ok(_) => return false,
                Err(sorted) => self.by_match.insert(sorted, place),
            }
        }
        self.history.push(record);
        true
    }

    /// Where the game `(league, match)` is in `by_match`, or where it would go.
    fn find_game(&self, key: (&str, MatchId)) -> Result<usize, usize> {
        let key = (key.0, Some(key.1));
        self.by_match
            .binary_search_by(|&place| match_key(&self.history, place).cmp(&Some(key)))
    }

    /// Takes a league event once: `false` when the bot took it already. LEAGUE_COMPLETED forgets every
    /// other league that had completed before (see the module documentation).
    pub fn take_event(&mut self, event: &HostEvent) -> bool {
        if self.events.contains(event) {
            return false;
        }
        self.events.push(event);
        if event.kind == EventKind::LeagueCompleted {
            let earlier = mem::take(&mut self.completed);
            let league = event.league.as_str();
            self.forget(|gone| gone != league && earlier.iter().any(|completed| *completed == gone));
            self.completed.push(event.league.clone());
        }
        true
    }

    /// Drops everything kept of the leagues `gone` names.
    fn forget(&mut self, gone: impl Fn(&str) -> bool) {
        let games = self.history.len();
        self.history.retain(|game| !gone(&game.league_id));
        if self.history.len() != games {
            self.by_match = sorted_by_match(&self.history);
        }
        self.events.forget(&gone);
        self.game_errors.retain(|error| !gone(&error.league_id));
    }

    pub fn record_game_error(&mut self, error: GameErrorRecord) {
        self.game_errors.push(error);
    }

    /// Finished matches, in the order their GAME_OVERs arrived.
    pub fn history(&self) -> &[GameRecord] {
        &self.history
    }

    /// League events, first delivery only, in the order taken: `(event_id, kind)`, read from the host's
    /// `log`.
    pub fn events<'a>(&'a self, log: &'a EventLog) -> impl Iterator<Item = (&'a str, EventKind)> + 'a {
        log.read(&self.events)
    }

    /// Whether this bot took LEAGUE_COMPLETED (of any league it still remembers).
    pub fn took_league_completed(&self) -> bool {
        !self.completed.is_empty()
    }

    pub fn game_errors(&self) -> &[GameErrorRecord] {
        &self.game_errors
    }
}
