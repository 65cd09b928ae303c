//! The `ManagerService` gRPC API: authenticates each call, hands it to the league logic, and turns the
//! outcome into a response or a status carrying its league.v2 error code.

use std::sync::Arc;
use std::time::Duration;

use league_domain::{GameType, LeagueId, MatchId, PlayerId, Timing};
use league_proto::ErrorCode;
use league_proto::v2::manager_service_server::ManagerService;
use league_proto::v2::*;
use secrecy::ExposeSecret;
use sqlx::PgPool;
use sqlx::Postgres;
use sqlx::pool::PoolConnection;
use tonic::{Request, Response, Status};

use crate::auth::{AgentKind, Authenticator, Caller};
use crate::error::{ManagerError, ManagerResult, reject};
use crate::ids;
use crate::league::lease::Lease;
use crate::league::report_queue::ReportQueue;
use crate::league::{
    enrollment, history, lifecycle, queries, queue, registration, resume, start, status, table, withdrawal,
};
use crate::report_route::{ReportMatchResultBytes, ReportMatchResultsBytes};
use crate::wakeups::Wakeups;

mod reports;

/// Longest long poll a referee may ask for.
const MAX_CLAIM_WAIT: Duration = Duration::from_secs(30);
/// Most matches one claim may take.
const MAX_CLAIM_BATCH: u32 = 256;

#[derive(Debug, Clone)]
pub struct Manager {
    pool: PgPool,
    /// Where claims run (db::connect_claims).
    claims: PgPool,
    auth: Arc<Authenticator>,
    wakeups: Arc<Wakeups>,
    default_timing: Timing,
    rules: Arc<registration::Rules>,
    reports: ReportQueue,
}

impl Manager {
    /// Starts the result writer ([`ReportQueue`]), so it is called inside a Tokio runtime.
    pub fn new(
        pool: PgPool,
        auth: Arc<Authenticator>,
        wakeups: Arc<Wakeups>,
        default_timing: Timing,
        rules: registration::Rules,
    ) -> Self {
        Self {
            reports: ReportQueue::start(crate::db::connect_writer(&pool), wakeups.clone()),
            claims: crate::db::connect_claims(&pool),
            pool,
            auth,
            wakeups,
            default_timing,
            rules: Arc::new(rules),
        }
    }

    /// Queries are open to the operator and to registered agents; a player may only ask about itself
    /// where the question names a player.
    async fn querier(&self, request_metadata: &tonic::metadata::MetadataMap) -> ManagerResult<Caller> {
        self.auth.caller(request_metadata).await
    }

    /// What follows the commit that started a league: its first round and event are announced to
    /// the waiting referees and to event delivery.
    fn league_started(&self) {
        self.wakeups.matches_ready.notify_waiters();
        self.wakeups.events_pending.notify_one();
    }

    /// A pooled connection and the league a request's `league_id` names (empty: the newest), for a
    /// query.
    async fn league_connection(
        &self,
        league_id: &str,
    ) -> ManagerResult<(PoolConnection<Postgres>, LeagueId)> {
        let league_id = ids::optional("league_id", league_id)?;
        let mut conn = self.pool.acquire().await?;
        let league_id = queries::resolve_league(&mut conn, league_id).await?;
        Ok((conn, league_id))
    }
}

fn timing_from(proto: Option<MatchTiming>, defaults: Timing) -> ManagerResult<Timing> {
    let Some(proto) = proto else { return Ok(defaults) };
    let convert = |value: Option<prost_types::Duration>, default: Duration| -> ManagerResult<Duration> {
        match value {
            None => Ok(default),
            Some(value) => Duration::try_from(value).map_err(|_| {
                reject(
                    ErrorCode::InvalidMessageFormat,
                    "timings must be positive durations",
                )
            }),
        }
    };
    Ok(Timing {
        join_timeout: convert(proto.join_timeout, defaults.join_timeout)?,
        move_timeout: convert(proto.move_timeout, defaults.move_timeout)?,
        game_over_timeout: convert(proto.game_over_timeout, defaults.game_over_timeout)?,
        max_attempts: if proto.max_attempts == 0 {
            defaults.max_attempts
        } else {
            proto.max_attempts
        },
        retry_delay: convert(proto.retry_delay, defaults.retry_delay)?,
        lease_duration: convert(proto.lease_duration, defaults.lease_duration)?,
    })
}

