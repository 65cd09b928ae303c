//! External referees. A referee that registered through the gateway runs matches as ours do, but in
//! league.v2: the gateway claims matches for it and sends each as START_MATCH ([`claims`], [`push`]),
//! or hands them out when the referee asks (`get_assigned_matches`, [`pull`]), keeps the match's lease
//! while it plays ([`lease`]), lets it reach our players — bots or external — on per-player paths
//! `/mcp/players/<id>` ([`to_player`]), and takes its MATCH_RESULT_REPORT to the manager ([`report`])
//! once it follows from what the players answered ([`answers`]), with the match's transcript as this
//! replica relayed it ([`relayed`]).
//!
//! The API is [`Referees`]: built with the manager link and the bridge ([`RefereeAgents`], how the
//! league speaks to a referee), it runs the claimers ([`Referees::run_claimers`]) and answers a
//! referee's calls, which the gateway authenticates first ([`Referee`], [`Puller`]).
//!
//! Any replica can serve a referee's calls to players and its report (the match and its players come
//! from the manager; the report names no lease, and the manager takes it from the referee that holds the
//! match's lease). One thing is kept per replica: what it relayed of a match ([`relayed`]), so a report
//! through another replica carries only what that one saw (docs/protocol.md, "External referees").

mod agents;
mod answers;
mod claims;
mod lease;
mod pull;
mod push;
mod refusals;
mod relayed;
mod report;
mod to_player;

pub use agents::{RefereeAgents, Unanswered};
pub use pull::{Puller, named_referee};
pub use refusals::{BENCH_AFTER, Standing};

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use league_domain::{Assignment, LeagueId, MatchId, PlayerId, RefereeId, Timing};
use league_manager_link::ManagerLink;
use league_proto::ErrorCode;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{GetAgentRequest, GetMatchRequest, MatchAssignment, MatchStatus, ScheduledMatch};
use league_runtime::ShutdownSignal;
use league_runtime::grpc::{self, GrpcChannel};
use tokio::sync::Notify;

use league_v2::ids;
use league_v2::league_error::{LeagueError, LeagueResult};

use league_manager_link::league_status::to_league_error;

/// How long a match's facts (players, referee) are kept without asking the manager again.
const MATCH_TTL: Duration = Duration::from_secs(30);
/// Bounds on the caches: an entry is small, but agents choose the ids they ask about.
const MAX_CACHED: usize = 10_000;

/// A referee the gateway authenticated (its token, of a referee), as its calls reach the worker.
#[derive(Debug, Clone)]
pub struct Referee {
    pub referee_id: RefereeId,
    /// What it authenticated with: its report goes to the manager with its own credentials.
    pub token: String,
    /// The call's `conversation_id` (empty without one), echoed in the answer.
    pub conversation_id: String,
}

/// A match as an external referee's calls need it.
#[derive(Debug, Clone, PartialEq)]
struct RefereedMatch {
    league_id: LeagueId,
    match_id: MatchId,
    round_id: u32,
    game_type: String,
    player_a: PlayerId,
    player_b: PlayerId,
    /// The referee holding the match's lease; `None` when nobody does.
    referee_id: Option<RefereeId>,
    running: bool,
    /// The league's timings, which bound the referee's calls to players.
    timing: Timing,
}

/// (league, match): one match, as the caches know it.
type MatchKey = (LeagueId, MatchId);

impl RefereedMatch {
    /// The match as the manager describes it, its ids parsed (the manager writes them under the league's
    /// grammars: one that does not parse is an internal fault, E000).
    fn read(scheduled: ScheduledMatch, timing: Timing) -> LeagueResult<Self> {
        let referee_id = match scheduled.referee_id.as_str() {
            "" => None,
            referee_id => Some(ids::answered("referee_id", referee_id)?),
        };
        Ok(RefereedMatch {
            league_id: ids::answered("league_id", &scheduled.league_id)?,
            match_id: ids::answered("match_id", &scheduled.match_id)?,
            round_id: scheduled.round_id,
            player_a: ids::answered("player_a_id", &scheduled.player_a_id)?,
            player_b: ids::answered("player_b_id", &scheduled.player_b_id)?,
            referee_id,
            running: scheduled.status == MatchStatus::Running as i32,
            game_type: scheduled.game_type,
            timing,
        })
    }

