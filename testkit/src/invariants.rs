//! The design's invariants, checked against what a finished league left in the database (and in the bots'
//! memory), one function each. Every full-league test (tests/system/league) runs them all through
//! `support::check_all`; the reliability tests (tests/reliability), whose bots live in another process,
//! run the checks that need only the database and `GetStandings`.
//!
//! 1. every scheduled match has exactly one recorded result ([`one_result_per_match`]);
//! 2. standings equal a recomputation from the recorded results ([`standings_equal_recomputation`]);
//! 3. rounds run in order ([`rounds_run_in_order`]) and every league event — LEAGUE_COMPLETED
//!    included — is delivered exactly once ([`league_events_delivered_once`]);
//! 4. every pair of players meets exactly once, nobody twice in a round ([`pairs_meet_once`]);
//! 5. even_odd choices are collected concurrently and the number is drawn after both are in
//!    ([`choices_before_the_draw`]).
//!
//! Besides, every bot remembers the result of each of its matches as the database has it
//! ([`bots_remember_their_results`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use league_domain::MessageType;
use league_player::{EventKind, PlayerHost};
use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::{
    Direction, GetStandingsResponse, MatchResult, MatchState, MatchTranscript, MessageRecord,
    NotifyLeagueEventRequest, ResultStatus, StandingRow, transcript_entry,
};
use prost::Message;
use sqlx::PgPool;

/// A league's rows, read once after it finished.
#[derive(Debug)]
pub struct Facts {
    pub league_id: String,
    pub game: String,
    pub league_status: String,
    pub total_rounds: i32,
    pub current_round: i32,
    /// In registration order (agent number).
    pub players: Vec<PlayerRow>,
    /// The players the operator withdrew (`league withdraw`).
    pub withdrawn: BTreeSet<String>,
    pub rounds: Vec<RoundRow>,
    /// In play order (round, match number).
    pub matches: Vec<MatchRow>,
    /// In event id order.
    pub events: Vec<EventRow>,
    pub deliveries: Vec<DeliveryRow>,
}

#[derive(Debug, sqlx::FromRow)]
pub struct PlayerRow {
    pub player_id: String,
    pub agent_number: i32,
    pub display_name: String,
}

#[derive(Debug, sqlx::FromRow)]
pub struct RoundRow {
    pub round_id: i32,
    pub status: String,
    /// How many matches the schedule gave the round.
    pub matches: i32,
    pub bye_player_id: Option<String>,
}

#[derive(Debug, sqlx::FromRow)]
pub struct MatchRow {
    pub match_id: String,
    pub round_id: i32,
    pub match_number: i32,
    pub player_a_id: String,
    pub player_b_id: String,
    pub status: String,
    pub referee_id: Option<String>,
    pub claims: i32,
    pub result_status: Option<String>,
    pub winner_player_id: Option<String>,
    pub at_fault_player_ids: Option<Vec<String>>,
    pub result: Option<Vec<u8>>,
    /// The transcript as stored: proto3 JSON, its one form.
    pub transcript_json: Option<String>,
    /// `finished_at` in Unix milliseconds (rounded down).
    pub finished_ms: Option<i64>,
}

#[derive(Debug)]
pub struct EventRow {
    pub event_id: i64,
    pub kind: String,
    pub round_id: i32,
    pub payload: NotifyLeagueEventRequest,
}

#[derive(Debug, sqlx::FromRow)]
pub struct DeliveryRow {
    pub event_id: i64,
    pub player_id: String,
    pub delivered: bool,
    pub attempts: i32,
    pub gave_up: bool,
    pub last_error: Option<String>,
}

