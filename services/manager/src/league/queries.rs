//! Read-only questions about a league (LEAGUE_QUERY and the operator's views). An empty league id
//! means the most recently created league.

use league_domain::{LeagueId, MatchId, PlayerId};
use league_proto::ErrorCode;
use league_proto::v2::{
    GetMatchResponse, GetPlayerStatsResponse, MatchResult, MatchStatus, MatchTranscript, ScheduledMatch,
};
use prost::Message;
use sqlx::PgConnection;

use crate::error::{ManagerResult, reject};
use crate::ids;
use crate::league::queue::{TimingRow, match_timing};
use crate::league::{history, table};

/// The league `league_id` names, or the newest one when it names none.
pub async fn resolve_league(conn: &mut PgConnection, league_id: Option<LeagueId>) -> ManagerResult<LeagueId> {
    let Some(league_id) = league_id else {
        let newest = sqlx::query_scalar!("select league_id from leagues order by created_at desc limit 1")
            .fetch_optional(&mut *conn)
            .await?;
        return match newest {
            Some(newest) => ids::stored("leagues.league_id", &newest),
            None => Err(reject(ErrorCode::LeagueNotFound, "there is no league yet")),
        };
    };
    let found = sqlx::query_scalar!(
        "select league_id from leagues where league_id = $1",
        league_id.as_str()
    )
    .fetch_optional(&mut *conn)
    .await?;
    match found {
        Some(_) => Ok(league_id),
        None => Err(reject(
            ErrorCode::LeagueNotFound,
            format!("no league {:?}", league_id.as_str()),
        )),
    }
}

/// A schedule row as the queries read it.
#[derive(Debug)]
pub(crate) struct MatchRow {
    pub(crate) league_id: String,
    pub(crate) round_id: i32,
    pub(crate) match_id: String,
    pub(crate) game_type: String,
    pub(crate) player_a_id: String,
    pub(crate) player_b_id: String,
    pub(crate) referee_id: Option<String>,
    pub(crate) status: String,
}

/// A match row with its stored result and transcript ([`MatchRow`]'s columns, then these).
#[derive(Debug)]
struct MatchDetailRow {
    league_id: String,
    round_id: i32,
    match_id: String,
    game_type: String,
    player_a_id: String,
    player_b_id: String,
    referee_id: Option<String>,
    status: String,
    result: Option<Vec<u8>>,
    transcript_json: Option<String>,
    /// Only a match recorded before transcripts were kept as JSON has its transcript here
    /// (migrations/20261206400001_transcript_stored_once.sql).
    transcript: Option<Vec<u8>>,
}

/// A checked `sqlx::query_as!` into `$row` whose first columns are those of a match `m` of league `l`
/// as the contracts show it ([`MatchRow`]'s), written once here; `$rest` is the rest of the statement
/// (a literal, or literals joined by `+`) and its arguments. A match's status comes from
/// `match_status` (in the migrations): a row says `scheduled` until it is leased, and a scheduled match
/// of the current round is ready.
macro_rules! query_matches {
    ($row:ident, $($rest:tt)+) => {
        sqlx::query_as!(
            $row,
            r#"select m.league_id, m.round_id, m.match_id, l.game_type, m.player_a_id, m.player_b_id,
                m.referee_id, match_status(m, l) as "status!""# + $($rest)+
        )
    };
}
pub(crate) use query_matches;

impl From<MatchRow> for ScheduledMatch {
    fn from(row: MatchRow) -> Self {
        ScheduledMatch {
            status: match_status(&row.status) as i32,
            league_id: row.league_id,
            round_id: row.round_id as u32,
            match_id: row.match_id,
            game_type: row.game_type,
            player_a_id: row.player_a_id,
            player_b_id: row.player_b_id,
            referee_id: row.referee_id.unwrap_or_default(),
            ..ScheduledMatch::default()
        }
    }
}

pub fn match_status(status: &str) -> MatchStatus {
    match status {
        "scheduled" => MatchStatus::Scheduled,
        "ready" => MatchStatus::Ready,
        "running" => MatchStatus::Running,
        "finished" => MatchStatus::Finished,
        "cancelled" => MatchStatus::Cancelled,
        _ => MatchStatus::Unspecified,
    }
}

/// The matches of a league (or of one round), in play order.
pub async fn scheduled_matches(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    round_id: Option<u32>,
) -> ManagerResult<Vec<ScheduledMatch>> {
    let rows = query_matches!(
        MatchRow,
        " from matches m join leagues l on l.league_id = m.league_id
         where m.league_id = $1 and ($2::int is null or m.round_id = $2)
         order by m.round_id, m.match_number",
        league_id.as_str(),
        round_id.map(|round| round as i32),
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(ScheduledMatch::from).collect())
}