    /// A match just claimed for `referee_id`: running, under its lease.
    fn assigned(assignment: &Assignment, referee_id: &RefereeId) -> Self {
        let [player_a, player_b] = assignment.player_ids().clone();
        RefereedMatch {
            league_id: assignment.league_id().clone(),
            match_id: assignment.match_id(),
            round_id: assignment.scheduled.round_id,
            game_type: assignment.game_type().to_owned(),
            player_a,
            player_b,
            referee_id: Some(referee_id.clone()),
            running: true,
            timing: assignment.timing,
        }
    }

    fn key(&self) -> MatchKey {
        (self.league_id.clone(), self.match_id)
    }

    /// Whether `referee_id` runs the match now: it is running, under that referee's lease.
    fn run_by(&self, referee_id: &RefereeId) -> bool {
        self.running && self.referee_id.as_ref() == Some(referee_id)
    }

    /// The other player of the match, when `player` is in it.
    fn opponent(&self, player: &PlayerId) -> Option<&PlayerId> {
        if *player == self.player_a {
            Some(&self.player_b)
        } else if *player == self.player_b {
            Some(&self.player_a)
        } else {
            None
        }
    }
}

/// The external-referee worker of one gateway replica.
#[derive(Debug)]
pub struct Referees {
    manager_link: ManagerLink,
    /// How the league speaks to a referee: START_MATCH, its sender form (the gateway's bridge).
    agents: Arc<dyn RefereeAgents>,
    /// This gateway's `/mcp`: players' paths are under it, and reports come to it.
    public_url: String,
    matches: Mutex<HashMap<MatchKey, (RefereedMatch, Instant)>>,
    /// Player id → its service endpoint and `PlayerService` client.
    players: Mutex<HashMap<PlayerId, (String, PlayerServiceClient<GrpcChannel>)>>,
    /// Matches whose START_MATCH this replica sent, woken when their report arrives here.
    reported: Mutex<HashMap<MatchKey, Arc<Notify>>>,
    /// (league, match, referee) whose first call to a player through this replica was noted at the
    /// manager ([`lease`]).
    called: Mutex<HashSet<relayed::RefereesMatch>>,
    /// Each match's transcript as this replica relayed its calls and its players' answers
    /// ([`relayed`]): reported with the result, which is checked against the answers in it.
    relayed: Mutex<HashMap<relayed::RefereesMatch, relayed::Relayed>>,
    /// Wakes the claimers' discovery at once (a referee just registered here).
    discover: Notify,
    /// The external referees this replica runs a claimer for.
    claimers: Mutex<HashSet<RefereeId>>,
    /// Referees that take matches by pulling them (`get_assigned_matches`): nothing is pushed to them.
    pulling: Mutex<HashSet<RefereeId>>,
    /// The gateway's shutdown, which ends the lease keepers of pulled matches too.
    shutdown: OnceLock<ShutdownSignal>,
    /// Refusals of referees' calls to players, and the matches given back for them ([`refusals`]).
    refusals: refusals::Refusals,
}

impl Referees {
    pub fn new(manager_link: ManagerLink, agents: Arc<dyn RefereeAgents>, public_url: String) -> Self {
        Self {
            manager_link,
            agents,
            public_url,
            matches: Mutex::default(),
            players: Mutex::default(),
            reported: Mutex::default(),
            called: Mutex::default(),
            relayed: Mutex::default(),
            discover: Notify::new(),
            claimers: Mutex::default(),
            pulling: Mutex::default(),
            shutdown: OnceLock::new(),
            refusals: refusals::Refusals::default(),
        }
    }

    /// Where an external referee reaches `player_id`.
    fn player_url(&self, player_id: &PlayerId) -> String {
        format!("{}/players/{player_id}", self.public_url)
    }