impl Facts {
    pub async fn load(pool: &PgPool, league_id: &str) -> Facts {
        let (game, league_status, total_rounds, current_round): (String, String, i32, i32) = sqlx::query_as(
            "select game_type, status, total_rounds, current_round from leagues where league_id = $1",
        )
        .bind(league_id)
        .fetch_one(pool)
        .await
        .expect("the league row");
        let players = sqlx::query_as(
            "select lp.player_id, a.agent_number, a.display_name
             from league_players lp join agents a on a.agent_id = lp.player_id
             where lp.league_id = $1 order by a.agent_number",
        )
        .bind(league_id)
        .fetch_all(pool)
        .await
        .expect("the players");
        let withdrawn: Vec<(String,)> = sqlx::query_as(
            "select player_id from league_players where league_id = $1 and withdrawn_at is not null",
        )
        .bind(league_id)
        .fetch_all(pool)
        .await
        .expect("the withdrawn players");
        let rounds = sqlx::query_as(
            "select round_id, status, matches, bye_player_id from rounds where league_id = $1
             order by round_id",
        )
        .bind(league_id)
        .fetch_all(pool)
        .await
        .expect("the rounds");
        let matches = sqlx::query_as(
            "select match_id, round_id, match_number, player_a_id, player_b_id, status, referee_id, claims,
                    result_status, winner_player_id, at_fault_player_ids, result, transcript_json,
                    floor(extract(epoch from finished_at) * 1000)::bigint as finished_ms
             from matches where league_id = $1 order by round_id, match_number",
        )
        .bind(league_id)
        .fetch_all(pool)
        .await
        .expect("the matches");
        let events: Vec<(i64, String, i32, Vec<u8>)> = sqlx::query_as(
            "select event_id, kind, round_id, payload from league_events where league_id = $1
             order by event_id",
        )
        .bind(league_id)
        .fetch_all(pool)
        .await
        .expect("the events");
        let events = events
            .into_iter()
            .map(|(event_id, kind, round_id, payload)| EventRow {
                event_id,
                kind,
                round_id,
                payload: NotifyLeagueEventRequest::decode(payload.as_slice())
                    .expect("an event payload decodes as NotifyLeagueEventRequest"),
            })
            .collect();
        let deliveries = sqlx::query_as(
            "select d.event_id, d.player_id, d.delivered_at is not null as delivered, d.attempts,
                    d.gave_up_at is not null as gave_up, d.last_error
             from every_event_delivery d where d.league_id = $1 order by d.event_id, d.player_id",
        )
        .bind(league_id)
        .fetch_all(pool)
        .await
        .expect("the deliveries");
        Facts {
            league_id: league_id.to_owned(),
            game,
            league_status,
            total_rounds,
            current_round,
            players,
            withdrawn: withdrawn.into_iter().map(|(player,)| player).collect(),
            rounds,
            matches,
            events,
            deliveries,
        }
    }

    /// Whether `m` was settled by a withdrawal rather than played: a forfeit with no referee, lost by
    /// a withdrawn player (checked by [`one_result_per_match`]).
    pub fn forfeited(&self, m: &MatchRow) -> bool {
        m.referee_id.is_none() && m.status == "finished"
    }

    pub fn player_ids(&self) -> Vec<&str> {
        self.players.iter().map(|p| p.player_id.as_str()).collect()
    }

    /// Rounds of a single round-robin: n − 1 for even n, n for odd n.
    pub fn expected_rounds(&self) -> usize {
        let n = self.players.len();
        if n.is_multiple_of(2) { n - 1 } else { n }
    }

    pub fn match_row(&self, match_id: &str) -> &MatchRow {
        self.matches
            .iter()
            .find(|m| m.match_id == match_id)
            .unwrap_or_else(|| panic!("no match {match_id}"))
    }

    /// The matches `player` played, in play order.
    pub fn matches_of(&self, player: &str) -> Vec<&MatchRow> {
        self.matches.iter().filter(|m| m.plays(player)).collect()
    }
}

impl MatchRow {
    pub fn plays(&self, player: &str) -> bool {
        self.player_a_id == player || self.player_b_id == player
    }

    pub fn opponent_of(&self, player: &str) -> &str {
        assert!(self.plays(player), "{player} does not play {}", self.match_id);
        if self.player_a_id == player {
            &self.player_b_id
        } else {
            &self.player_a_id
        }
    }

    pub fn result(&self) -> MatchResult {
        let bytes = self
            .result
            .as_deref()
            .unwrap_or_else(|| panic!("{} has no result", self.match_id));
        MatchResult::decode(bytes).expect("a stored result decodes")
    }

    pub fn transcript(&self) -> MatchTranscript {
        let text = self
            .transcript_json
            .as_deref()
            .unwrap_or_else(|| panic!("{} has no transcript", self.match_id));
        let json: serde_json::Value = serde_json::from_str(text).expect("a stored transcript is JSON");
        league_proto::json::from_json("league.v2.MatchTranscript", &json).expect("a stored transcript reads")
    }

    pub fn at_fault(&self) -> Vec<String> {
        self.at_fault_player_ids.clone().unwrap_or_default()
    }
}

/// Milliseconds since the Unix epoch, rounded down.
pub fn unix_millis(at: &prost_types::Timestamp) -> i64 {
    at.seconds * 1000 + i64::from(at.nanos) / 1_000_000
}

/// The message records of a transcript, in order.
pub fn messages(transcript: &MatchTranscript) -> Vec<&MessageRecord> {
    transcript
        .entries
        .iter()
        .filter_map(|entry| match &entry.entry {
            Some(transcript_entry::Entry::Message(message)) => Some(message),
            _ => None,
        })
        .collect()
}

