//! What happened in a league, for people and tools looking back: the schedule with each match's
//! outcome, a player's match history, the table after each round, and the list of leagues. Every
//! answer is bounded: large ones come a page at a time.

use league_domain::{LeagueId, PlayerId};
use league_proto::v2::{
    LeagueStatus, LeagueSummary, ListLeaguesResponse, MatchResult, RoundStandings, ScheduledMatch,
    ScheduledRound,
};
use sqlx::PgConnection;

use crate::error::{ManagerResult, reject};
use crate::ids;
use crate::league::queries::{MatchRow, decode, query_matches};
use crate::league::queue::timestamp_from_millis;
use crate::league::table::{self, LeagueResults};
use league_proto::ErrorCode;

/// Most matches in one schedule page.
pub const MAX_SCHEDULE_PAGE: u32 = 2_000;
/// Most table rows (rounds × players) in one page of standings by round.
pub const MAX_STANDINGS_ROWS: usize = 20_000;
/// Leagues in a page when the caller does not say, and the most it may ask for.
pub const DEFAULT_LEAGUE_PAGE: u32 = 20;
pub const MAX_LEAGUE_PAGE: u32 = 100;

/// A schedule row ([`MatchRow`]'s columns) with what the match came to.
#[derive(Debug)]
struct PlayedRow {
    league_id: String,
    round_id: i32,
    match_id: String,
    game_type: String,
    player_a_id: String,
    player_b_id: String,
    referee_id: Option<String>,
    status: String,
    result: Option<Vec<u8>>,
    started_ms: Option<i64>,
    finished_ms: Option<i64>,
    /// For a match with players at fault: the error code of the last exchange one of them failed
    /// (empty when none did); None for other matches.
    fault_code: Option<String>,
}

/// A checked query of [`PlayedRow`]s of the matches `m` (of leagues `l`) that `$rest` (the where
/// clause on, and its arguments) keeps: the schedule columns, the stored result, and when the match
/// started and finished by its referee's clock (its transcript's first and last entries; the time the
/// result was recorded when there is no transcript), in epoch milliseconds. A match still running has no
/// transcript yet: it started when a referee took it (`claimed_at`, the manager's clock). Only a match with players
/// at fault has its transcript's JSON parsed, for the cause.
macro_rules! query_played {
    ($($rest:tt)+) => {
        query_matches!(
            PlayedRow,
            r#", m.result,
                (extract(epoch from coalesce(m.started_at,
                    case when m.status = 'running' then m.claimed_at end)) * 1000)::bigint as "started_ms?",
                (extract(epoch from coalesce(m.ended_at, m.finished_at)) * 1000)::bigint as "finished_ms?",
                case when cardinality(m.at_fault_player_ids) > 0 then coalesce((
                    select e.entry->'message'->>'error_code'
                    from jsonb_array_elements(m.transcript_json::jsonb->'entries') with ordinality as e(entry, seq)
                    where e.entry->'message'->>'error_code' <> ''
                      and e.entry->'message'->>'player_id' = any(m.at_fault_player_ids)
                      -- GAME_OVER goes out after the result, best effort: not why the match was lost.
                      and e.entry->'message'->>'message_type' <> 'GAME_OVER'
                    order by e.seq desc limit 1), '') end as "fault_code?"
             from matches m join leagues l on l.league_id = m.league_id "#
                + $($rest)+
        )
    };
}

impl PlayedRow {
    fn into_match(self) -> ManagerResult<ScheduledMatch> {
        let scheduled = MatchRow {
            league_id: self.league_id,
            round_id: self.round_id,
            match_id: self.match_id,
            game_type: self.game_type,
            player_a_id: self.player_a_id,
            player_b_id: self.player_b_id,
            referee_id: self.referee_id,
            status: self.status,
        };
        Ok(ScheduledMatch {
            result: self.result.as_deref().map(decode::<MatchResult>).transpose()?,
            started_at: self.started_ms.map(timestamp_from_millis),
            finished_at: self.finished_ms.map(timestamp_from_millis),
            technical_loss_cause: self.fault_code.as_deref().map(cause).unwrap_or_default(),
            ..scheduled.into()
        })
    }
}

