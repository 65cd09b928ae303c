//! Calls agents make to the gateway: resolve the dialect, check the envelope in the configured mode,
//! authenticate, hand the message to the league over gRPC, and answer in league.v2.

pub(crate) mod greeting;
mod operator;
pub(crate) mod queries;
mod referees;
mod registration;
mod replies;
mod standings;

use std::net::IpAddr;
use std::sync::Arc;

use league_domain::{AgentId, MessageType};
use league_external_referees::Referees;
use league_manager_link::league_status::to_league_error;
use league_manager_link::{ManagerLink, StandingsCache};
use league_proto::ErrorCode;
use league_proto::v2::AgentKind;
use league_v2::compliance::{Checker, Mode};
use league_v2::dialect::{self, Action};
use league_v2::envelope::{self, Envelope};
use league_v2::jsonrpc::{self, Call, RpcError};
use league_v2::league_error::{LeagueError, LeagueResult};
use serde_json::{Map, Value, json};

use crate::bridge::{PlayerBridge, Replies};
use crate::config::GatewayConfig;
use crate::limits::{CallKind, RequestLimits};
use crate::warning_buffer::WarningBuffer;
use referees::Pull;

/// Everything the inbound side needs, shared by every request.
#[derive(Debug, Clone)]
pub(crate) struct Inbound {
    pub(crate) manager_link: ManagerLink,
    pub(crate) config: Arc<GatewayConfig>,
    pub(crate) warnings: Arc<WarningBuffer>,
    pub(crate) replies: Arc<Replies>,
    pub(crate) referees: Arc<Referees>,
    /// The standings queries are answered from ([`standings`]).
    pub(crate) standings: Arc<StandingsCache<Arc<standings::Standings>>>,
    /// The request limits every call is admitted by (crate::limits).
    pub(crate) limits: Arc<RequestLimits>,
    /// How the gateway calls agents (a registration's greeting goes through it).
    pub(crate) bridge: PlayerBridge,
    /// Where referees reach the gateway's `PlayerService` bridge (registered as external players'
    /// service endpoint).
    pub(crate) bridge_url: String,
    /// Where agents reach `/mcp`.
    pub(crate) public_url: String,
}

/// What the HTTP request says beside the message: the caller's address (what the limits are kept by),
/// credentials (`Authorization: Bearer`), and the player a call is for when it came to a player's path
/// (`/mcp/players/<id>`, where external referees reach players).
#[derive(Debug, Clone)]
pub(crate) struct HttpContext {
    pub(crate) peer: IpAddr,
    pub(crate) bearer: Option<String>,
    pub(crate) player_path: Option<String>,
}

/// A handled message: its result, and the agent it came from when known (for compliance warnings).
#[derive(Debug)]
pub(crate) struct Handled {
    pub(crate) result: Value,
    pub(crate) agent_id: Option<AgentId>,
}

impl Handled {
    fn anonymous(result: Value) -> Self {
        Self {
            result,
            agent_id: None,
        }
    }
}

/// The metrics label of an action: the message type or action name, never the raw method (which
/// agents choose, so it would let them grow the label set without bound).
fn action_label(action: Action) -> &'static str {
    match action {
        Action::Message(kind) => kind.as_str(),
        Action::Ping => "ping",
        Action::StartLeague => "start_league",
        Action::CreateLeague => "create_league",
        Action::EnrollPlayer => "enroll_player",
        Action::Lifecycle(change) => change.method(),
        Action::Query(query) => query.as_str(),
        Action::ComplianceWarnings => "get_compliance_warnings",
        Action::AssignedMatches => "get_assigned_matches",
    }
}

fn count(method: &str, status: &str) {
    crate::metrics::REQUESTS
        .get_or_create(&crate::metrics::RequestLabels {
            method: method.to_owned(),
            status: status.to_owned(),
        })
        .inc();
}

/// An authenticated agent.
#[derive(Debug, Clone)]
pub(crate) struct Agent {
    pub(crate) agent_id: AgentId,
    pub(crate) kind: AgentKind,
    pub(crate) token: String,
}

impl Inbound {
    pub(crate) fn mode(&self) -> Mode {
        self.config.compliance
    }

    /// One call: its response, or `None` for a notification.
    pub(crate) async fn handle(&self, call: Call, http: &HttpContext) -> Option<Value> {
        let Call { method, params, id } = call;
        let outcome = self.dispatch(&method, params, http).await;
        let id = id?;
        Some(match outcome {
            Ok(result) => jsonrpc::success(id, result),
            Err(error) => jsonrpc::failure(id, &error),
        })
    }