/// The states a transcript went through, in order (the first is WAITING_FOR_PLAYERS).
pub fn states(transcript: &MatchTranscript) -> Vec<MatchState> {
    transcript
        .entries
        .iter()
        .filter_map(|entry| match &entry.entry {
            Some(transcript_entry::Entry::StateTransition(transition)) => Some(transition.to()),
            _ => None,
        })
        .collect()
}

/// Invariant 1: n(n−1)/2 scheduled matches, each finished with exactly one recorded result whose
/// columns agree with the stored `MatchResult` and the 3/1/0 scoring; every round completed, the league
/// completed. A match a withdrawal settled has no referee and is a technical loss of the player who
/// withdrew.
pub fn one_result_per_match(facts: &Facts) {
    let n = facts.players.len();
    assert_eq!(facts.matches.len(), n * (n - 1) / 2, "matches of {n} players");
    let ids: HashSet<&str> = facts.matches.iter().map(|m| m.match_id.as_str()).collect();
    assert_eq!(ids.len(), facts.matches.len(), "match ids are unique");
    for m in &facts.matches {
        let id = &m.match_id;
        assert_eq!(m.status, "finished", "{id}");
        if facts.forfeited(m) {
            let at_fault = m.at_fault();
            assert!(
                at_fault.len() == 1 && facts.withdrawn.contains(&at_fault[0]),
                "{id} has no referee, and no withdrawn player lost it: {at_fault:?}"
            );
            assert_eq!(
                m.result_status.as_deref(),
                Some("technical_loss"),
                "{id}: a forfeit"
            );
        } else {
            assert!(m.claims >= 1, "{id} was never claimed");
            assert!(m.referee_id.is_some(), "{id} names no referee");
        }
        assert!(m.finished_ms.is_some(), "{id} has no finished_at");
        assert!(m.transcript_json.is_some(), "{id} has no transcript");
        let status = m
            .result_status
            .as_deref()
            .unwrap_or_else(|| panic!("{id} has no result status"));
        let result = m.result();
        assert_eq!(result.match_id, *id);
        assert_eq!(m.transcript().match_id, *id);
        let expected_status = match status {
            "win" => ResultStatus::Win,
            "draw" => ResultStatus::Draw,
            "technical_loss" => ResultStatus::TechnicalLoss,
            "double_forfeit" => ResultStatus::DoubleForfeit,
            other => panic!("{id}: unknown result status {other}"),
        };
        assert_eq!(result.status(), expected_status, "{id}");
        assert_eq!(
            m.winner_player_id.as_deref().unwrap_or_default(),
            result.winner_player_id,
            "{id}"
        );
        assert_eq!(m.at_fault(), result.at_fault_player_ids, "{id}");
        let points: BTreeMap<&str, u32> = result
            .scores
            .iter()
            .map(|score| (score.player_id.as_str(), score.points))
            .collect();
        assert_eq!(result.scores.len(), 2, "{id}: two scores");
        let expected = match_points(m);
        assert_eq!(
            points,
            expected.iter().map(|(p, t)| (p.as_str(), t.points)).collect(),
            "{id}: scores"
        );
    }
    assert_eq!(facts.league_status, "completed");
    assert_eq!(facts.total_rounds as usize, facts.rounds.len());
    assert_eq!(facts.current_round, facts.total_rounds);
    for round in &facts.rounds {
        let matches = facts
            .matches
            .iter()
            .filter(|m| m.round_id == round.round_id)
            .count();
        assert_eq!(
            (round.status.as_str(), round.matches as usize),
            ("completed", matches),
            "round {}",
            round.round_id
        );
    }
}

