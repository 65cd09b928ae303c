//! `league players`: who is registered on the running system — each player's id, name, strategy (a
//! bot's) or `external`, when the manager last heard from it, the leagues it plays in, and how many
//! protocol-compliance warnings it earned.

use std::collections::BTreeMap;

use clap::Args;
use league_proto::v2::{AgentKind, GetStandingsRequest, ListAgentsRequest, ListComplianceWarningsRequest};
use serde_json::json;

use super::{Common, Operator, failed};
use crate::output::{self, Rows, cell};
use league_player::bot_name::strategy_of_player;
use league_report::columns::time;

#[derive(Debug, Clone, Args)]
pub struct PlayersArgs {
    #[command(flatten)]
    pub common: Common,
}

pub async fn players(args: PlayersArgs) -> anyhow::Result<()> {
    let mut operator = Operator::connect()?;
    let mut agents = operator.agents()?;
    let listed = agents
        .list_agents(operator.request(ListAgentsRequest {
            kind: AgentKind::Player as i32,
            label: String::new(),
            include_revoked: true,
        }))
        .await
        .map_err(failed("listing players"))?
        .into_inner();
    let mut warnings: BTreeMap<String, u64> = BTreeMap::new();
    let listed_warnings = agents
        .list_compliance_warnings(operator.request(ListComplianceWarningsRequest {
            agent_id: String::new(),
        }))
        .await
        .map_err(failed("listing warnings"))?
        .into_inner();
    for warning in listed_warnings.warnings {
        *warnings.entry(warning.agent_id).or_default() += warning.count;
    }
    let leagues = super::leagues::fetch(&mut operator.manager, &operator.token).await?;
    // Oldest first, so that each player's leagues read in the order it joined them.
    let mut playing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for league in leagues.leagues.iter().rev() {
        let standings = operator
            .manager
            .get_standings(operator.request(GetStandingsRequest {
                league_id: league.league_id.clone(),
            }))
            .await
            .map_err(failed("reading a league's players"))?
            .into_inner();
        for row in standings.standings {
            playing
                .entry(row.player_id)
                .or_default()
                .push(league.league_id.clone());
        }
    }
    let mut rows = Rows::new(&["player", "name", "strategy", "last seen", "leagues", "warnings"]);
    let mut each = vec![];
    for agent in &listed.agents {
        let meta = agent.meta.clone().unwrap_or_default();
        let strategy = strategy_of_player(&meta);
        let in_leagues = playing.get(&agent.agent_id).cloned().unwrap_or_default();
        let warned = warnings.get(&agent.agent_id).copied().unwrap_or(0);
        let last_seen = time(agent.last_seen_at.as_ref());
        rows.push(vec![
            agent.agent_id.clone(),
            meta.display_name.clone(),
            strategy.clone(),
            last_seen.clone(),
            in_leagues.join(" "),
            cell(warned),
        ]);
        each.push(json!({
            "playerId": agent.agent_id,
            "displayName": meta.display_name,
            "strategy": strategy,
            "lastSeen": last_seen,
            "leagues": in_leagues,
            "warnings": warned,
        }));
    }
    output::print(args.common.output, &rows, || Ok(json!({ "players": each })))
}
