//! Referees that pull: they poll `league_query {"query_type": "GET_REGISTRATIONS"}` (who plays, and where
//! to reach them) and `get_assigned_matches` (what to run) every few seconds, often without a token.
//!
//! A pull claims: the matches ready for the referee are claimed for it under a lease, exactly as for a
//! push, and this replica keeps the lease until the report closes it ([`super::lease`]). Each answer
//! lists every match the referee holds, so an answer lost on the way costs nothing.
//!
//! Who pulls: the token, when the request carries one (`auth_token` or `Authorization: Bearer`). A pull
//! without one (lenient mode only; strict mode answers E011) is taken only from the address of the
//! referee's registered contact endpoint — the address the league would call it at — and is a compliance
//! warning. A tokenless pull therefore sees exactly what that referee sees with its token, and a stranger
//! elsewhere gets E011 and no match.

use std::net::IpAddr;
use std::sync::Arc;

use league_domain::{PlayerId, RefereeId};
use league_proto::v2::{
    Agent, AgentKind, AssignedPlayer, ClaimMatchesRequest, GetAgentRequest, GetScheduleRequest,
    ListAgentsRequest, MatchStatus,
};
use league_proto::{EXTERNAL_LABEL, ErrorCode};
use serde_json::{Map, Value, json};

use league_domain::MessageType;
use league_manager_link::league_status::to_league_error;
use league_v2::compliance::{Checker, kinds};
use league_v2::envelope::{Sender, text};
use league_v2::ids;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::sender;

use super::{RefereedMatch, Referees};

/// The most matches one pull asks for; the manager hands out no more than the referee's free slots.
const PULL_BATCH: u32 = 64;

/// Who is pulling: known by its token (the gateway authenticates it), or by its address
/// ([`Referees::tokenless_puller`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Puller {
    Referee(RefereeId),
    /// A tokenless pull naming no referee, from the address of one (or more: referees may share a host).
    SomeReferee,
    Operator,
}

impl Puller {
    /// The referee pulling, when it is known (its compliance warnings are counted against it).
    pub fn referee_id(&self) -> Option<&RefereeId> {
        match self {
            Puller::Referee(referee_id) => Some(referee_id),
            Puller::SomeReferee | Puller::Operator => None,
        }
    }
}

/// The referee a pull names: `referee_id` (E002 when it is no referee id), or the sender's id when that
/// is a referee's.
pub fn named_referee(message: &Map<String, Value>) -> LeagueResult<Option<RefereeId>> {
    if let Some(named) = ids::optional(message, "referee_id")? {
        return Ok(Some(named));
    }
    Ok(match text(message, "sender").and_then(Sender::parse) {
        Some(Sender::Referee(id)) => RefereeId::parse(&id).ok(),
        _ => None,
    })
}