/// Invariant 4: every pair meets exactly once; nobody plays twice in a round; n − 1 rounds for even n, n
/// for odd n with one bye per round and per player; match ids are R<round>M<1..>; player A registered
/// first.
pub fn pairs_meet_once(facts: &Facts) {
    let n = facts.players.len();
    let players = facts.player_ids();
    let number: HashMap<&str, i32> = facts
        .players
        .iter()
        .map(|p| (p.player_id.as_str(), p.agent_number))
        .collect();
    assert_eq!(
        facts.rounds.len(),
        facts.expected_rounds(),
        "rounds of {n} players"
    );
    let mut met = BTreeSet::new();
    let mut byes = BTreeMap::<&str, usize>::new();
    for (index, round) in facts.rounds.iter().enumerate() {
        let r = round.round_id;
        assert_eq!(r as usize, index + 1, "rounds are numbered 1..");
        let matches: Vec<&MatchRow> = facts.matches.iter().filter(|m| m.round_id == r).collect();
        assert_eq!(matches.len(), n / 2, "matches in round {r}");
        let mut playing = HashSet::new();
        for (i, m) in matches.iter().enumerate() {
            assert_eq!(m.match_number as usize, i + 1, "{}", m.match_id);
            assert_eq!(m.match_id, format!("R{r}M{}", i + 1));
            for player in [&m.player_a_id, &m.player_b_id] {
                assert!(
                    players.contains(&player.as_str()),
                    "{player} is not in the league"
                );
                assert!(
                    playing.insert(player.as_str()),
                    "{player} plays twice in round {r}"
                );
            }
            assert!(
                number[m.player_a_id.as_str()] < number[m.player_b_id.as_str()],
                "{}: player A registered first",
                m.match_id
            );
            let pair = (m.player_a_id.clone(), m.player_b_id.clone());
            assert!(met.insert(pair), "{} repeats a pairing", m.match_id);
        }
        match &round.bye_player_id {
            Some(bye) => {
                assert!(n % 2 == 1, "a bye in a league of {n}");
                assert!(
                    !playing.contains(bye.as_str()),
                    "{bye} has a bye and plays in round {r}"
                );
                *byes.entry(bye.as_str()).or_default() += 1;
            }
            None => assert!(n.is_multiple_of(2), "round {r} of {n} players has no bye"),
        }
        assert_eq!(playing.len() + usize::from(round.bye_player_id.is_some()), n);
    }
    assert_eq!(met.len(), n * (n - 1) / 2, "every pair meets");
    if n % 2 == 1 {
        assert_eq!(byes.len(), n, "everybody sits out once: {byes:?}");
        assert!(byes.values().all(|&count| count == 1), "{byes:?}");
    }
}

/// One player's record, recomputed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub technical_losses: u32,
    pub points: u32,
}

impl Tally {
    pub fn of(row: &StandingRow) -> Tally {
        Tally {
            played: row.played,
            wins: row.wins,
            draws: row.draws,
            losses: row.losses,
            technical_losses: row.technical_losses,
            points: row.points,
        }
    }
}

/// What one recorded match gives each of its players, from the result columns: win 3/0, draw 1/1,
/// technical loss 3 to the winner and 0 (a loss, a technical one) to the player at fault, double forfeit
/// 0/0 and a (technical) loss for both.
pub fn match_points(m: &MatchRow) -> BTreeMap<String, Tally> {
    let (a, b) = (m.player_a_id.as_str(), m.player_b_id.as_str());
    let win = Tally {
        played: 1,
        wins: 1,
        points: 3,
        ..Tally::default()
    };
    let loss = Tally {
        played: 1,
        losses: 1,
        ..Tally::default()
    };
    let technical_loss = Tally {
        technical_losses: 1,
        ..loss
    };
    let draw = Tally {
        played: 1,
        draws: 1,
        points: 1,
        ..Tally::default()
    };
    let id = &m.match_id;
    let winner = m.winner_player_id.as_deref();
    let at_fault = m.at_fault();
    let pair =
        |x: &str, tx: Tally, y: &str, ty: Tally| BTreeMap::from([(x.to_owned(), tx), (y.to_owned(), ty)]);
    match m.result_status.as_deref() {
        Some("win") => {
            let winner = winner.unwrap_or_else(|| panic!("{id}: a win without a winner"));
            assert!(at_fault.is_empty(), "{id}: a win with players at fault");
            pair(winner, win, m.opponent_of(winner), loss)
        }
        Some("draw") => {
            assert!(
                winner.is_none() && at_fault.is_empty(),
                "{id}: a draw names nobody"
            );
            pair(a, draw, b, draw)
        }
        Some("technical_loss") => {
            assert_eq!(at_fault.len(), 1, "{id}: one player at fault");
            let loser = at_fault[0].as_str();
            assert_eq!(winner, Some(m.opponent_of(loser)), "{id}: the other player wins");
            pair(loser, technical_loss, m.opponent_of(loser), win)
        }
        Some("double_forfeit") => {
            assert!(winner.is_none(), "{id}: a double forfeit has no winner");
            let mut both = at_fault.clone();
            both.sort();
            let mut players = vec![a.to_owned(), b.to_owned()];
            players.sort();
            assert_eq!(both, players, "{id}: both players at fault");
            pair(a, technical_loss, b, technical_loss)
        }
        other => panic!("{id}: no result ({other:?})"),
    }
}

/// Every player's record from the results of rounds up to `last_round`.
pub fn recompute(facts: &Facts, last_round: i32) -> BTreeMap<String, Tally> {
    let mut table: BTreeMap<String, Tally> = facts
        .players
        .iter()
        .map(|p| (p.player_id.clone(), Tally::default()))
        .collect();
    for m in facts.matches.iter().filter(|m| m.round_id <= last_round) {
        for (player, t) in match_points(m) {
            let row = table.get_mut(&player).expect("a league player");
            row.played += t.played;
            row.wins += t.wins;
            row.draws += t.draws;
            row.losses += t.losses;
            row.technical_losses += t.technical_losses;
            row.points += t.points;
        }
    }
    table
}

