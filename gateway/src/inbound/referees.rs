//! External referees' calls, as the gateway takes them: authenticated here (the gateway's one
//! authentication, with its limits), then handed to the external-referee worker
//! ([`league_external_referees`]), which answers them knowing only who called.

use league_domain::{AgentId, MatchId, MessageType};
use league_external_referees::{Puller, Referee, named_referee};
use league_proto::ErrorCode;
use league_proto::v2::AgentKind;
use league_v2::compliance::{Checker, Deviation, Mode, kinds};
use league_v2::envelope::text;
use league_v2::league_error::{LeagueError, LeagueResult};
use serde_json::{Map, Value};

use super::{Handled, HttpContext, Inbound};

/// What a pulling referee asks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pull {
    AssignedMatches,
    Registrations,
}

impl Inbound {
    /// A referee's call `kind` to a player of its match, or its MATCH_RESULT_REPORT.
    pub(super) async fn referee_call(
        &self,
        kind: MessageType,
        message: &Map<String, Value>,
        checker: &mut Checker,
        http: &HttpContext,
    ) -> LeagueResult<Handled> {
        let referee = self.referee(kind, message, checker, http).await?;
        let result = if kind == MessageType::MatchResultReport {
            let acknowledged = match self.referees.report(&referee, message, checker).await {
                Ok(acknowledged) => acknowledged,
                Err(error) => {
                    // A refused result is warned against the referee, though the call fails.
                    let seen = checker.take_deviations();
                    if seen.iter().any(|seen| seen.kind == kinds::REFUSED_RESULT) {
                        self.warnings.record(referee.referee_id.as_str(), seen);
                    }
                    return Err(error);
                }
            };
            // The referee (and anyone asking this replica next) sees the new result at once.
            self.forget_standings();
            acknowledged
        } else {
            let player_path = http.player_path.as_deref();
            self.referees
                .call_player(&referee, kind, message, checker, player_path)
                .await?
        };
        Ok(Handled {
            result,
            agent_id: Some(referee.referee_id.into()),
        })
    }

    /// A pulling referee's question: `get_assigned_matches` (the matches it holds), or `league_query
    /// GET_REGISTRATIONS` (who plays and referees; the operator may ask too).
    pub(super) async fn pull(
        &self,
        question: Pull,
        message: &Map<String, Value>,
        checker: &mut Checker,
        http: &HttpContext,
    ) -> LeagueResult<Handled> {
        let puller = self.puller(message, checker, http).await?;
        let result = match question {
            Pull::AssignedMatches => self.referees.assigned_matches(&puller).await?,
            Pull::Registrations => {
                let conversation_id = text(message, "conversation_id").unwrap_or_default();
                self.referees.registrations(&puller, conversation_id).await?
            }
        };
        Ok(Handled {
            result,
            agent_id: puller.referee_id().cloned().map(AgentId::from),
        })
    }

    /// The sender of `message`, authenticated, which must be a referee.
    async fn referee(
        &self,
        kind: MessageType,
        message: &Map<String, Value>,
        checker: &mut Checker,
        http: &HttpContext,
    ) -> LeagueResult<Referee> {
        let (agent, envelope) = match self.authenticated(message, checker, http).await {
            Err(error) if error.code == ErrorCode::AuthTokenMissing => {
                return Err(self.tokenless_referee_call(kind, message, http).await);
            }
            authenticated => authenticated?,
        };
        let (AgentKind::Referee, AgentId::Referee(referee_id)) = (agent.kind, agent.agent_id) else {
            return Err(LeagueError::new(
                ErrorCode::PermissionDenied,
                format!("only a referee sends {}", kind.as_str()),
            ));
        };
        Ok(Referee {
            referee_id,
            token: agent.token,
            conversation_id: envelope.conversation_id.unwrap_or_default(),
        })
    }

    /// A referee's call to a player, or its report, without a token: refused in every mode (a pull may
    /// go without one, from the referee's address; an act on a match never: docs/protocol.md, "Tokenless
    /// calls"). The refusal says what to send, and when the caller is the external referee whose contact
    /// endpoint is at its address, the operator sees it too (`refused_referee_call`): a referee whose
    /// every call is refused otherwise only gives its matches back, round after round, and nobody is told.
    async fn tokenless_referee_call(
        &self,
        kind: MessageType,
        message: &Map<String, Value>,
        http: &HttpContext,
    ) -> LeagueError {
        let why = format!(
            "auth_token is required on {}: a referee's calls to players and its reports carry the \
             auth_token its registration answered (only get_assigned_matches and GET_REGISTRATIONS may \
             go without it)",
            kind.as_str()
        );
        let named = named_referee(message).ok().flatten();
        // Who it is, by address as a tokenless pull is known; not taken for it, only told.
        let mut scratch = Checker::new(Mode::Lenient);
        if let Ok(Puller::Referee(referee_id)) = self
            .referees
            .tokenless_puller(http.peer, named.as_ref(), &mut scratch)
            .await
        {
            // Only a well-formed id goes into the warning: its text may reach the public page (a
            // stalled league's cause), and the message is the caller's.
            let match_id = text(message, "match_id")
                .and_then(|id| id.parse::<MatchId>().ok())
                .map_or_else(|| "no match".to_owned(), |id| id.to_string());
            let standing = self.referees.call_refused(&referee_id, &why);
            let given_back = match standing.given_back {
                0 => String::new(),
                n => format!(
                    "; {n} matches given back untouched for it (after {}: no match claimed for it for a while)",
                    league_external_referees::BENCH_AFTER
                ),
            };
            let refused = Deviation {
                kind: kinds::REFUSED_REFEREE_CALL,
                detail: format!(
                    "{} for {match_id} refused (E011): {why}{given_back}",
                    kind.as_str()
                ),
                strict_error: ErrorCode::AuthTokenMissing,
            };
            self.warnings.record(referee_id.as_str(), [refused]);
        }
        LeagueError::new(ErrorCode::AuthTokenMissing, why)
    }

    /// Who pulls: by token when there is one; else (lenient mode) the external referee whose contact
    /// endpoint is at the request's address ([`league_external_referees::Referees::tokenless_puller`]).
    async fn puller(
        &self,
        message: &Map<String, Value>,
        checker: &mut Checker,
        http: &HttpContext,
    ) -> LeagueResult<Puller> {
        let named = named_referee(message)?;
        let token = text(message, "auth_token")
            .filter(|token| !token.is_empty())
            .or(http.bearer.as_deref());
        let Some(token) = token else {
            return self
                .referees
                .tokenless_puller(http.peer, named.as_ref(), checker)
                .await;
        };
        if self.is_operator(token) {
            return Ok(Puller::Operator);
        }
        let (agent, _) = self.authenticated(message, checker, http).await?;
        let (AgentKind::Referee, AgentId::Referee(referee_id)) = (agent.kind, agent.agent_id) else {
            return Err(LeagueError::new(
                ErrorCode::PermissionDenied,
                "only referees (and the operator) pull registrations and matches",
            ));
        };
        if named.is_some_and(|named| named != referee_id) {
            return Err(LeagueError::new(
                ErrorCode::PermissionDenied,
                format!("{referee_id} may pull only its own matches"),
            ));
        }
        Ok(Puller::Referee(referee_id))
    }
}