impl Manager {
    /// A registration that carries an agent's credentials resumes that agent (see [`resume`]): the
    /// agent's id (`id_of` the caller, who must be an agent of that `kind`) and its token, once checked;
    /// `None` for a first registration (no credentials).
    async fn resuming<Id>(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        kind: AgentKind,
        id_of: fn(Caller) -> Option<Id>,
    ) -> ManagerResult<Option<(Id, secrecy::SecretString)>> {
        if metadata.get(league_runtime::credentials::AGENT_ID_KEY).is_none() {
            return Ok(None);
        }
        let Some(agent_id) = id_of(self.auth.caller(metadata).await?) else {
            return Err(reject(
                ErrorCode::PermissionDenied,
                format!("only a {} resumes as a {}", kind.as_str(), kind.as_str()),
            ));
        };
        let presented = league_runtime::credentials::from_metadata(metadata)?;
        Ok(Some((agent_id, presented.token)))
    }
}

#[tonic::async_trait]
impl ManagerService for Manager {
    async fn register_referee(
        &self,
        request: Request<RegisterRefereeRequest>,
    ) -> Result<Response<RegisterRefereeResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            let resuming = this.resuming(request.metadata(), AgentKind::Referee, Caller::into_referee);
            let registered = match resuming.await? {
                Some((referee_id, token)) => {
                    resume::resume_referee(&this.pool, &this.rules, referee_id, token, request.into_inner())
                        .await?
                }
                None => {
                    let presented = league_runtime::credentials::bearer_token(request.metadata()).ok();
                    this.rules.referee_admission.check(presented.as_ref())?;
                    registration::register_referee(&this.pool, &this.rules, request.into_inner()).await?
                }
            };
            Ok(Response::new(RegisterRefereeResponse {
                referee_id: registered.referee_id.into(),
                auth_token: registered.token.expose_secret().to_owned(),
                // No league of its games is going: proto3's empty string says so.
                league_id: registered.league_id.map(String::from).unwrap_or_default(),
            }))
        })
        .await
    }

    async fn register_player(
        &self,
        request: Request<RegisterPlayerRequest>,
    ) -> Result<Response<RegisterPlayerResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            let requested = ids::optional("league_id", &request.get_ref().league_id)?;
            let resuming = this.resuming(request.metadata(), AgentKind::Player, Caller::into_player);
            let registered = match resuming.await? {
                Some((player_id, token)) => {
                    let request = request.into_inner();
                    resume::resume_player(&this.pool, &this.rules, player_id, token, requested, request.meta)
                        .await?
                }
                None => {
                    registration::register_player(
                        &this.pool,
                        &this.rules,
                        requested,
                        request.into_inner().meta,
                    )
                    .await?
                }
            };
            if registered.started {
                this.league_started();
            }
            Ok(Response::new(RegisterPlayerResponse {
                player_id: registered.player_id.into(),
                auth_token: registered.token.expose_secret().to_owned(),
                league_id: registered.league_id.into(),
            }))
        })
        .await
    }

    async fn create_league(
        &self,
        request: Request<CreateLeagueRequest>,
    ) -> Result<Response<CreateLeagueResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let request = request.into_inner();
            let league_id: LeagueId = match ids::optional("league_id", &request.league_id)? {
                Some(league_id) => league_id,
                None => ids::stored(
                    "a new league's id",
                    &format!("league_{:08x}", rand::random::<u32>()),
                )?,
            };
            let league = start::NewLeague {
                league_id: league_id.clone(),
                game_type: game_type(&request.game_type)?,
                timing: timing_from(request.timing, this.default_timing)?,
                auto_start_players: request.auto_start_players,
                cycles: request.cycles.max(1),
                max_players: (request.max_players > 0).then_some(request.max_players),
            };
            if let Some(max) = league.max_players
                && !(2..=this.rules.max_players).contains(&max)
            {
                return Err(reject(
                    ErrorCode::InvalidMessageFormat,
                    format!(
                        "max_players must be from 2 to the deployment's limit of {}, got {max}",
                        this.rules.max_players
                    ),
                )
                .into());
            }
            start::create(&this.pool, &league).await?;
            Ok(Response::new(CreateLeagueResponse {
                league_id: league_id.into(),
            }))
        })
        .await
    }

    async fn start_league(
        &self,
        request: Request<StartLeagueRequest>,
    ) -> Result<Response<StartLeagueResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let (_, league_id) = this.league_connection(&request.get_ref().league_id).await?;
            let started = start::start(&this.pool, &league_id).await?;
            this.league_started();
            Ok(Response::new(StartLeagueResponse {
                league_id: league_id.into(),
                total_rounds: started.total_rounds,
                total_matches: started.total_matches,
            }))
        })
        .await
    }

    async fn enroll_player(
        &self,
        request: Request<EnrollPlayerRequest>,
    ) -> Result<Response<EnrollPlayerResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let request = request.into_inner();
            let league_id: LeagueId = ids::required("league_id", &request.league_id)?;
            let player_id: PlayerId = ids::required("player_id", &request.player_id)?;
            let enrollment =
                enrollment::enroll_registered(&this.pool, this.rules.max_players, &league_id, &player_id)
                    .await?;
            if enrollment.started {
                this.league_started();
            }
            Ok(Response::new(EnrollPlayerResponse {
                league_id: enrollment.league_id.into(),
                player_id: player_id.into(),
                enrolled: enrollment.enrolled,
                started: enrollment.started,
            }))
        })
        .await
    }

    async fn claim_matches(
        &self,
        request: Request<ClaimMatchesRequest>,
    ) -> Result<Response<ClaimMatchesResponse>, Status> {
        let referee_id = self.auth.referee(request.metadata()).await?;
        let request = request.into_inner();
        let max = request.max_matches.clamp(1, MAX_CLAIM_BATCH);
        // No wait given: the claim answers at once.
        let wait = match request.wait {
            None => Duration::ZERO,
            Some(wait) => Duration::try_from(wait).map_err(|_| {
                reject(
                    ErrorCode::InvalidMessageFormat,
                    "wait must be a duration of zero or more",
                )
            })?,
        }
        .min(MAX_CLAIM_WAIT);
        let assignments = queue::claim(&self.claims, &self.wakeups, &referee_id, max, wait).await?;
        Ok(Response::new(ClaimMatchesResponse { assignments }))
    }

    async fn renew_leases(
        &self,
        request: Request<RenewLeasesRequest>,
    ) -> Result<Response<RenewLeasesResponse>, Status> {
        let referee_id = self.auth.referee(request.metadata()).await?;
        let request = request.get_ref();
        let leases = Lease::parse_all(&request.leases)?;
        let renewals = queue::renew(&self.pool, &referee_id, &leases, request.players_called).await?;
        Ok(Response::new(RenewLeasesResponse { renewals }))
    }

    /// Served by [`Manager::report`] through crate::report_route, which keeps the transcript as bytes;
    /// here for whoever calls the service directly.
    async fn report_match_result(
        &self,
        request: Request<ReportMatchResultRequest>,
    ) -> Result<Response<ReportMatchResultResponse>, Status> {
        let (metadata, extensions, request) = request.into_parts();
        let request = ReportMatchResultBytes::from(request);
        self.report(Request::from_parts(metadata, extensions, request))
            .await
    }

    async fn report_match_results(
        &self,
        request: Request<ReportMatchResultsRequest>,
    ) -> Result<Response<ReportMatchResultsResponse>, Status> {
        let (metadata, extensions, request) = request.into_parts();
        let request = ReportMatchResultsBytes::from(request);
        self.report_all(Request::from_parts(metadata, extensions, request))
            .await
    }

    async fn get_standings(
        &self,
        request: Request<GetStandingsRequest>,
    ) -> Result<Response<GetStandingsResponse>, Status> {
        self.querier(request.metadata()).await?;
        let (mut conn, league_id) = self.league_connection(&request.get_ref().league_id).await?;
        let standings = table::standings(&mut conn, &league_id).await?;
        let round_id = queries::last_completed_round(&mut conn, &league_id).await?;
        Ok(Response::new(GetStandingsResponse {
            league_id: league_id.into(),
            round_id,
            standings,
        }))
    }

    async fn get_schedule(
        &self,
        request: Request<GetScheduleRequest>,
    ) -> Result<Response<GetScheduleResponse>, Status> {
        self.querier(request.metadata()).await?;
        let request = request.into_inner();
        let (mut conn, league_id) = self.league_connection(&request.league_id).await?;
        let (rounds, next_round_id) =
            history::schedule_page(&mut conn, &league_id, request.first_round_id, request.max_matches)
                .await?;
        Ok(Response::new(GetScheduleResponse {
            league_id: league_id.into(),
            rounds,
            next_round_id,
        }))
    }

    async fn get_standings_by_round(
        &self,
        request: Request<GetStandingsByRoundRequest>,
    ) -> Result<Response<GetStandingsByRoundResponse>, Status> {
        self.querier(request.metadata()).await?;
        let request = request.into_inner();
        let (mut conn, league_id) = self.league_connection(&request.league_id).await?;
        let (rounds, next_round_id) =
            history::standings_by_round(&mut conn, &league_id, request.first_round_id, request.max_rounds)
                .await?;
        Ok(Response::new(GetStandingsByRoundResponse {
            league_id: league_id.into(),
            rounds,
            next_round_id,
        }))
    }

    async fn list_leagues(
        &self,
        request: Request<ListLeaguesRequest>,
    ) -> Result<Response<ListLeaguesResponse>, Status> {
        self.querier(request.metadata()).await?;
        let request = request.into_inner();
        let mut conn = self.pool.acquire().await.map_err(ManagerError::from)?;
        Ok(Response::new(
            history::list_leagues(&mut conn, request.page_size, &request.page_token).await?,
        ))
    }

    async fn get_next_match(
        &self,
        request: Request<GetNextMatchRequest>,
    ) -> Result<Response<GetNextMatchResponse>, Status> {
        let caller = self.querier(request.metadata()).await?;
        let request = request.into_inner();
        let player_id = ids::required("player_id", &request.player_id)?;
        only_about_self(&caller, &player_id)?;
        let (mut conn, league_id) = self.league_connection(&request.league_id).await?;
        let found = queries::next_match(&mut conn, &league_id, &player_id).await?;
        Ok(Response::new(GetNextMatchResponse { r#match: found }))
    }

    async fn get_player_stats(
        &self,
        request: Request<GetPlayerStatsRequest>,
    ) -> Result<Response<GetPlayerStatsResponse>, Status> {
        self.querier(request.metadata()).await?;
        let request = request.into_inner();
        let player_id = ids::required("player_id", &request.player_id)?;
        let (mut conn, league_id) = self.league_connection(&request.league_id).await?;
        Ok(Response::new(
            queries::player_stats(&mut conn, &league_id, &player_id).await?,
        ))
    }

    async fn get_match(
        &self,
        request: Request<GetMatchRequest>,
    ) -> Result<Response<GetMatchResponse>, Status> {
        self.querier(request.metadata()).await?;
        let request = request.into_inner();
        let match_id: MatchId = ids::required("match_id", &request.match_id)?;
        let (mut conn, league_id) = self.league_connection(&request.league_id).await?;
        Ok(Response::new(
            queries::match_detail(&mut conn, &league_id, match_id).await?,
        ))
    }

    async fn get_league_status(
        &self,
        request: Request<GetLeagueStatusRequest>,
    ) -> Result<Response<GetLeagueStatusResponse>, Status> {
        self.querier(request.metadata()).await?;
        let (mut conn, league_id) = self.league_connection(&request.get_ref().league_id).await?;
        Ok(Response::new(status::league_status(&mut conn, &league_id).await?))
    }

    async fn release_leases(
        &self,
        request: Request<ReleaseLeasesRequest>,
    ) -> Result<Response<ReleaseLeasesResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            let referee_id = this.auth.referee(request.metadata()).await?;
            let request = request.get_ref();
            let leases = Lease::parse_all(&request.leases)?;
            let released = crate::league::release::release(
                &this.pool,
                &referee_id,
                &leases,
                request.unless_players_called,
                request.refused,
            )
            .await?;
            if !released.is_empty() {
                this.wakeups.matches_ready.notify_waiters();
            }
            Ok(Response::new(ReleaseLeasesResponse { released }))
        })
        .await
    }

    async fn pause_league(
        &self,
        request: Request<PauseLeagueRequest>,
    ) -> Result<Response<PauseLeagueResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let league_id = ids::required("league_id", &request.get_ref().league_id)?;
            Ok(Response::new(lifecycle::pause(&this.pool, &league_id).await?))
        })
        .await
    }

    async fn resume_league(
        &self,
        request: Request<ResumeLeagueRequest>,
    ) -> Result<Response<ResumeLeagueResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let league_id = ids::required("league_id", &request.get_ref().league_id)?;
            lifecycle::resume(&this.pool, &this.wakeups, &league_id).await?;
            Ok(Response::new(ResumeLeagueResponse {
                league_id: league_id.into(),
            }))
        })
        .await
    }

    async fn cancel_league(
        &self,
        request: Request<CancelLeagueRequest>,
    ) -> Result<Response<CancelLeagueResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let league_id = ids::required("league_id", &request.get_ref().league_id)?;
            Ok(Response::new(lifecycle::cancel(&this.pool, &league_id).await?))
        })
        .await
    }

    async fn withdraw_player(
        &self,
        request: Request<WithdrawPlayerRequest>,
    ) -> Result<Response<WithdrawPlayerResponse>, Status> {
        let this = self.clone();
        run_to_end(async move {
            this.auth.operator(request.metadata()).await?;
            let league_id = ids::required("league_id", &request.get_ref().league_id)?;
            let player_id = ids::required("player_id", &request.get_ref().player_id)?;
            let withdrawn =
                withdrawal::withdraw(&this.pool, &this.wakeups.waiting_claims, &league_id, &player_id)
                    .await?;
            // A forfeit may have completed a round: its successor's matches and events are ready.
            this.wakeups.matches_ready.notify_waiters();
            Ok(Response::new(WithdrawPlayerResponse {
                league_id: league_id.into(),
                player_id: player_id.into(),
                forfeits: withdrawn.forfeits,
            }))
        })
        .await
    }
}