    async fn dispatch(&self, method: &str, params: Value, http: &HttpContext) -> Result<Value, RpcError> {
        let resolved = dialect::resolve(method, params).inspect_err(|error| {
            count("unresolved", &error.code.to_string());
        })?;
        let conversation_id = resolved
            .message
            .get("conversation_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        // The one admission of every call, whatever carried it (crate::limits).
        let kind = match resolved.action {
            Action::Message(MessageType::LeagueRegisterRequest | MessageType::RefereeRegisterRequest) => {
                CallKind::Registration
            }
            _ => CallKind::Other,
        };
        let sender = resolved.message.get("sender").and_then(Value::as_str);
        if let Err(error) = self.limits.admit(http.peer, sender, kind) {
            count(action_label(resolved.action), error.code.code());
            return Err(error.to_rpc(conversation_id.as_deref()));
        }
        let mut checker = Checker::new(self.mode());
        let outcome = self
            .message(
                resolved.action,
                resolved.dialect,
                &resolved.message,
                &mut checker,
                http,
            )
            .await;
        let label = action_label(resolved.action);
        match outcome {
            Ok(handled) => {
                count(label, "ok");
                if let Some(agent_id) = handled.agent_id {
                    self.warnings.record(agent_id.as_str(), checker.into_deviations());
                }
                Ok(handled.result)
            }
            Err(error) => {
                count(label, error.code.code());
                tracing::debug!(method, code = %error.code, error = %error.description, "call refused");
                Err(error.to_rpc(conversation_id.as_deref()))
            }
        }
    }

    async fn message(
        &self,
        action: Action,
        dialect: dialect::Dialect,
        message: &Map<String, Value>,
        checker: &mut Checker,
        http: &HttpContext,
    ) -> LeagueResult<Handled> {
        match action {
            Action::Ping => Ok(Handled::anonymous(json!({
                "status": "ok",
                "protocol": envelope::PROTOCOL,
                "timestamp": league_v2::timestamp::now(),
            }))),
            Action::StartLeague => operator::start_league(self, message, http)
                .await
                .map(Handled::anonymous),
            Action::CreateLeague => operator::create_league(self, message, http)
                .await
                .map(Handled::anonymous),
            Action::EnrollPlayer => operator::enroll_player(self, message, http)
                .await
                .map(Handled::anonymous),
            Action::Lifecycle(change) => operator::change_league(self, change, message, http)
                .await
                .map(Handled::anonymous),
            Action::ComplianceWarnings => operator::compliance_warnings(self, message, http)
                .await
                .map(Handled::anonymous),
            Action::Query(query) => queries::shorthand(self, query, message, checker, http).await,
            Action::AssignedMatches => self.pull(Pull::AssignedMatches, message, checker, http).await,
            Action::Message(kind) => match kind {
                MessageType::LeagueRegisterRequest => {
                    registration::player(self, dialect, message, checker).await
                }
                MessageType::RefereeRegisterRequest => {
                    registration::referee(self, dialect, message, checker).await
                }
                MessageType::LeagueQuery => queries::league_query(self, message, checker, http).await,
                MessageType::GameJoinAck
                | MessageType::ChooseParityResponse
                | MessageType::GameMoveResponse => replies::deliver(self, kind, message, checker, http).await,
                // An external referee running a match.
                MessageType::GameInvitation
                | MessageType::ChooseParityCall
                | MessageType::GameMoveCall
                | MessageType::GameOver
                | MessageType::GameError
                | MessageType::MatchResultReport => self.referee_call(kind, message, checker, http).await,
                other => Err(LeagueError::new(
                    ErrorCode::InvalidMessageFormat,
                    format!(
                        "{} is not a message the league accepts from an agent",
                        other.as_str()
                    ),
                )),
            },
        }
    }

    /// Checks the envelope of a message from a registered agent and authenticates it. The token comes
    /// from the message, or else from the HTTP `Authorization` header.
    pub(crate) async fn authenticated(
        &self,
        message: &Map<String, Value>,
        checker: &mut Checker,
        http: &HttpContext,
    ) -> LeagueResult<(Agent, Envelope)> {
        let mut envelope = envelope::check(message, checker, http.bearer.is_none())?;
        let token = envelope
            .auth_token
            .clone()
            .or_else(|| http.bearer.clone())
            .ok_or_else(|| LeagueError::new(ErrorCode::AuthTokenMissing, "auth_token is required"))?;
        let claimed = envelope.sender.as_ref().and_then(|sender| sender.id());
        let (agent_id, kind) = self.verify(claimed, &token, http).await?;
        envelope.auth_token = Some(token.clone());
        Ok((
            Agent {
                agent_id,
                kind,
                token,
            },
            envelope,
        ))
    }

    /// Whose token this is, for a caller at `http.peer`. `claimed`: the id the message's sender names, if
    /// it names a registered id; the token must then be that agent's (E012 otherwise, also for another
    /// agent's valid token). A token not verified in the last minute is looked up with the manager only
    /// with the caller's leave, and every refusal counts against the caller's failed authentications
    /// (crate::limits): the one way a token is checked.
    pub(crate) async fn verify(
        &self,
        claimed: Option<&str>,
        token: &str,
        http: &HttpContext,
    ) -> LeagueResult<(AgentId, AgentKind)> {
        if league_v2::outbound_token::is_outbound(token) {
            // What the league sends an agent proves the league, never the agent.
            self.limits.failed_authentication(http.peer);
            return Err(LeagueError::new(
                ErrorCode::AuthTokenInvalid,
                "auth token invalid: that is the token the league's messages carry, not a credential",
            ));
        }
        let (agent_id, kind) = match self.manager_link.verified_credential(token) {
            Some(known) => known,
            None => {
                let ticket = self.limits.authentication(http.peer).await?;
                match self
                    .manager_link
                    .look_up_credential(token)
                    .await
                    .map_err(to_league_error)
                {
                    Ok(found) => found,
                    Err(error) => {
                        if error.code == ErrorCode::AuthTokenInvalid {
                            ticket.failed();
                        }
                        return Err(error);
                    }
                }
            }
        };
        if let Some(claimed) = claimed
            && claimed != agent_id.as_str()
        {
            self.limits.failed_authentication(http.peer);
            return Err(LeagueError::new(
                ErrorCode::AuthTokenInvalid,
                format!("auth token invalid for {claimed}"),
            ));
        }
        Ok((agent_id, kind))
    }

    /// Whether this token is the operator's.
    pub(crate) fn is_operator(&self, token: &str) -> bool {
        use secrecy::ExposeSecret;
        use subtle::ConstantTimeEq;
        token
            .as_bytes()
            .ct_eq(self.manager_link.operator_token().expose_secret().as_bytes())
            .into()
    }
}