/// Whole rounds from `first_round_id` holding at most `max_matches` matches (at least one round), each
/// match with its outcome once finished; and the round the next page starts at (0: none).
pub async fn schedule_page(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    first_round_id: u32,
    max_matches: u32,
) -> ManagerResult<(Vec<ScheduledRound>, u32)> {
    let first = first_round_id.max(1) as i32;
    let max_matches = if max_matches == 0 {
        MAX_SCHEDULE_PAGE
    } else {
        max_matches.min(MAX_SCHEDULE_PAGE)
    };
    // Each round's size from its row (fixed by the schedule): counting every later round's matches made
    // each page of a 500-player league's schedule read 124,750 index entries (46 ms a page).
    let rounds: Vec<(i32, Option<String>, i64)> = sqlx::query!(
        r#"select r.round_id, r.bye_player_id, r.matches::bigint as "matches!"
         from rounds r where r.league_id = $1 and r.round_id >= $2 order by r.round_id"#,
        league_id.as_str(),
        first,
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|round| (round.round_id, round.bye_player_id, round.matches))
    .collect();
    let mut taken = 0;
    let mut matches_taken = 0i64;
    for (_, _, count) in &rounds {
        if taken > 0 && matches_taken + count > i64::from(max_matches) {
            break;
        }
        taken += 1;
        matches_taken += count;
    }
    let next_round_id = rounds.get(taken).map_or(0, |(round_id, _, _)| *round_id as u32);
    let rounds = &rounds[..taken];
    let Some(last) = rounds.last().map(|(round_id, _, _)| *round_id) else {
        return Ok((vec![], 0));
    };
    let rows = query_played!(
        "where m.league_id = $1 and m.round_id between $2 and $3 order by m.round_id, m.match_number",
        league_id.as_str(),
        first,
        last,
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut matches = rows
        .into_iter()
        .map(PlayedRow::into_match)
        .collect::<ManagerResult<Vec<_>>>()?
        .into_iter()
        .peekable();
    let mut page = Vec::with_capacity(rounds.len());
    for (round_id, bye, _) in rounds {
        let round_id = *round_id as u32;
        let mut in_round = vec![];
        while let Some(next) = matches.next_if(|m| m.round_id == round_id) {
            in_round.push(next);
        }
        page.push(ScheduledRound {
            round_id,
            matches: in_round,
            bye_player_ids: bye.iter().cloned().collect(),
        });
    }
    Ok((page, next_round_id))
}

/// Every match of `player_id` (one per opponent at most), in play order, with its outcome once finished.
pub async fn player_matches(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<Vec<ScheduledMatch>> {
    let rows = query_played!(
        "where m.league_id = $1 and (m.player_a_id = $2 or m.player_b_id = $2)
         order by m.round_id, m.match_number",
        league_id.as_str(),
        player_id.as_str(),
    )
    .fetch_all(&mut *conn)
    .await?;
    rows.into_iter().map(PlayedRow::into_match).collect()
}

/// The table after each completed round from `first_round_id`, at most `max_rounds` of them (0: as many
/// as [`MAX_STANDINGS_ROWS`] allows, always at least one); and the round the next page starts at (0: none).
pub async fn standings_by_round(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    first_round_id: u32,
    max_rounds: u32,
) -> ManagerResult<(Vec<RoundStandings>, u32)> {
    let completed = sqlx::query_scalar!(
        "select round_id from rounds where league_id = $1 and status = 'completed' and round_id >= $2
         order by round_id",
        league_id.as_str(),
        first_round_id.max(1) as i32,
    )
    .fetch_all(&mut *conn)
    .await?;
    let results = LeagueResults::load(conn, league_id).await?;
    let fit = (MAX_STANDINGS_ROWS / results.player_count().max(1)).max(1);
    let take = match max_rounds {
        0 => fit,
        asked => fit.min(asked as usize),
    };
    let next_round_id = completed.get(take).map_or(0, |round_id| *round_id as u32);
    let rounds = completed.iter().take(take).map(|round_id| *round_id as u32);
    Ok((results.after_each(rounds)?, next_round_id))
}

/// Leagues newest first, `page_size` from the offset in `page_token`.
pub async fn list_leagues(
    conn: &mut PgConnection,
    page_size: u32,
    page_token: &str,
) -> ManagerResult<ListLeaguesResponse> {
    let size = match page_size {
        0 => DEFAULT_LEAGUE_PAGE,
        size => size.min(MAX_LEAGUE_PAGE),
    };
    let offset: i64 = if page_token.is_empty() {
        0
    } else {
        page_token
            .parse()
            .ok()
            .filter(|offset| *offset >= 0)
            .ok_or_else(|| {
                reject(
                    ErrorCode::InvalidMessageFormat,
                    format!("invalid page_token {page_token:?}"),
                )
            })?
    };
    // One more than asked: whether there is a next page.
    let rows = sqlx::query!(
        r#"select l.league_id, l.game_type, l.status, l.current_round, l.total_rounds,
                (select count(*) from league_players lp where lp.league_id = l.league_id) as "players!",
                (extract(epoch from l.created_at) * 1000)::bigint as "created_ms!",
                (extract(epoch from l.started_at) * 1000)::bigint as "started_ms?",
                (extract(epoch from l.completed_at) * 1000)::bigint as "completed_ms?"
         from leagues l order by l.created_at desc, l.league_id limit $1 offset $2"#,
        i64::from(size) + 1,
        offset,
    )
    .fetch_all(&mut *conn)
    .await?;
    let more = rows.len() > size as usize;
    let mut leagues = Vec::with_capacity(rows.len().min(size as usize));
    for row in rows.into_iter().take(size as usize) {
        let (league_id, game_type, status, current, total) = (
            row.league_id,
            row.game_type,
            row.status,
            row.current_round,
            row.total_rounds,
        );
        let (players, created, started, completed) =
            (row.players, row.created_ms, row.started_ms, row.completed_ms);
        let status = league_status(&status);
        let champion = if status == LeagueStatus::Completed {
            let stored = ids::stored("leagues.league_id", &league_id)?;
            table::standings(conn, &stored).await?.into_iter().next()
        } else {
            None
        };
        leagues.push(LeagueSummary {
            league_id,
            game_type,
            status: status as i32,
            current_round_id: current as u32,
            total_rounds: total as u32,
            registered_players: players as u32,
            created_at: Some(timestamp_from_millis(created)),
            started_at: started.map(timestamp_from_millis),
            completed_at: completed.map(timestamp_from_millis),
            champion,
        });
    }
    Ok(ListLeaguesResponse {
        leagues,
        next_page_token: if more {
            (offset + i64::from(size)).to_string()
        } else {
            String::new()
        },
    })
}

/// A technical loss's cause from the error code of the last exchange the player at fault failed.
fn cause(code: &str) -> String {
    match code {
        "" => "declined",
        "E001" => "timeout",
        "E009" => "unreachable",
        "E004" | "E010" => "invalid_move",
        other => other,
    }
    .to_owned()
}

/// A league's stored status as the contract's enum.
pub fn league_status(status: &str) -> LeagueStatus {
    match status {
        "registering" => LeagueStatus::Registering,
        "running" => LeagueStatus::Running,
        "completed" => LeagueStatus::Completed,
        "paused" => LeagueStatus::Paused,
        "cancelled" => LeagueStatus::Cancelled,
        _ => LeagueStatus::Unspecified,
    }
}