/// Runs a call that writes to the database to its end in a task of its own. A client that stops
/// waiting (its deadline passes, it disconnects) makes tonic drop the call's future, and sqlx 0.8's
/// `begin` is not cancel-safe: a BEGIN cancelled in flight leaves a pooled connection inside a
/// transaction that later borrowers' statements join and that is then silently thrown away — a round
/// completion or a registration lost without an error. So a call's transaction is never cut short: the
/// client may go, the work finishes.
async fn run_to_end<T: Send + 'static>(
    call: impl Future<Output = Result<T, Status>> + Send + 'static,
) -> Result<T, Status> {
    // The call's span goes with it: its fields and child spans stay in the caller's trace.
    tokio::spawn(tracing::Instrument::in_current_span(call))
        .await
        .map_err(|error| {
            tracing::error!(%error, "a call's task failed");
            Status::internal("internal error")
        })?
}

/// The game a new league plays: E003 when none is named, E010 for a game no referee runs.
fn game_type(name: &str) -> ManagerResult<GameType> {
    if name.is_empty() {
        return Err(reject(ErrorCode::MissingRequiredField, "game_type is required"));
    }
    GameType::known(name).map_err(|unknown| reject(ErrorCode::UnsupportedGameType, unknown.to_string()))
}

/// GET_NEXT_MATCH names a player: a player may ask only about itself.
fn only_about_self(caller: &Caller, player_id: &PlayerId) -> ManagerResult<()> {
    match caller {
        Caller::Player(caller_id) if caller_id != player_id => Err(reject(
            ErrorCode::PermissionDenied,
            "a player may only ask about its own matches",
        )),
        _ => Ok(()),
    }
}
