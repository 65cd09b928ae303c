//! The roster as the live page shows it: every player registered on the system — the players
//! `league players` lists — with its display name, its strategy (a bot's) or `external`, and the
//! leagues it plays in (the newest leagues the page offers, oldest first). Anonymous viewers read it, so
//! it carries those public facts only: never a contact endpoint, a token or an address.
//!
//! One answer is shared by the requests of a moment, so it may describe the system up to [`LAG`] before
//! it was asked; it says so (`lag_ms`), and the page asks once more that long after it saw a change, so
//! the last registration is always shown however the page's requests fall against the cache.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use league_domain::LeagueId;
use league_manager_link::STANDINGS_MAX_AGE;
use league_player::bot_name::strategy_of_player;
use league_proto::v2::{AgentKind, ListAgentsRequest};
use serde_json::{Value, json};

use super::{Live, view};

/// The most players the page lists (in the manager's order); `total` says how many there are.
const SHOWN: usize = 1000;
/// How long the roster may run behind its request: its own sharing, then the standings' that tell each
/// player's leagues.
pub(crate) const ROSTER_MAX_AGE: Duration = super::watch::WATCH_INTERVAL;
const LAG: Duration = ROSTER_MAX_AGE.saturating_add(STANDINGS_MAX_AGE);

impl Live {
    /// The roster, shared by the requests of [`ROSTER_MAX_AGE`]: one answer asks the manager once per league.
    pub(crate) async fn roster(self: &Arc<Self>) -> Result<Arc<Value>, tonic::Status> {
        let fetch = {
            let live = self.clone();
            || async move { Ok(Arc::new(roster(&live).await?)) }
        };
        self.roster.get(None, fetch).await
    }
}

async fn roster(live: &Live) -> Result<Value, tonic::Status> {
    let request = live.manager_link.as_operator(ListAgentsRequest {
        kind: AgentKind::Player as i32,
        label: String::new(),
        // As `league players`: a revoked player still stands in its leagues' tables.
        include_revoked: true,
    });
    let agents = live
        .manager_link
        .agents
        .clone()
        .list_agents(request)
        .await?
        .into_inner()
        .agents;
    let mut playing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Oldest first, so that each player's leagues read in the order it joined them.
    for league in view::leagues(&live.manager_link).await?.iter().rev() {
        // Parsed where it enters: the manager names its leagues under the grammar.
        let league_id = LeagueId::parse(&league.league_id)
            .map_err(|error| tonic::Status::internal(format!("the manager answered league_id {error}")))?;
        for row in &live.standings(&league_id).await?.standings {
            playing
                .entry(row.player_id.clone())
                .or_default()
                .push(league.league_id.clone());
        }
    }
    let total = agents.len();
    let players: Vec<Value> = agents
        .into_iter()
        .take(SHOWN)
        .map(|agent| {
            let meta = agent.meta.unwrap_or_default();
            json!({
                "player_id": agent.agent_id,
                "display_name": meta.display_name,
                "strategy": strategy_of_player(&meta),
                "leagues": playing.remove(&agent.agent_id).unwrap_or_default(),
            })
        })
        .collect();
    Ok(json!({"players": players, "total": total, "lag_ms": LAG.as_millis()}))
}