/// The last round whose matches are all final (0 before any).
pub async fn last_completed_round(conn: &mut PgConnection, league_id: &LeagueId) -> ManagerResult<u32> {
    let round_id = sqlx::query_scalar!(
        r#"select coalesce(max(round_id), 0) as "round_id!" from rounds
           where league_id = $1 and status = 'completed'"#,
        league_id.as_str()
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(round_id as u32)
}

/// The player's first match that is not finished, if any.
pub async fn next_match(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<Option<ScheduledMatch>> {
    ensure_player(conn, league_id, player_id).await?;
    let row = query_matches!(
        MatchRow,
        " from matches m join leagues l on l.league_id = m.league_id
         where m.league_id = $1 and m.status <> 'finished' and (m.player_a_id = $2 or m.player_b_id = $2)
         order by m.round_id, m.match_number limit 1",
        league_id.as_str(),
        player_id.as_str(),
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(ScheduledMatch::from))
}

pub async fn player_stats(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<GetPlayerStatsResponse> {
    ensure_player(conn, league_id, player_id).await?;
    let standing = table::standings(conn, league_id)
        .await?
        .into_iter()
        .find(|row| *player_id == row.player_id);
    let results = sqlx::query_scalar!(
        r#"select result as "result!" from matches where league_id = $1 and status = 'finished'
           and (player_a_id = $2 or player_b_id = $2) order by round_id, match_number"#,
        league_id.as_str(),
        player_id.as_str(),
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(GetPlayerStatsResponse {
        matches: history::player_matches(conn, league_id, player_id).await?,
        standing,
        results: results
            .into_iter()
            .map(|bytes| decode::<MatchResult>(&bytes))
            .collect::<Result<_, _>>()?,
    })
}

pub async fn match_detail(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    match_id: MatchId,
) -> ManagerResult<GetMatchResponse> {
    let row = query_matches!(
        MatchDetailRow,
        ", m.result, m.transcript_json, m.transcript from matches m
             join leagues l on l.league_id = m.league_id where m.league_id = $1 and m.match_id = $2",
        league_id.as_str(),
        match_id.to_string(),
    )
    .fetch_optional(&mut *conn)
    .await?;
    let Some(MatchDetailRow {
        league_id: stored_league_id,
        round_id,
        match_id,
        game_type,
        player_a_id,
        player_b_id,
        referee_id,
        status,
        result,
        transcript_json,
        transcript,
    }) = row
    else {
        return Err(reject(
            ErrorCode::MatchNotFound,
            format!("no match {match_id} in league {league_id}"),
        ));
    };
    let scheduled = MatchRow {
        league_id: stored_league_id,
        round_id,
        match_id,
        game_type,
        player_a_id,
        player_b_id,
        referee_id,
        status,
    };
    let timing = sqlx::query_as!(
        TimingRow,
        "select join_timeout_ms, move_timeout_ms, game_over_timeout_ms, max_attempts, retry_delay_ms,
                lease_duration_ms
         from leagues where league_id = $1",
        league_id.as_str()
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(GetMatchResponse {
        r#match: Some(scheduled.into()),
        result: result.as_deref().map(decode::<MatchResult>).transpose()?,
        transcript: match (transcript_json, transcript) {
            (Some(json), _) => Some(transcript_from_json(&json)?),
            (None, bytes) => bytes.as_deref().map(decode::<MatchTranscript>).transpose()?,
        },
        timing: Some(match_timing(timing)),
    })
}

async fn ensure_player(
    conn: &mut PgConnection,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<()> {
    let found = sqlx::query_scalar!(
        "select 1 from league_players where league_id = $1 and player_id = $2",
        league_id.as_str(),
        player_id.as_str(),
    )
    .fetch_optional(&mut *conn)
    .await?;
    found.map(|_| ()).ok_or_else(|| {
        reject(
            ErrorCode::PlayerNotRegistered,
            format!("{player_id} is not in league {league_id}"),
        )
    })
}

pub(crate) fn decode<M: Message + Default>(bytes: &[u8]) -> ManagerResult<M> {
    M::decode(bytes).map_err(|error| anyhow::anyhow!("stored record does not decode: {error}").into())
}

/// A transcript as stored: its proto3 JSON, the one form a match's transcript is kept in. Read by the
/// typed reader, not through reflection: 1.16 M instructions a 15-entry transcript before, 0.10 M now,
/// and a results folder reads every match's (league_proto::json::read).
fn transcript_from_json(text: &str) -> ManagerResult<MatchTranscript> {
    league_proto::json::record_from_json_text(text)
        .map_err(|error| anyhow::anyhow!("stored transcript: {error}").into())
}

#[cfg(test)]
mod tests {
    use league_proto::v2::transcript_entry::Entry;
    use league_proto::v2::{StateTransition, TranscriptEntry};

    use super::*;

    #[test]
    fn a_stored_transcript_reads_back_and_one_that_does_not_is_an_error_naming_it() {
        let transcript = MatchTranscript {
            match_id: "R1M1".into(),
            entries: vec![TranscriptEntry {
                at: Some(prost_types::Timestamp {
                    seconds: 1_800_000_000,
                    nanos: 5_000,
                }),
                entry: Some(Entry::StateTransition(StateTransition {
                    from: 1,
                    to: 2,
                    reason: "both players joined".into(),
                })),
            }],
        };
        let stored = league_proto::json::record_to_json_text(&transcript).expect("JSON");
        assert_eq!(transcript_from_json(&stored).ok(), Some(transcript));
        for broken in ["", r#"{"entries":[{"at":"yesterday"}]}"#, r#"{"entries":{}}"#] {
            let error = transcript_from_json(broken).err().map(|error| error.to_string());
            assert!(
                error.as_ref().is_some_and(
                    |error| error.starts_with("stored transcript: not a league.v2.MatchTranscript: ")
                ),
                "{error:?}"
            );
        }
    }
}
