//! START_MATCH to an external referee, by every name real referees answer to — `START_MATCH`,
//! `start_match` (the referee's own dialect first, as the bridge calls any agent) and `assign_match`.
//! Some referees implement only one; the one that worked is remembered on the agent. The external-referee
//! worker ([`league_external_referees`]) decides when to send it and what an answer means; this is how
//! it goes.

use std::sync::atomic::Ordering;

use futures::FutureExt;
use futures::future::BoxFuture;
use league_domain::{AgentId, MessageType, RefereeId};
use league_external_referees::{RefereeAgents, Unanswered};
use league_v2::addressed::Addressed;
use league_v2::compliance::Checker;
use league_v2::jsonrpc::METHOD_NOT_FOUND;
use league_v2::sender::refused_over_sender;
use serde_json::Value;

use super::PlayerBridge;
use super::client::Answer;
use super::external_agents::ExternalAgent;
use super::outbound::{Failure, without_endpoint};

/// The name some referees know START_MATCH by, beside the dialects' names.
const ASSIGN_MATCH: &str = "assign_match";

impl RefereeAgents for PlayerBridge {
    fn start_match<'a>(
        &'a self,
        referee_id: &'a RefereeId,
        message: &'a Value,
    ) -> BoxFuture<'a, Result<Value, Unanswered>> {
        async move {
            let agent = self
                .agents
                .external_agent(&AgentId::Referee(referee_id.clone()))
                .await
                .map_err(|error| Unanswered::Failed {
                    retryable: false,
                    why: format!("cannot look up the referee: {}", error.description),
                })?;
            self.call_start_match(&agent, message)
                .await
                .map_err(|failure| match failure {
                    Failure::NotImplemented => Unanswered::NoSuchMethod,
                    Failure::League(error) => Unanswered::Failed {
                        retryable: error.code.is_retryable(),
                        why: error.description,
                    },
                    refused => Unanswered::Failed {
                        retryable: false,
                        why: refused
                            .status(MessageType::StartMatch.as_str())
                            .message()
                            .to_owned(),
                    },
                })
        }
        .boxed()
    }

    fn address<'a>(&'a self, referee_id: &'a RefereeId, answer: &'a mut Value) -> BoxFuture<'a, ()> {
        async move {
            let referee_id = AgentId::Referee(referee_id.clone());
            if let Ok(agent) = self.agents.external_agent(&referee_id).await {
                agent.sender_form().apply(answer);
            }
        }
        .boxed()
    }
}

impl PlayerBridge {
    /// One START_MATCH: by the name that worked last for this referee, else its dialect's names (the
    /// bridge tries those), else `assign_match`.
    async fn call_start_match(&self, agent: &ExternalAgent, message: &Value) -> Result<Value, Failure> {
        let limit = self.timeouts.other;
        if !agent.assign_match.load(Ordering::Relaxed) {
            match self.call(agent, MessageType::StartMatch, message, limit).await {
                Err(Failure::NotImplemented) => {}
                other => return other,
            }
        }
        // As the bridge sends any message: the agent's outbound token, the sender in its form (tried once
        // in the other form when refused over it).
        let mut form = agent.sender_form();
        let mut checker = Checker::new(self.mode);
        let mut answer;
        let mut retried = false;
        loop {
            let addressed = Addressed::new(message, form, agent.outbound_token.as_str());
            answer = self
                .client
                .call(agent.endpoint(), ASSIGN_MATCH, addressed, limit, &mut checker)
                .await
                .and_then(Answer::read_plainly);
            match &answer {
                Ok(Answer::Error(error)) if !retried && refused_over_sender(error) => {
                    retried = true;
                    form = form.other();
                }
                _ => break,
            }
        }
        self.warnings
            .record(agent.agent_id.as_str(), checker.into_deviations());
        match answer {
            Ok(Answer::Result(result)) => {
                agent.assign_match.store(true, Ordering::Relaxed);
                if form != agent.sender_form() {
                    self.agents.learned_sender_form(agent, form);
                }
                Ok(result)
            }
            // An MCP server takes no plain `assign_match` (its tools were offered START_MATCH above).
            Ok(Answer::McpServer | Answer::NotPlain { .. }) => Err(Failure::NotImplemented),
            Ok(Answer::Error(error)) if error.code == METHOD_NOT_FOUND => {
                agent.assign_match.store(false, Ordering::Relaxed);
                Err(Failure::NotImplemented)
            }
            Ok(Answer::Error(error)) => Err(Failure::Refused(error)),
            Err(error) => Err(Failure::League(without_endpoint(error, agent))),
        }
    }
}
