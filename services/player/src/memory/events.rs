//! One copy of each league event per host, and what says which of them each bot took.
//!
//! Every bot of a league takes every event of that league: at 1,000 players a league sends 2,997 events
//! and a host's bots take them three million times. The host keeps each event once ([`EventLog`]), by
//! league in the order it first took them; a bot keeps only which of them it took, in the order it took
//! them ([`TakenEvents`]), as runs of consecutive places in one league's events. A bot takes its
//! league's events in the order the host first took them — every bot does, unless it failed one and took
//! it again after others had taken later ones — so it holds one run per league, whatever the league's
//! length.

use std::collections::HashMap;

use super::EventKind;
use super::name::Name;

/// One league event as the host keeps it: its league, its place among that league's events, its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEvent {
    pub league: Name,
    position: u32,
    pub kind: EventKind,
}

/// An event in its league's list.
#[derive(Debug)]
struct Logged {
    event_id: Name,
    kind: EventKind,
}

/// Every league event the host's bots took, each once.
#[derive(Debug, Default)]
pub struct EventLog {
    /// Each league's events, in the order the host first took them. A league stays until no bot keeps
    /// it ([`EventLog::keep_only`]), so a place, once given, names the same event.
    leagues: HashMap<Name, Vec<Logged>>,
    /// Where each event with an id is kept: a repeated id is the event already kept, whatever league and
    /// kind its repetition says.
    by_id: HashMap<Name, HostEvent>,
}

impl EventLog {
    /// The event `event_id` as the host keeps it, kept now if it is new. An event without an id cannot be
    /// told apart from another, so each one is kept anew.
    pub fn enter(&mut self, league: Name, event_id: &str, kind: EventKind) -> HostEvent {
        if let Some(kept) = self.by_id.get(event_id) {
            return kept.clone();
        }
        let events = self.leagues.entry(league.clone()).or_default();
        // A league of four billion events would have to run for centuries; its later events would
        // share the last place and be taken once.
        let position = u32::try_from(events.len()).unwrap_or(u32::MAX);
        let event_id = Name::from(event_id);
        events.push(Logged {
            event_id: event_id.clone(),
            kind,
        });
        let event = HostEvent {
            league,
            position,
            kind,
        };
        if !event_id.is_empty() {
            self.by_id.insert(event_id, event.clone());
        }
        event
    }

    /// The id and kind of each event `taken` names, in its order.
    pub fn read<'a>(&'a self, taken: &'a TakenEvents) -> impl Iterator<Item = (&'a str, EventKind)> + 'a {
        taken.runs.iter().flat_map(move |run| {
            let events = self.leagues.get(&run.league).map_or(&[][..], Vec::as_slice);
            let first = run.first as usize;
            let last = first.saturating_add(run.len as usize).min(events.len());
            events
                .get(first..last)
                .unwrap_or_default()
                .iter()
                .map(|event| (event.event_id.as_str(), event.kind))
        })
    }

    /// Drops every league `kept` does not name, with its events.
    pub fn keep_only(&mut self, kept: impl Fn(&str) -> bool) {
        self.leagues.retain(|league, _| kept(league));
        self.by_id.retain(|_, event| kept(&event.league));
    }

    /// How many events the host keeps.
    pub fn len(&self) -> usize {
        self.leagues.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.leagues.is_empty()
    }
}

/// Which of the host's events one bot took, in the order it took them.
#[derive(Debug, Default)]
pub struct TakenEvents {
    runs: Vec<Run>,
}

/// `len` events of `league` taken one after another, from place `first` on.
#[derive(Debug)]
struct Run {
    league: Name,
    first: u32,
    len: u32,
}

impl Run {
    fn holds(&self, event: &HostEvent) -> bool {
        self.league == event.league && event.position >= self.first && event.position - self.first < self.len
    }
}

impl TakenEvents {
    /// Whether the bot took `event` already. Runs are few (one per league, see the module
    /// documentation), so a scan is quick.
    pub fn contains(&self, event: &HostEvent) -> bool {
        self.runs.iter().rev().any(|run| run.holds(event))
    }

    /// Takes `event` after all the others.
    pub fn push(&mut self, event: &HostEvent) {
        if let Some(last) = self.runs.last_mut()
            && last.league == event.league
            && last.first.checked_add(last.len) == Some(event.position)
        {
            last.len += 1;
            return;
        }
        self.runs.push(Run {
            league: event.league.clone(),
            first: event.position,
            len: 1,
        });
    }

    /// Forgets what the bot took of the leagues `gone` names.
    pub fn forget(&mut self, gone: impl Fn(&str) -> bool) {
        self.runs.retain(|run| !gone(&run.league));
    }

    /// The leagues the bot took events of.
    pub fn leagues(&self) -> impl Iterator<Item = &str> {
        self.runs.iter().map(|run| run.league.as_str())
    }

    /// How many events the bot took.
    pub fn len(&self) -> usize {
        self.runs.iter().map(|run| run.len as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}
