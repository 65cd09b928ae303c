//! Enrolling players in leagues. A player registers once with the deployment (its id and token are its
//! own for good) and is enrolled in any number of leagues: at its first registration, when it registers
//! again with its credentials while a league of its game is open, or by the operator (EnrollPlayer).
//!
//! Every enrollment is held to the same rules: the league is registering, plays a game the player lists
//! and has room (its own `max_players`, else the deployment's); the enrollment that reaches the league's
//! auto-start threshold starts it. A player enrolled already changes nothing.

use league_domain::{LeagueId, PlayerId};
use league_proto::ErrorCode;
use sqlx::{PgConnection, PgPool};

use crate::error::{ManagerResult, reject};
use crate::ids;
use crate::league::start;

/// A league taking registrations, its row locked by the transaction that found it: concurrent
/// enrollments count its players one at a time.
#[derive(Debug)]
pub struct OpenLeague {
    pub league_id: LeagueId,
    auto_start_players: i32,
    max_players: u32,
}

/// What an enrollment did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enrollment {
    pub league_id: LeagueId,
    /// False when the player was in the league already.
    pub enrolled: bool,
    /// True when this enrollment started the league.
    pub started: bool,
}

/// Locks `requested`, or the newest league open for registration when none is, and checks that it
/// takes a player of `game_types`. `deployment_max` is LEAGUE_MAX_PLAYERS.
pub async fn open_league(
    tx: &mut PgConnection,
    requested: Option<&LeagueId>,
    game_types: &[String],
    deployment_max: u32,
) -> ManagerResult<OpenLeague> {
    struct Row {
        league_id: String,
        status: String,
        game_type: String,
        auto_start_players: i32,
        max_players: Option<i32>,
    }
    let league = match requested {
        None => {
            sqlx::query_as!(
                Row,
                "select league_id, status, game_type, auto_start_players, max_players from leagues
                 where status = 'registering' order by created_at desc limit 1 for update",
            )
            .fetch_optional(&mut *tx)
            .await?
        }
        Some(requested) => {
            sqlx::query_as!(
                Row,
                "select league_id, status, game_type, auto_start_players, max_players from leagues
                 where league_id = $1 for update",
                requested.as_str()
            )
            .fetch_optional(&mut *tx)
            .await?
        }
    };
    let Some(Row {
        league_id,
        status,
        game_type,
        auto_start_players,
        max_players,
    }) = league
    else {
        return Err(match requested {
            None => reject(
                ErrorCode::InvalidLeagueState,
                "no league is open for registration",
            ),
            Some(requested) => reject(ErrorCode::LeagueNotFound, format!("no league {requested}")),
        });
    };
    if status != "registering" {
        return Err(reject(
            ErrorCode::InvalidLeagueState,
            format!("league {league_id} is {status}, not registering"),
        ));
    }
    if !game_types.contains(&game_type) {
        return Err(reject(
            ErrorCode::UnsupportedGameType,
            format!("league {league_id} plays {game_type}, which the player does not list"),
        ));
    }
    let max_players = max_players
        .and_then(|max| u32::try_from(max).ok())
        .map_or(deployment_max, |max| max.min(deployment_max));
    Ok(OpenLeague {
        league_id: ids::stored("leagues.league_id", &league_id)?,
        auto_start_players,
        max_players,
    })
}

impl OpenLeague {
    /// Refuses a league that has its maximum of players.
    pub async fn check_room(&self, tx: &mut PgConnection) -> ManagerResult<()> {
        if self.players(tx).await? >= i64::from(self.max_players) {
            return Err(reject(
                ErrorCode::InvalidLeagueState,
                format!(
                    "league {} is full: it takes at most {} players",
                    self.league_id, self.max_players
                ),
            ));
        }
        Ok(())
    }

    /// Enrolls `player_id` (checked for room by the caller, registered in this transaction or before);
    /// returns whether that started the league.
    pub async fn add(&self, tx: &mut PgConnection, player_id: &PlayerId) -> ManagerResult<bool> {
        sqlx::query!(
            "insert into league_players (league_id, player_id) values ($1, $2)",
            self.league_id.as_str(),
            player_id.as_str(),
        )
        .execute(&mut *tx)
        .await?;
        if self.auto_start_players > 0 && self.players(tx).await? >= i64::from(self.auto_start_players) {
            start::start_locked(tx, &self.league_id).await?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Enrolls a registered player unless it is in the league already.
    pub async fn enroll(&self, tx: &mut PgConnection, player_id: &PlayerId) -> ManagerResult<Enrollment> {
        let already = sqlx::query_scalar!(
            r#"select exists (select 1 from league_players where league_id = $1 and player_id = $2) as "already!""#,
            self.league_id.as_str(),
            player_id.as_str(),
        )
        .fetch_one(&mut *tx)
        .await?;
        let mut enrollment = Enrollment {
            league_id: self.league_id.clone(),
            enrolled: false,
            started: false,
        };
        if !already {
            self.check_room(tx).await?;
            enrollment.started = self.add(tx, player_id).await?;
            enrollment.enrolled = true;
        }
        Ok(enrollment)
    }

    async fn players(&self, tx: &mut PgConnection) -> ManagerResult<i64> {
        let joined = sqlx::query_scalar!(
            r#"select count(*) as "joined!" from league_players where league_id = $1"#,
            self.league_id.as_str()
        )
        .fetch_one(&mut *tx)
        .await?;
        Ok(joined)
    }
}

/// The operator's EnrollPlayer: `player_id`, a registered player, joins `league_id`.
pub async fn enroll_registered(
    pool: &PgPool,
    deployment_max: u32,
    league_id: &LeagueId,
    player_id: &PlayerId,
) -> ManagerResult<Enrollment> {
    // Lock order (docs/subsystems/lock-order.md): the league's row, then its players (inserts).
    let mut tx = pool.begin().await?;
    let player = sqlx::query_scalar!(
        "select game_types from agents where agent_id = $1 and kind = 'player'",
        player_id.as_str()
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(game_types) = player else {
        return Err(reject(
            ErrorCode::PlayerNotRegistered,
            format!("no registered player {player_id}"),
        ));
    };
    let league = open_league(&mut tx, Some(league_id), &game_types, deployment_max).await?;
    let enrollment = league.enroll(&mut tx, player_id).await?;
    tx.commit().await?;
    if enrollment.enrolled {
        tracing::info!(%player_id, %league_id, started = enrollment.started, "player enrolled by the operator");
    }
    Ok(enrollment)
}