impl Referees {
    /// `get_assigned_matches {referee_id}`: the matches the referee holds, after claiming what is ready
    /// for it.
    pub async fn assigned_matches(self: &Arc<Self>, puller: &Puller) -> LeagueResult<Value> {
        let referee_id = match puller {
            Puller::Referee(referee_id) => referee_id,
            Puller::SomeReferee => {
                return Err(LeagueError::new(
                    ErrorCode::MissingRequiredField,
                    "referee_id is required",
                ));
            }
            Puller::Operator => {
                return Err(LeagueError::new(
                    ErrorCode::PermissionDenied,
                    "only a referee is assigned matches",
                ));
            }
        };
        self.pulls(referee_id);
        if let Some((why, _)) = self.benched(referee_id) {
            // Told why rather than handed matches it would give back again; the queue's matches go to
            // the other referees meanwhile.
            return Err(LeagueError::new(ErrorCode::PermissionDenied, why));
        }
        let held = self.held_by(referee_id).await?;
        // What the manager tells of each player comes with a claim only: a match held already lists none.
        let unknown = <[AssignedPlayer; 2]>::default();
        let mut entries: Vec<Value> = held
            .iter()
            .map(|found| entry(self.match_fields(referee_id, found, &unknown), found))
            .collect();
        let shutdown = self.shutdown().ok_or_else(|| {
            LeagueError::new(
                ErrorCode::ConnectionError,
                "the gateway is not serving referees yet",
            )
        })?;
        let request = self.manager_link.for_referee(
            referee_id,
            ClaimMatchesRequest {
                max_matches: PULL_BATCH,
                wait: None,
            },
        );
        let claimed = self
            .manager_link
            .manager
            .clone()
            .claim_matches(request)
            .await
            .map_err(to_league_error)?
            .into_inner()
            .assignments;
        for assignment in claimed.into_iter().filter_map(super::parse) {
            let found = RefereedMatch::assigned(&assignment, referee_id);
            if !held.iter().any(|held| held.key() == found.key()) {
                let fields = self.match_fields(referee_id, &found, &assignment.players);
                entries.push(entry(fields, &found));
            }
            let held = self.hold(referee_id, &assignment);
            let referees = self.clone();
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                referees.keep(held, shutdown).await;
            });
        }
        Ok(json!({"referee_id": referee_id.as_str(), "matches": entries}))
    }

    /// `league_query GET_REGISTRATIONS`: the registered players (reached at their paths on this gateway)
    /// and referees, for a referee (or the operator). No token or endpoint of another agent is ever in
    /// it.
    pub async fn registrations(&self, puller: &Puller, conversation_id: &str) -> LeagueResult<Value> {
        let list = |kind: AgentKind| {
            let request = self.manager_link.as_operator(ListAgentsRequest {
                kind: kind as i32,
                label: String::new(),
                include_revoked: false,
            });
            let mut agents = self.manager_link.agents.clone();
            async move { agents.list_agents(request).await }
        };
        let players = list(AgentKind::Player)
            .await
            .map_err(to_league_error)?
            .into_inner()
            .agents
            .into_iter()
            .map(|player| {
                let player_id: PlayerId = ids::answered("player_id", &player.agent_id)?;
                // Registered without metadata (proto3: unset): listed with empty fields.
                let meta = player.meta.unwrap_or_default();
                let endpoint = self.player_url(&player_id);
                Ok(json!({
                    "player_id": player_id,
                    "display_name": meta.display_name,
                    "endpoint": endpoint,
                    "contact_endpoint": endpoint,
                    "game_types": meta.game_types,
                    "version": meta.version,
                }))
            })
            .collect::<LeagueResult<Vec<Value>>>()?;
        let referees: Vec<Value> = list(AgentKind::Referee)
            .await
            .map_err(to_league_error)?
            .into_inner()
            .agents
            .into_iter()
            .map(|referee| {
                // As for players: no metadata, empty fields.
                let meta = referee.meta.unwrap_or_default();
                json!({
                    "referee_id": referee.agent_id,
                    "display_name": meta.display_name,
                    "game_types": meta.game_types,
                    "max_concurrent_matches": referee.max_concurrent_matches,
                    "version": meta.version,
                })
            })
            .collect();
        let mut result = league_v2::envelope::message(
            MessageType::LeagueQueryResponse.as_str(),
            sender::MANAGER,
            conversation_id,
            json!({
                "query_type": "GET_REGISTRATIONS",
                "success": true,
                "data": {"players": players, "referees": referees},
                "error": null,
            }),
        );
        // Pulling referees read the lists at the top of the answer.
        result["players"] = result["data"]["players"].clone();
        result["referees"] = result["data"]["referees"].clone();
        // The manager's sender in the form this referee takes it.
        if let Puller::Referee(referee_id) = puller {
            self.agents.address(referee_id, &mut result).await;
        }
        Ok(result)
    }

    /// Who pulls without a token (lenient mode only: strict mode refuses the deviation): the external
    /// referee — the one named, or any when none is — whose contact endpoint is at `source`, the
    /// request's address. A pull that names no one is known only as some referee: its warnings are
    /// counted against nobody.
    pub async fn tokenless_puller(
        &self,
        source: IpAddr,
        named: Option<&RefereeId>,
        checker: &mut Checker,
    ) -> LeagueResult<Puller> {
        checker.deviation(
            kinds::MISSING_ENVELOPE_FIELD,
            "auth_token missing on a pull (the referee is known by its contact endpoint's address)",
            ErrorCode::AuthTokenMissing,
        )?;
        let source = source.to_canonical();
        let candidates: Vec<Agent> = match named {
            Some(referee_id) => self
                .manager_link
                .agents
                .clone()
                .get_agent(self.manager_link.as_operator(GetAgentRequest {
                    agent_id: referee_id.to_string(),
                }))
                .await
                .ok()
                .and_then(|response| response.into_inner().agent)
                .into_iter()
                .collect(),
            None => {
                self.manager_link
                    .agents
                    .clone()
                    .list_agents(self.manager_link.as_operator(ListAgentsRequest {
                        kind: AgentKind::Referee as i32,
                        label: EXTERNAL_LABEL.to_owned(),
                        include_revoked: false,
                    }))
                    .await
                    .map_err(to_league_error)?
                    .into_inner()
                    .agents
            }
        };
        for referee in candidates {
            // No metadata: no contact endpoint, so no address to match.
            let meta = referee.meta.clone().unwrap_or_default();
            let external = meta.labels.contains_key(EXTERNAL_LABEL);
            if referee.kind == AgentKind::Referee as i32
                && external
                && addresses(&meta.contact_endpoint).await.contains(&source)
            {
                return Ok(match named {
                    Some(named) => Puller::Referee(named.clone()),
                    None => Puller::SomeReferee,
                });
            }
        }
        Err(LeagueError::new(
            ErrorCode::AuthTokenMissing,
            format!(
                "auth_token is required: {source} is not the address of {}'s contact endpoint",
                named.map_or("any registered referee", RefereeId::as_str)
            ),
        ))
    }
}