/// A table's rows are ranked 1..n in order, by points first, one row per league player.
fn assert_ranked(facts: &Facts, rows: &[StandingRow], what: &str) {
    let ids: BTreeSet<&str> = rows.iter().map(|row| row.player_id.as_str()).collect();
    let players: BTreeSet<&str> = facts.player_ids().into_iter().collect();
    assert_eq!(ids, players, "{what}: one row per player");
    assert_eq!(rows.len(), players.len(), "{what}: one row per player");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.rank as usize, i + 1, "{what}: ranks in order");
    }
    for pair in rows.windows(2) {
        assert!(
            pair[0].points >= pair[1].points,
            "{what}: {} ({} points) ranks above {} ({} points)",
            pair[0].player_id,
            pair[0].points,
            pair[1].player_id,
            pair[1].points
        );
    }
}

fn assert_table_is(facts: &Facts, rows: &[StandingRow], expected: &BTreeMap<String, Tally>, what: &str) {
    assert_ranked(facts, rows, what);
    for row in rows {
        assert_eq!(
            Tally::of(row),
            expected[&row.player_id],
            "{what}: {} against the recomputation",
            row.player_id
        );
    }
}

/// Invariant 2: GetStandings, the final standings of LEAGUE_COMPLETED and every round's
/// LEAGUE_STANDINGS_UPDATE equal a recomputation from the recorded results (of the rounds played so far),
/// ranked by points.
pub fn standings_equal_recomputation(facts: &Facts, standings: &GetStandingsResponse) {
    let last = facts.total_rounds;
    let expected = recompute(facts, last);
    let names: HashMap<&str, &str> = facts
        .players
        .iter()
        .map(|p| (p.player_id.as_str(), p.display_name.as_str()))
        .collect();
    assert_eq!(standings.league_id, facts.league_id);
    assert_eq!(
        standings.round_id as i32, last,
        "GetStandings is after the last round"
    );
    assert_table_is(facts, &standings.standings, &expected, "GetStandings");
    for row in &standings.standings {
        assert_eq!(row.display_name, names[row.player_id.as_str()]);
    }

    let completed: Vec<_> = facts
        .events
        .iter()
        .filter_map(|event| match &event.payload.event {
            Some(Event::LeagueCompleted(completed)) => Some(completed),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 1, "LEAGUE_COMPLETED once");
    let completed = completed[0];
    assert_eq!(completed.total_rounds as i32, last);
    assert_eq!(completed.total_matches as usize, facts.matches.len());
    assert_table_is(
        facts,
        &completed.final_standings,
        &expected,
        MessageType::LeagueCompleted.as_str(),
    );
    assert_eq!(
        completed.final_standings, standings.standings,
        "LEAGUE_COMPLETED's table is GetStandings'"
    );
    assert_eq!(completed.champion.as_ref(), standings.standings.first());

    for event in &facts.events {
        if let Some(Event::StandingsUpdate(update)) = &event.payload.event {
            let round = update.round_id as i32;
            let what = format!("LEAGUE_STANDINGS_UPDATE of round {round}");
            assert_table_is(facts, &update.standings, &recompute(facts, round), &what);
            if round == last {
                assert_eq!(update.standings, standings.standings, "{what}");
            }
        }
    }
}

/// Invariant 3, first half: a round's matches start only after every match of the previous round is
/// final — the earliest transcript entry of round r is not before the latest `finished_at` of round
/// r − 1 (same machine, same clock, compared in Unix milliseconds). Transcripts run forward in time.
/// Forfeits of withdrawn players were never played: they are recorded when the player withdrew, in
/// whichever round that was.
pub fn rounds_run_in_order(facts: &Facts) {
    let mut previous_end: Option<(i32, i64)> = None;
    for round in &facts.rounds {
        let r = round.round_id;
        let matches: Vec<&MatchRow> = facts
            .matches
            .iter()
            .filter(|m| m.round_id == r && !facts.forfeited(m))
            .collect();
        if matches.is_empty() {
            continue;
        }
        let mut first_start = i64::MAX;
        for m in &matches {
            let transcript = m.transcript();
            let times: Vec<i64> = transcript
                .entries
                .iter()
                .map(|entry| unix_millis(entry.at.as_ref().expect("every entry is timestamped")))
                .collect();
            assert!(!times.is_empty(), "{}: empty transcript", m.match_id);
            assert!(
                times.windows(2).all(|pair| pair[0] <= pair[1]),
                "{}: transcript out of time order",
                m.match_id
            );
            first_start = first_start.min(times[0]);
            let finished = m.finished_ms.expect("finished");
            assert!(
                times[0] <= finished,
                "{}: recorded as finished ({finished}) before it started ({})",
                m.match_id,
                times[0]
            );
        }
        if let Some((previous, end)) = previous_end {
            assert!(
                first_start >= end,
                "round {r} started at {first_start} ms, before round {previous} finished at {end} ms"
            );
        }
        let end = matches
            .iter()
            .map(|m| m.finished_ms.expect("finished"))
            .max()
            .expect("a round has matches");
        previous_end = Some((r, end));
    }
}

/// The league events a league of `rounds` rounds sends, in order.
fn expected_league_events(rounds: i32) -> Vec<(&'static str, i32)> {
    let mut expected = Vec::new();
    for r in 1..=rounds {
        expected.push(("round_announcement", r));
        expected.push(("round_completed", r));
        expected.push(("standings_update", r));
    }
    expected.push(("league_completed", rounds));
    expected
}

fn kind_of(kind: &str) -> EventKind {
    match kind {
        "round_announcement" => EventKind::RoundAnnouncement,
        "round_completed" => EventKind::RoundCompleted,
        "standings_update" => EventKind::StandingsUpdate,
        "league_completed" => EventKind::LeagueCompleted,
        other => panic!("unknown event kind {other}"),
    }
}

/// Invariant 3, second half, and the outbox: [`league_events_recorded_once`] in the database, and
/// [`bots_took_each_event_once`] in the bots' memory.
pub fn league_events_delivered_once(facts: &Facts, host: &PlayerHost) {
    league_events_recorded_once(facts);
    bots_took_each_event_once(facts, host);
}

/// The outbox in the database: the events are ROUND_ANNOUNCEMENT, ROUND_COMPLETED and
/// LEAGUE_STANDINGS_UPDATE for each round in order, then LEAGUE_COMPLETED exactly once; each payload says
/// what its row says; every player has exactly one delivery of each, delivered at the first attempt.
pub fn league_events_recorded_once(facts: &Facts) {
    let rounds = facts.total_rounds;
    let recorded: Vec<(&str, i32)> = facts
        .events
        .iter()
        .map(|event| (event.kind.as_str(), event.round_id))
        .collect();
    assert_eq!(
        recorded,
        expected_league_events(rounds),
        "the league's events in order"
    );
    assert_eq!(facts.events.len(), 3 * rounds as usize + 1);

    for event in &facts.events {
        let payload = &event.payload;
        assert_eq!(payload.league_id, facts.league_id);
        let what = format!(
            "event {} ({} of round {})",
            event.event_id, event.kind, event.round_id
        );
        let round_matches: Vec<&MatchRow> = facts
            .matches
            .iter()
            .filter(|m| m.round_id == event.round_id)
            .collect();
        match payload.event.as_ref() {
            Some(Event::RoundAnnouncement(announcement)) => {
                assert_eq!(event.kind, "round_announcement", "{what}");
                assert_eq!(announcement.round_id as i32, event.round_id, "{what}");
                let announced: Vec<(&str, &str, &str)> = announcement
                    .matches
                    .iter()
                    .map(|m| {
                        (
                            m.match_id.as_str(),
                            m.player_a_id.as_str(),
                            m.player_b_id.as_str(),
                        )
                    })
                    .collect();
                let scheduled: Vec<(&str, &str, &str)> = round_matches
                    .iter()
                    .map(|m| {
                        (
                            m.match_id.as_str(),
                            m.player_a_id.as_str(),
                            m.player_b_id.as_str(),
                        )
                    })
                    .collect();
                assert_eq!(announced, scheduled, "{what}: the round's matches");
            }
            Some(Event::RoundCompleted(completed)) => {
                assert_eq!(event.kind, "round_completed", "{what}");
                assert_eq!(completed.round_id as i32, event.round_id, "{what}");
                assert_eq!(
                    completed.matches_completed as usize,
                    round_matches.len(),
                    "{what}"
                );
                let next = if event.round_id == rounds {
                    0
                } else {
                    event.round_id + 1
                };
                assert_eq!(completed.next_round_id as i32, next, "{what}");
                let count = |statuses: &[&str]| {
                    round_matches
                        .iter()
                        .filter(|m| statuses.contains(&m.result_status.as_deref().unwrap_or_default()))
                        .count() as u32
                };
                let summary = completed.summary.expect("a round summary");
                assert_eq!(summary.total_matches as usize, round_matches.len(), "{what}");
                assert_eq!(summary.wins, count(&["win"]), "{what}");
                assert_eq!(summary.draws, count(&["draw"]), "{what}");
                assert_eq!(
                    summary.technical_losses,
                    count(&["technical_loss", "double_forfeit"]),
                    "{what}"
                );
            }
            Some(Event::StandingsUpdate(update)) => {
                assert_eq!(event.kind, "standings_update", "{what}");
                assert_eq!(update.round_id as i32, event.round_id, "{what}");
            }
            Some(Event::LeagueCompleted(_)) => assert_eq!(event.kind, "league_completed", "{what}"),
            None => panic!("{what}: no event in the payload"),
        }
    }

    for delivery in &facts.deliveries {
        assert!(
            delivery.delivered && delivery.attempts == 1 && !delivery.gave_up,
            "event {} to {}: delivered {}, attempts {}, gave up {}, last error {:?}",
            delivery.event_id,
            delivery.player_id,
            delivery.delivered,
            delivery.attempts,
            delivery.gave_up,
            delivery.last_error
        );
    }
    let kinds: HashMap<i64, (&str, i32)> = facts
        .events
        .iter()
        .map(|event| (event.event_id, (event.kind.as_str(), event.round_id)))
        .collect();
    for player in facts.player_ids() {
        let mut mine: Vec<(&str, i32)> = facts
            .deliveries
            .iter()
            .filter(|delivery| delivery.player_id == player)
            .map(|delivery| kinds[&delivery.event_id])
            .collect();
        mine.sort();
        let mut expected = expected_league_events(rounds);
        expected.sort();
        assert_eq!(
            mine, expected,
            "{player}: one delivery of each round's three notifications and one LEAGUE_COMPLETED"
        );
    }
}

/// Each bot took exactly the league's events, each id once, in order, the last LEAGUE_COMPLETED.
pub fn bots_took_each_event_once(facts: &Facts, host: &PlayerHost) {
    for player in facts.player_ids() {
        let taken = host
            .events(player)
            .unwrap_or_else(|| panic!("{player} is hosted"));
        let expected: Vec<(String, EventKind)> = facts
            .events
            .iter()
            .map(|event| {
                (
                    format!("{}/{}", facts.league_id, event.event_id),
                    kind_of(&event.kind),
                )
            })
            .collect();
        assert_eq!(
            taken, expected,
            "{player}'s memory holds each event once, in order"
        );
        assert_eq!(
            taken.last().map(|(_, kind)| *kind),
            Some(EventKind::LeagueCompleted)
        );
    }
}

/// Whether `value` names `key` anywhere inside.
fn mentions_key(fields: &prost_types::Struct, key: &str) -> bool {
    use prost_types::value::Kind;
    fn value_mentions(value: &prost_types::Value, key: &str) -> bool {
        match &value.kind {
            Some(Kind::StructValue(inner)) => mentions_key(inner, key),
            Some(Kind::ListValue(list)) => list.values.iter().any(|v| value_mentions(v, key)),
            _ => false,
        }
    }
    fields
        .fields
        .iter()
        .any(|(name, value)| name == key || value_mentions(value, key))
}

/// Invariant 5, for every even_odd match played to its end: both players are asked (attempt 1 of each)
/// before either answers, so the choices are collected concurrently; no move request carries a choice;
/// every answer is in before the number is drawn (DRAWING_NUMBER), and the drawn number (1–10) and the
/// choices in the result are the answers given; GAME_OVER follows FINISHED.
pub fn choices_before_the_draw(facts: &Facts) {
    if facts.game != "even_odd" {
        return;
    }
    let played = facts
        .matches
        .iter()
        .filter(|m| matches!(m.result_status.as_deref(), Some("win" | "draw")));
    for m in played {
        let id = &m.match_id;
        let transcript = m.transcript();
        let mut position = 0usize;
        let mut first_ask = HashMap::new();
        let mut first_answer = None;
        let mut last_answer = 0;
        let mut answers = HashMap::new();
        let mut drawing = None;
        let mut finished = None;
        let mut game_overs = Vec::new();
        for entry in &transcript.entries {
            position += 1;
            match &entry.entry {
                Some(transcript_entry::Entry::StateTransition(transition)) => match transition.to() {
                    MatchState::DrawingNumber => drawing = Some(position),
                    MatchState::Finished => finished = Some(position),
                    _ => {}
                },
                Some(transcript_entry::Entry::Message(message)) => {
                    let to_player = message.direction() == Direction::ToPlayer;
                    match (MessageType::parse(&message.message_type), to_player) {
                        (Some(MessageType::ChooseParityCall), true) => {
                            let payload = message.payload.clone().unwrap_or_default();
                            assert!(
                                !mentions_key(&payload, "parity_choice")
                                    && !mentions_key(&payload, "choices"),
                                "{id}: a move request to {} carries a choice: {payload:?}",
                                message.player_id
                            );
                            if message.attempt == 1 {
                                first_ask.entry(message.player_id.clone()).or_insert(position);
                            }
                        }
                        (Some(MessageType::ChooseParityResponse), false) => {
                            first_answer.get_or_insert(position);
                            last_answer = position;
                            if message.error_code.is_empty() {
                                let choice = message
                                    .payload
                                    .as_ref()
                                    .and_then(|p| p.fields.get("parity_choice"))
                                    .and_then(|v| match &v.kind {
                                        Some(prost_types::value::Kind::StringValue(s)) => Some(s.clone()),
                                        _ => None,
                                    })
                                    .unwrap_or_default();
                                answers.insert(message.player_id.clone(), choice);
                            }
                        }
                        (Some(MessageType::GameOver), true) => game_overs.push(position),
                        _ => {}
                    }
                }
                None => panic!("{id}: an empty transcript entry"),
            }
        }
        let first_answer = first_answer.unwrap_or_else(|| panic!("{id}: no answer"));
        for player in [&m.player_a_id, &m.player_b_id] {
            let asked = first_ask
                .get(player)
                .unwrap_or_else(|| panic!("{id}: {player} was never asked"));
            assert!(
                *asked < first_answer,
                "{id}: {player} was asked only after an answer came in"
            );
        }
        let drawing = drawing.unwrap_or_else(|| panic!("{id}: played without DRAWING_NUMBER"));
        assert!(last_answer < drawing, "{id}: an answer came after the draw");
        let finished = finished.unwrap_or_else(|| panic!("{id}: played without FINISHED"));
        assert_eq!(game_overs.len(), 2, "{id}: GAME_OVER to both");
        assert!(
            game_overs.iter().all(|&p| p > finished),
            "{id}: GAME_OVER before FINISHED"
        );

        let metadata = m.result().game_metadata.unwrap_or_default();
        let drawn = match metadata.fields.get("drawn_number").and_then(|v| v.kind.as_ref()) {
            Some(prost_types::value::Kind::NumberValue(n)) => *n,
            other => panic!("{id}: no drawn number: {other:?}"),
        };
        assert!(
            (1.0..=10.0).contains(&drawn) && drawn.fract() == 0.0,
            "{id}: drew {drawn}"
        );
        let choices: HashMap<String, String> =
            match metadata.fields.get("choices").and_then(|v| v.kind.as_ref()) {
                Some(prost_types::value::Kind::StructValue(choices)) => choices
                    .fields
                    .iter()
                    .filter_map(|(player, value)| match &value.kind {
                        Some(prost_types::value::Kind::StringValue(choice)) => {
                            Some((player.clone(), choice.clone()))
                        }
                        _ => None,
                    })
                    .collect(),
                other => panic!("{id}: no choices: {other:?}"),
            };
        assert_eq!(
            choices, answers,
            "{id}: the result's choices are the answers given"
        );
    }
}

/// Every bot remembers, from GAME_OVER, each match it played exactly once, with the recorded outcome.
pub fn bots_remember_their_results(facts: &Facts, host: &PlayerHost) {
    for player in facts.player_ids() {
        let history = host
            .history(player)
            .unwrap_or_else(|| panic!("{player} is hosted"));
        // A game without a match id would be remembered under "" (and fail the comparison below).
        let remembered: BTreeMap<String, &league_player::GameRecord> = history
            .iter()
            .map(|game| (game.match_id.map(|id| id.to_string()).unwrap_or_default(), game))
            .collect();
        assert_eq!(
            remembered.len(),
            history.len(),
            "{player} remembers each match once"
        );
        let played: BTreeSet<&str> = facts
            .matches_of(player)
            .into_iter()
            .map(|m| m.match_id.as_str())
            .collect();
        assert_eq!(
            remembered.keys().map(String::as_str).collect::<BTreeSet<_>>(),
            played,
            "{player} remembers the matches it played"
        );
        for (match_id, game) in remembered {
            let m = facts.match_row(&match_id);
            let result = m.result();
            assert_eq!(game.league_id, facts.league_id);
            assert_eq!(game.opponent_id, m.opponent_of(player), "{player} in {match_id}");
            assert_eq!(game.status, result.status(), "{player} in {match_id}");
            assert_eq!(
                game.at_fault,
                m.at_fault().iter().any(|p| p == player),
                "{player} in {match_id}"
            );
            let expected = match m.result_status.as_deref() {
                Some("draw") => league_player::Outcome::Draw,
                _ if m.winner_player_id.as_deref() == Some(player) => league_player::Outcome::Win,
                _ => league_player::Outcome::Loss,
            };
            assert_eq!(game.outcome, expected, "{player} in {match_id}");
        }
    }
}
