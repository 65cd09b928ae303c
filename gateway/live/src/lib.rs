//! The live league page: `GET /` (the newest league) and `/leagues/<id>` show the table updating as
//! results arrive, the round progress, each round's matches with their transcripts, and the standings
//! progression chart — read-only, for anyone to watch.
//!
//! - [`routes`]: the page, its assets and the read-only JSON API under `/api/leagues`;
//! - [`watch`]: one watcher per watched league, whose snapshot every viewer's event stream shares;
//! - [`view`]: what the page may show of a league, fetched from the manager and made plain JSON;
//! - [`rounds`]: completed rounds, fetched once;
//! - [`roster`]: the players registered on the system, as `league players` lists them (public facts only);
//! - [`assets`]: the HTML, JavaScript and CSS, embedded in the binary;
//! - [`metrics`]: viewers, and snapshots fetched for them.
//!
//! Safe to expose: every route is a GET that reads; the gateway asks the manager with its own operator
//! credential and passes on only public facts (no token, endpoint or lease); responses and viewers are
//! bounded; each response carries a strict Content-Security-Policy.

mod assets;
mod metrics;
mod roster;
mod rounds;
mod routes;
mod view;
mod warnings;
mod watch;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use league_domain::LeagueId;
use league_manager_link::{ManagerLink, StandingsCache};
use league_proto::v2::GetStandingsResponse;
use league_runtime::ShutdownSignal;
use league_runtime::fair_share::FairShare;

/// Event streams one gateway serves at once (each holds a connection; more viewers want more
/// replicas), shared fairly among addresses (league_runtime::fair_share): with all taken, the address holding
/// the most gives up its oldest stream to a newcomer.
pub(crate) const MAX_VIEWERS: usize = 256;
/// Event streams one address may hold.
pub(crate) const MAX_VIEWERS_PER_ADDRESS: usize = MAX_VIEWERS / 4;

/// How long an answer from the manager may take before the page is told the league is unreachable.
pub(crate) const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);

/// A call to the manager, bounded by [`UPSTREAM_TIMEOUT`].
pub(crate) async fn bounded<T>(
    call: impl Future<Output = Result<T, tonic::Status>>,
) -> Result<T, tonic::Status> {
    tokio::time::timeout(UPSTREAM_TIMEOUT, call)
        .await
        .unwrap_or_else(|_| {
            Err(tonic::Status::deadline_exceeded(
                "the league did not answer in time",
            ))
        })
}

/// The page's shared state in one gateway: the link to the manager, the completed rounds it has seen,
/// and the watchers of the leagues someone is watching.
#[derive(Debug)]
pub(crate) struct Live {
    manager_link: ManagerLink,
    rounds: rounds::CompletedRounds,
    watched: watch::Watched,
    viewers: FairShare,
    /// The leagues' standings, shared for at most
    /// [`STANDINGS_MAX_AGE`](league_manager_link::STANDINGS_MAX_AGE).
    standings: StandingsCache<Arc<GetStandingsResponse>>,
    /// Snapshots answered to `GET /api/leagues/<id>`, shared for [`watch::WATCH_INTERVAL`].
    snapshots: StandingsCache<Arc<serde_json::Value>>,
    /// The roster answered to `GET /api/players`, shared for [`roster::ROSTER_MAX_AGE`].
    roster: StandingsCache<Arc<serde_json::Value>>,
    shutdown: ShutdownSignal,
}

impl Live {
    pub(crate) fn new(manager_link: ManagerLink, shutdown: ShutdownSignal) -> Arc<Self> {
        // Registered at start, so that /metrics shows them before the first viewer.
        std::sync::LazyLock::force(&metrics::VIEWERS);
        std::sync::LazyLock::force(&metrics::SNAPSHOTS);
        std::sync::LazyLock::force(&metrics::POLLS);
        Arc::new(Self {
            manager_link,
            rounds: rounds::CompletedRounds::default(),
            watched: watch::Watched::default(),
            viewers: FairShare::new(MAX_VIEWERS, MAX_VIEWERS_PER_ADDRESS),
            standings: StandingsCache::default(),
            snapshots: StandingsCache::new(watch::WATCH_INTERVAL),
            roster: StandingsCache::new(roster::ROSTER_MAX_AGE),
            shutdown,
        })
    }
}

impl Live {
    /// The standings of `league_id`, shared among the page's requests and watchers.
    pub(crate) async fn standings(
        &self,
        league_id: &LeagueId,
    ) -> Result<Arc<GetStandingsResponse>, tonic::Status> {
        let fetch = || {
            let (link, league_id) = (self.manager_link.clone(), league_id.clone());
            async move { Ok(Arc::new(link.standings(Some(&league_id)).await?)) }
        };
        self.standings.get(Some(league_id), fetch).await
    }
}

/// The page's routes, to merge into the gateway's router. Event streams end when `shutdown` fires, so
/// they never hold up a graceful stop.
pub fn router(manager_link: ManagerLink, shutdown: ShutdownSignal) -> Router {
    routes::router(Live::new(manager_link, shutdown))
}