/// The addresses a contact endpoint's host stands for.
async fn addresses(endpoint: &str) -> Vec<IpAddr> {
    let Ok(uri) = endpoint.parse::<http::Uri>() else {
        return Vec::new();
    };
    let Some(host) = uri.host() else {
        return Vec::new();
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<IpAddr>() {
        return vec![ip.to_canonical()];
    }
    let port = uri.port_u16().unwrap_or(80);
    match tokio::net::lookup_host((host, port)).await {
        Ok(found) => found.map(|address| address.ip().to_canonical()).collect(),
        Err(_) => Vec::new(),
    }
}

impl Referees {
    /// The matches of the current league running under `referee_id`'s lease (claimed by any replica).
    async fn held_by(&self, referee_id: &RefereeId) -> LeagueResult<Vec<RefereedMatch>> {
        // The schedule comes in pages of whole rounds; a referee's running matches may be in any of them.
        let mut rounds = Vec::new();
        let mut first_round_id = 0;
        loop {
            let page = self
                .manager_link
                .manager
                .clone()
                .get_schedule(self.manager_link.as_operator(GetScheduleRequest {
                    league_id: String::new(),
                    first_round_id,
                    max_matches: 0,
                }))
                .await
                .map_err(to_league_error)?
                .into_inner();
            rounds.extend(page.rounds);
            if page.next_round_id == 0 || page.next_round_id <= first_round_id {
                break;
            }
            first_round_id = page.next_round_id;
        }
        let mut held = Vec::new();
        for scheduled in rounds.into_iter().flat_map(|round| round.matches) {
            if scheduled.status == MatchStatus::Running as i32 && *referee_id == scheduled.referee_id {
                let league_id = ids::answered("league_id", &scheduled.league_id)?;
                let match_id = ids::answered("match_id", &scheduled.match_id)?;
                held.push(self.refereed_match(Some(&league_id), match_id).await?);
            }
        }
        Ok(held)
    }
}

/// What a listed match's `status` says to a pulling referee: every match listed is the referee's to run
/// now. Pullers from the field run only the matches their own managers list as `PENDING` and skip any
/// other status (`ASSIGNED` among them), so `PENDING` it is (docs/protocol.md).
const YOURS_TO_RUN: &str = "PENDING";

/// One entry of the answer: the match's fields as START_MATCH has them (`player_A_id`, `player_B_id`
/// among them), and the names pulling referees read besides (`round`, `status`).
fn entry(mut fields: Map<String, Value>, found: &RefereedMatch) -> Value {
    fields.insert("round".into(), found.round_id.into());
    fields.insert("status".into(), YOURS_TO_RUN.into());
    Value::Object(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_contact_endpoint_stands_for_the_addresses_of_its_host() {
        let loopback: IpAddr = [127, 0, 0, 1].into();
        assert_eq!(addresses("http://127.0.0.1:8101/mcp").await, vec![loopback]);
        // An IPv4 address written as IPv6 is the same address.
        assert_eq!(
            addresses("http://[::ffff:127.0.0.1]:8101/mcp").await,
            vec![loopback]
        );
        assert!(
            addresses("http://localhost:8101/mcp")
                .await
                .iter()
                .all(IpAddr::is_loopback)
        );
        assert!(addresses("not a url").await.is_empty());
        assert!(addresses("/mcp").await.is_empty());
    }

    #[test]
    fn a_pull_names_its_referee_by_id_or_sender() {
        let message = |value: Value| value.as_object().cloned().unwrap_or_else(Map::new);
        let named = |value: Value| named_referee(&message(value)).map(|named| named.map(String::from));
        assert_eq!(
            named(json!({"referee_id": "REF02"})),
            Ok(Some("REF02".to_owned()))
        );
        assert_eq!(
            named(json!({"sender": "referee:REF03"})),
            Ok(Some("REF03".to_owned()))
        );
        assert_eq!(named(json!({"sender": "player:P01"})), Ok(None));
        assert_eq!(named(json!({"query_type": "GET_REGISTRATIONS"})), Ok(None));
        assert_eq!(
            named(json!({"referee_id": "ref2"})).map_err(|error| error.code),
            Err(ErrorCode::InvalidMessageFormat)
        );
    }
}