    /// A match's players and referee: from the cache while it is fresh and the match was running, else
    /// from the manager.
    async fn refereed_match(
        &self,
        league_id: Option<&LeagueId>,
        match_id: MatchId,
    ) -> LeagueResult<RefereedMatch> {
        // A match of the current league (`None`) is cached under its league, which only the manager knows.
        let cached = league_id.and_then(|league_id| {
            lock(&self.matches)
                .get(&(league_id.clone(), match_id))
                .filter(|(found, at)| found.running && at.elapsed() < MATCH_TTL)
                .map(|(found, _)| found.clone())
        });
        if let Some(found) = cached {
            return Ok(found);
        }
        let detail = self
            .manager_link
            .manager
            .clone()
            .get_match(self.manager_link.as_operator(GetMatchRequest {
                league_id: league_manager_link::named(league_id),
                match_id: match_id.to_string(),
            }))
            .await
            .map_err(to_league_error)?
            .into_inner();
        let scheduled = detail
            .r#match
            .ok_or_else(|| LeagueError::new(ErrorCode::MatchNotFound, format!("no match {match_id}")))?;
        let found = RefereedMatch::read(scheduled, Timing::from_proto(detail.timing.as_ref()))?;
        self.remember_match(found.clone());
        Ok(found)
    }

    /// The league of match `match_id` that `referee_id` runs, for a call that names no league (`"league_id":
    /// null`): a match this replica handed to the referee, else (`None`) the current league's.
    fn league_of(&self, match_id: MatchId, referee_id: &RefereeId) -> Option<LeagueId> {
        lock(&self.matches)
            .values()
            .find(|(found, _)| found.match_id == match_id && found.run_by(referee_id))
            .map(|(found, _)| found.league_id.clone())
    }

    fn remember_match(&self, found: RefereedMatch) {
        let mut matches = lock(&self.matches);
        if matches.len() >= MAX_CACHED {
            matches.retain(|_, (_, at)| at.elapsed() < MATCH_TTL);
            if matches.len() >= MAX_CACHED {
                matches.clear();
            }
        }
        matches.insert(found.key(), (found, Instant::now()));
    }

    /// The match is over: its facts may change (it is no longer running) and its lease keeper, if here,
    /// can stop.
    fn match_reported(&self, league_id: &LeagueId, match_id: MatchId) {
        let key = (league_id.clone(), match_id);
        lock(&self.matches).remove(&key);
        lock(&self.called).retain(|(league, id, _)| *league != key.0 || *id != key.1);
        self.forget_relayed(league_id, match_id);
        if let Some(notify) = lock(&self.reported).get(&key) {
            notify.notify_one();
        }
    }

    /// The `PlayerService` serving `player_id` (a player host for bots, a gateway for external players).
    async fn player(&self, player_id: &PlayerId) -> LeagueResult<PlayerServiceClient<GrpcChannel>> {
        if let Some((_, client)) = lock(&self.players).get(player_id) {
            return Ok(client.clone());
        }
        let agent = self
            .manager_link
            .agents
            .clone()
            .get_agent(self.manager_link.as_operator(GetAgentRequest {
                agent_id: player_id.to_string(),
            }))
            .await
            .map_err(to_league_error)?
            .into_inner()
            .agent
            .ok_or_else(|| {
                LeagueError::new(ErrorCode::PlayerNotRegistered, format!("no player {player_id}"))
            })?;
        // A player with no service endpoint fails below, as one that cannot be reached.
        let endpoint = agent.meta.map(|meta| meta.service_endpoint).unwrap_or_default();
        // Players served by one host share its channel (one HTTP/2 connection).
        let shared = lock(&self.players)
            .values()
            .find(|(served_at, _)| *served_at == endpoint)
            .map(|(_, client)| client.clone());
        let client = match shared {
            Some(client) => client,
            None => PlayerServiceClient::new(grpc::channel(&endpoint).map_err(|error| {
                LeagueError::new(
                    ErrorCode::ConnectionError,
                    format!("{player_id} cannot be reached: {error}"),
                )
            })?),
        };
        let mut players = lock(&self.players);
        if players.len() >= MAX_CACHED {
            players.clear();
        }
        players.insert(player_id.clone(), (endpoint, client.clone()));
        Ok(client)
    }

    /// The gateway's shutdown signal, once the claimers run.
    fn shutdown(&self) -> Option<ShutdownSignal> {
        self.shutdown.get().cloned()
    }

    /// A referee registered through this replica: look for new referees now rather than at the next
    /// discovery tick.
    pub fn referee_registered(&self) {
        self.discover.notify_one();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An assignment from the manager, parsed; one that cannot be played is logged and left to expire (the
/// manager never sends one: this guards against a manager of another version).
fn parse(assignment: MatchAssignment) -> Option<Assignment> {
    Assignment::try_from(assignment)
        .inspect_err(|error| tracing::error!(%error, "cannot hand out this assignment; leaving it to expire"))
        .ok()
}
