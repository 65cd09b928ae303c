//! What each bot remembers: its games (from GAME_OVER), the league events it saw, and the GAME_ERRORs it
//! was sent. Strategies read the games; tests read all three.
//!
//! Bounded for a host that runs for days of back-to-back leagues: what a bot keeps of a league goes when
//! its next league completes. When LEAGUE_COMPLETED of a league arrives, every other league that had
//! already completed is forgotten (games, events, errors, the ids that deduplicate them); the league that
//! just completed stays readable until then (its table is checked against the bots' memory after it
//! ends), and leagues still running are kept. A redelivered GAME_OVER is recognised by a set, not by
//! scanning the history.
//!
//! Everything here is parsed leniently: a result with fields missing is still remembered as well as it can
//! be. GAME_OVER is best effort for the referee, so refusing one would only make the bot forget a game.

use std::collections::HashSet;
use std::fmt;
use std::mem;

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{MatchContext, MatchResult, NotifyGameErrorRequest, ResultStatus};

use crate::parity::Parity;
use crate::payload;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    pub league_id: String,
    pub match_id: String,
    pub game_type: String,
    /// Empty when the result names no other player.
    pub opponent_id: String,
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
    pub fn from_result(player_id: &str, context: Option<&MatchContext>, result: &MatchResult) -> GameRecord {
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
        GameRecord {
            league_id: context.league_id,
            match_id: if result.match_id.is_empty() {
                context.match_id
            } else {
                result.match_id.clone()
            },
            game_type: context.game_type,
            my_choice: choice_of(player_id),
            opponent_choice: if opponent_id.is_empty() {
                None
            } else {
                choice_of(&opponent_id)
            },
            outcome: outcome_for(player_id, result),
            status: result.status(),
            at_fault: result.at_fault_player_ids.iter().any(|id| id == player_id),
            opponent_id,
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
        std::cmp::Ordering::Greater => Outcome::Win,
        std::cmp::Ordering::Equal => Outcome::Draw,
        std::cmp::Ordering::Less => Outcome::Loss,
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

/// One league event as a bot took it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TakenEvent {
    league_id: String,
    event_id: String,
    kind: EventKind,
}

/// One bot's memory.
#[derive(Debug, Default)]
pub struct Memory {
    history: Vec<GameRecord>,
    /// `(league, match)` of every game in `history`: a redelivered GAME_OVER found without a scan.
    games: HashSet<(String, String)>,
    events: Vec<TakenEvent>,
    seen_event_ids: HashSet<String>,
    game_errors: Vec<GameErrorRecord>,
    /// Leagues whose LEAGUE_COMPLETED this bot took and whose memory it still keeps (the last one).
    completed: HashSet<String>,
}

impl Memory {
    /// Remembers a finished match; `false` when the same match of the same league is already remembered
    /// (a redelivered GAME_OVER must not count twice in the strategies' statistics).
    pub fn record_game(&mut self, record: GameRecord) -> bool {
        if !record.match_id.is_empty()
            && !self
                .games
                .insert((record.league_id.clone(), record.match_id.clone()))
        {
            return false;
        }
        self.history.push(record);
        true
    }

    /// Remembers a league event of `league_id` once per `event_id`; `false` for a redelivery. An event
    /// without an id cannot be told apart from another, so each one is kept. LEAGUE_COMPLETED forgets
    /// every other league that had completed before (see the module documentation).
    pub fn record_event(&mut self, league_id: &str, event_id: &str, kind: EventKind) -> bool {
        if !event_id.is_empty() && !self.seen_event_ids.insert(event_id.to_owned()) {
            return false;
        }
        self.events.push(TakenEvent {
            league_id: league_id.to_owned(),
            event_id: event_id.to_owned(),
            kind,
        });
        if kind == EventKind::LeagueCompleted {
            let earlier = mem::take(&mut self.completed);
            self.forget(|league| league != league_id && earlier.contains(league));
            self.completed.insert(league_id.to_owned());
        }
        true
    }

    /// Drops everything kept of the leagues `gone` names.
    fn forget(&mut self, gone: impl Fn(&str) -> bool) {
        self.history.retain(|game| !gone(&game.league_id));
        self.games.retain(|(league, _)| !gone(league));
        let (dropped, kept): (Vec<_>, Vec<_>) = mem::take(&mut self.events)
            .into_iter()
            .partition(|event| gone(&event.league_id));
        for event in dropped {
            self.seen_event_ids.remove(&event.event_id);
        }
        self.events = kept;
        self.game_errors.retain(|error| !gone(&error.league_id));
    }

    pub fn record_game_error(&mut self, error: GameErrorRecord) {
        self.game_errors.push(error);
    }

    /// Finished matches, in the order their GAME_OVERs arrived.
    pub fn history(&self) -> &[GameRecord] {
        &self.history
    }

    /// League events, first delivery only, in arrival order: `(event_id, kind)`.
    pub fn events(&self) -> Vec<(String, EventKind)> {
        self.events
            .iter()
            .map(|event| (event.event_id.clone(), event.kind))
            .collect()
    }

    /// Whether this bot took LEAGUE_COMPLETED (of any league it still remembers).
    pub fn took_league_completed(&self) -> bool {
        self.events
            .iter()
            .any(|event| event.kind == EventKind::LeagueCompleted)
    }

    pub fn game_errors(&self) -> &[GameErrorRecord] {
        &self.game_errors
    }
}
