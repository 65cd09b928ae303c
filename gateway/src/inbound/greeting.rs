//! The greeting: how the gateway learns which form of the manager's `sender` a player takes
//! (league_v2::sender) before it answers the player's registration, so that the one answer — the only
//! message that ever carries the player's token — is one the player accepts.
//!
//! Right after the manager registered the player, the gateway sends it, at its contact endpoint, a
//! LEAGUE_STANDINGS_UPDATE of its league (the table as it is: a message every player is sent anyway and
//! that asks nothing of it), through the bridge's ordinary call: in the default form first and, if the
//! agent refuses it over the sender, once more in the other form; the form it accepts is its form from
//! then on (and stored with its registration). All of it within [`GREETING_LIMIT`]. An agent that does
//! not listen yet, does not answer in time or takes neither form keeps the default form, and is still
//! adapted later by the first call it refuses over the sender.
//!
//! Why this hands no token to anyone: the greeting goes to the endpoint the registration names and
//! carries only the outbound token (which proves the league, never the agent); the token goes only in
//! the registration's own answer, once. A registration naming someone else's endpoint is refused by the
//! manager (E014) before any greeting, and a resume needs the agent's own token (docs/protocol.md).

use std::time::Duration;

use league_domain::{AgentId, LeagueId, MessageType};
use league_v2::jsonrpc;
use league_v2::sender;
use league_v2::{convert, envelope};
use serde_json::Value;

use super::Inbound;
use crate::bridge::external_agents::ExternalAgent;

/// The longest a registration's answer waits for the greeting (the standings and the agent's answers).
pub(crate) const GREETING_LIMIT: Duration = Duration::from_secs(2);

/// The longest the greeting waits for its league's table. Under a flood of registrations the manager is
/// slow to answer, and a greeting that spent its whole [`GREETING_LIMIT`] on the table would never reach
/// the agent, so no sender form would be learnt: past this, the greeting goes with an empty table, as
/// when the table cannot be read (the table is the message's content, not its purpose).
const STANDINGS_LIMIT: Duration = Duration::from_millis(500);

/// Greets `agent`, a player of `league_id` just registered; learns its sender form if it shows one.
/// The league's other calls to the agent (a round starting as it registers) wait for the greeting.
pub(crate) async fn greet(inbound: &Inbound, agent: &ExternalAgent, league_id: Option<&LeagueId>) {
    let _under_way = agent.greeting();
    let greeting = async {
        let message = standings_update(inbound, league_id, &agent.agent_id).await;
        inbound
            .bridge
            .call_now(
                agent,
                MessageType::LeagueStandingsUpdate,
                &message,
                GREETING_LIMIT,
            )
            .await
    };
    match tokio::time::timeout(GREETING_LIMIT, greeting).await {
        Ok(Ok(_)) => {
            tracing::debug!(agent_id = %agent.agent_id, form = agent.sender_form().as_str(), "greeted")
        }
        Ok(Err(failure)) => {
            tracing::debug!(agent_id = %agent.agent_id, ?failure, "greeting not taken: the default sender form")
        }
        Err(_) => {
            tracing::debug!(agent_id = %agent.agent_id, "no answer to the greeting in time: the default sender form")
        }
    }
}

/// The league's table as LEAGUE_STANDINGS_UPDATE (with the league's sender and no token: the bridge
/// writes both for the agent). If the table cannot be read within [`STANDINGS_LIMIT`], an empty one of
/// the league.
async fn standings_update(inbound: &Inbound, league_id: Option<&LeagueId>, agent_id: &AgentId) -> Value {
    let (round_id, standings) =
        match tokio::time::timeout(STANDINGS_LIMIT, inbound.standings(league_id)).await {
            Ok(Ok(table)) => (
                table.response.round_id,
                convert::standings(&table.response.standings),
            ),
            Ok(Err(error)) => {
                tracing::debug!(?league_id, %error, "no standings for the greeting: an empty table");
                (0, Value::Array(Vec::new()))
            }
            Err(_) => {
                tracing::debug!(
                    ?league_id,
                    "the standings took over {STANDINGS_LIMIT:?}: an empty table for the greeting"
                );
                (0, Value::Array(Vec::new()))
            }
        };
    envelope::message(
        MessageType::LeagueStandingsUpdate.as_str(),
        sender::MANAGER,
        &format!("greeting-{agent_id}"),
        jsonrpc::object([
            ("league_id", league_manager_link::named(league_id).into()),
            ("round_id", round_id.into()),
            ("standings", standings),
        ]),
    )
}
