//! The standings this gateway answers GET_STANDINGS (and greetings) from: the manager's table with its
//! league.v2 JSON built and serialized once per fetch, shared for at most
//! [`STANDINGS_MAX_AGE`](league_manager_link::STANDINGS_MAX_AGE) (league_manager_link::StandingsCache
//! says what that bound guarantees), so thousands of queries a second cost the manager one query per
//! league per bound.

use std::sync::Arc;

use league_domain::LeagueId;
use league_manager_link::league_status::to_league_error;
use league_proto::v2::GetStandingsResponse;
use league_v2::convert;
use league_v2::league_error::LeagueResult;
use league_v2::shared_json::SharedJson;
use serde_json::json;

use super::Inbound;

/// A league's standings as fetched: the manager's answer and the league.v2 JSON of it (the
/// LEAGUE_QUERY_RESPONSE's `data`), built and serialized once per fetch rather than once per query.
#[derive(Debug)]
pub(crate) struct Standings {
    pub(crate) response: GetStandingsResponse,
    pub(crate) data: SharedJson,
}

impl Standings {
    pub(crate) fn new(response: GetStandingsResponse) -> Self {
        let data = json!({
            "league_id": response.league_id,
            "round_id": response.round_id,
            "standings": convert::standings(&response.standings),
        });
        Self {
            response,
            data: SharedJson::new(data),
        }
    }
}

impl Inbound {
    /// The standings of `league_id` (`None`: the newest league), from the gateway's cache. The same for
    /// every caller the league lets ask: authenticate the caller first.
    pub(crate) async fn standings(&self, league_id: Option<&LeagueId>) -> LeagueResult<Arc<Standings>> {
        let fetch = || {
            let (link, league_id) = (self.manager_link.clone(), league_id.cloned());
            async move {
                Ok(Arc::new(Standings::new(
                    link.standings(league_id.as_ref()).await?,
                )))
            }
        };
        self.standings
            .get(league_id, fetch)
            .await
            .map_err(to_league_error)
    }

    /// Forgets the cached standings, after a change this gateway made (a registration adds a row, a
    /// report changes points): whoever asks this gateway next sees it at once.
    pub(crate) fn forget_standings(&self) {
        self.standings.clear();
    }
}
