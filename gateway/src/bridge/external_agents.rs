//! The external agents this gateway calls, each with what it learned of it: contact endpoint, dialect and
//! sender form (stored with the agent's registration, so every replica learns them once), the outbound
//! token, the MCP session, and whether its greeting is under way. Kept here once looked up or registered:
//! contact endpoint and dialect never change after registering.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use league_domain::{AgentId, MessageType};
use league_manager_link::ManagerLink;
use league_proto::ErrorCode;
use league_proto::v2::{GetAgentRequest, SetAgentLabelRequest};
use league_v2::dialect::Dialect;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::outbound_token;
use league_v2::sender::SenderForm;
use secrecy::SecretString;

use league_manager_link::league_status::to_league_error;

/// The label an external agent's dialect is stored under in its registration.
pub(crate) const DIALECT_LABEL: &str = "league.dialect";
/// The label an external agent's sender form ([`SenderForm`]) is stored under, once learned.
pub(crate) const SENDER_FORM_LABEL: &str = "league.sender_form";
/// An external agent, as the gateway calls it.
#[derive(Debug)]
pub struct ExternalAgent {
    pub(crate) agent_id: AgentId,
    pub(crate) contact_endpoint: String,
    /// `contact_endpoint` parsed, once rather than on every call (`None`: it does not parse, and each
    /// call says so as it always did).
    contact_uri: Option<http::Uri>,
    /// The `auth_token` on every message the league sends it, computed once: an HMAC per message was
    /// the largest single cost of a bridged call (docs/benchmarks.md).
    pub(crate) outbound_token: outbound_token::OutboundToken,
    /// Learned at registration; switched when the agent turns out to answer another dialect.
    pub(crate) dialect: Mutex<Dialect>,
    /// How the league's senders are written for this agent (learned, see [`league_v2::sender`]).
    pub(crate) sender_form: Mutex<SenderForm>,
    /// The dialect that worked for each message type when it was not the agent's own, so a fallback
    /// costs the agent's -32601s once, not on every message.
    pub(crate) methods: Mutex<HashMap<MessageType, Dialect>>,
    /// The MCP session with the agent, when it is an MCP server (the `mcp` dialect; ADR 0046).
    pub(crate) mcp: super::mcp_agent::McpSession,
    /// A referee that answers START_MATCH only as `assign_match` (learned, see [`super::start_match`]).
    pub(crate) assign_match: AtomicBool,
    /// Whether the agent ever answered a call with a result (before that, an error may be an MCP
    /// server's: super::mcp_detect).
    answered: AtomicBool,
    /// Whether a failed call to it was retried at once already (super::outbound::FIRST_RETRY).
    retried_at_once: AtomicBool,
    /// Whether the agent is an MCP server, once the gateway asked it (super::mcp_detect).
    pub(crate) mcp_detection: tokio::sync::OnceCell<super::mcp_detect::McpDetection>,
    /// Whether the greeting that learns its sender form is under way (crate::inbound::greeting): the
    /// league's other calls to it wait for it, so none goes out in a form the agent is about to refuse.
    greeting: tokio::sync::watch::Sender<bool>,
}

impl ExternalAgent {
    /// `key`: the operator credential, which the outbound token is derived from.
    pub(crate) fn new(
        key: &SecretString,
        agent_id: AgentId,
        contact_endpoint: String,
        dialect: Dialect,
        form: SenderForm,
    ) -> Self {
        Self {
            outbound_token: outbound_token::OutboundToken::for_agent(key, agent_id.as_str()),
            agent_id,
            contact_uri: contact_endpoint.parse().ok(),
            contact_endpoint,
            dialect: Mutex::new(dialect),
            sender_form: Mutex::new(form),
            methods: Mutex::default(),
            mcp: Default::default(),
            assign_match: AtomicBool::new(false),
            answered: AtomicBool::new(false),
            retried_at_once: AtomicBool::new(false),
            mcp_detection: tokio::sync::OnceCell::new(),
            greeting: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Where calls to the agent go.
    pub(crate) fn endpoint(&self) -> super::client::Endpoint<'_> {
        super::client::Endpoint {
            text: &self.contact_endpoint,
            uri: self.contact_uri.as_ref(),
        }
    }

    /// Waits (at most `limit`) while the agent's greeting is under way.
    pub(crate) async fn greeted(&self, limit: Duration) {
        if !*self.greeting.borrow() {
            return;
        }
        let mut greeting = self.greeting.subscribe();
        tokio::time::timeout(limit, greeting.wait_for(|under_way| !under_way))
            .await
            .ok();
    }

    /// Marks the greeting under way until the guard is dropped.
    pub(crate) fn greeting(&self) -> GreetingUnderWay<'_> {
        self.greeting.send_replace(true);
        GreetingUnderWay(&self.greeting)
    }

    /// Whether the agent ever answered a call with a result.
    pub(crate) fn answered(&self) -> bool {
        self.answered.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether a call that could not reach it is the first such to an agent that never answered: an
    /// agent that registered before its server listened. True once.
    pub(crate) fn first_unreached(&self) -> bool {
        !self.answered()
            && !self
                .retried_at_once
                .swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn set_answered(&self) {
        self.answered.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// What the gateway learnt when it asked the agent whether it is an MCP server, if it asked.
    pub fn mcp_detection(&self) -> Option<&super::mcp_detect::McpDetection> {
        self.mcp_detection.get()
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect.lock().map(|d| *d).unwrap_or(Dialect::Canonical)
    }

    pub(crate) fn set_dialect(&self, dialect: Dialect) {
        if let Ok(mut current) = self.dialect.lock() {
            *current = dialect;
        }
    }

    /// The dialect to try first for `kind`: the one that worked for it before, else the agent's own.
    pub(crate) fn dialect_for(&self, kind: MessageType) -> Dialect {
        self.methods
            .lock()
            .ok()
            .and_then(|methods| methods.get(&kind).copied())
            .unwrap_or_else(|| self.dialect())
    }

    /// Remembers that `kind` reached the agent in `dialect`.
    pub(crate) fn set_dialect_for(&self, kind: MessageType, dialect: Dialect) {
        if let Ok(mut methods) = self.methods.lock() {
            methods.insert(kind, dialect);
        }
    }

    pub fn sender_form(&self) -> SenderForm {
        *self
            .sender_form
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn set_sender_form(&self, form: SenderForm) {
        if let Ok(mut current) = self.sender_form.lock() {
            *current = form;
        }
    }
}

/// While it lives, an agent's greeting is under way ([`ExternalAgent::greeting`]); dropped, it is over
/// (also when the registration that greets is abandoned half-way).
#[derive(Debug)]
pub(crate) struct GreetingUnderWay<'a>(&'a tokio::sync::watch::Sender<bool>);

impl Drop for GreetingUnderWay<'_> {
    fn drop(&mut self) {
        self.0.send_replace(false);
    }
}

/// The external agents this gateway knows, and the player registrations it has under way.
#[derive(Debug, Clone)]
pub struct ExternalAgents {
    manager_link: ManagerLink,
    external: Arc<RwLock<HashMap<AgentId, Arc<ExternalAgent>>>>,
    /// Contact endpoints whose player registration (its greeting included) this gateway has under way:
    /// a call for the agent that finds it at the manager first waits for it ([`ExternalAgents::registering`]).
    registering: Arc<RwLock<HashMap<String, tokio::sync::watch::Receiver<bool>>>>,
}

/// The longest a call for an agent waits for its registration under way at this gateway: the greeting
/// and a little for the manager's answer.
const REGISTRATION_WAIT: Duration =
    Duration::from_secs(crate::inbound::greeting::GREETING_LIMIT.as_secs() + 1);

/// While it lives, a player registration is under way at its contact endpoint
/// ([`ExternalAgents::registering`]); dropped, it is over, however it ended.
#[derive(Debug)]
pub(crate) struct RegistrationUnderWay {
    registering: Arc<RwLock<HashMap<String, tokio::sync::watch::Receiver<bool>>>>,
    contact_endpoint: String,
    over: tokio::sync::watch::Sender<bool>,
}

impl Drop for RegistrationUnderWay {
    fn drop(&mut self) {
        if let Ok(mut registering) = self.registering.write() {
            registering.remove(&self.contact_endpoint);
        }
        self.over.send_replace(false);
    }
}

impl ExternalAgents {
    pub fn new(manager_link: ManagerLink) -> Self {
        Self {
            manager_link,
            external: Arc::default(),
            registering: Arc::default(),
        }
    }

    /// The `auth_token` on every message the league sends `agent_id` ([`outbound_token`]).
    pub(crate) fn outbound_token(&self, agent_id: &AgentId) -> String {
        outbound_token::OutboundToken::for_agent(self.manager_link.operator_token(), agent_id.as_str())
            .as_str()
            .to_owned()
    }

    /// Remembers an external agent the gateway just registered (or just looked up).
    pub fn remember(
        &self,
        agent_id: AgentId,
        contact_endpoint: String,
        dialect: Dialect,
        form: SenderForm,
    ) -> Arc<ExternalAgent> {
        self.insert(ExternalAgent::new(
            self.manager_link.operator_token(),
            agent_id,
            contact_endpoint,
            dialect,
            form,
        ))
    }

    /// [`ExternalAgents::remember`], for an agent about to be greeted: its greeting is under way before
    /// any other call can find it (the caller's [`ExternalAgent::greeting`] guard ends it).
    pub(crate) fn remember_to_greet(
        &self,
        agent_id: AgentId,
        contact_endpoint: String,
        dialect: Dialect,
    ) -> Arc<ExternalAgent> {
        let agent = ExternalAgent::new(
            self.manager_link.operator_token(),
            agent_id,
            contact_endpoint,
            dialect,
            SenderForm::default(),
        );
        agent.greeting.send_replace(true);
        self.insert(agent)
    }

    fn insert(&self, agent: ExternalAgent) -> Arc<ExternalAgent> {
        let agent = Arc::new(agent);
        if let Ok(mut external) = self.external.write() {
            external.insert(agent.agent_id.clone(), agent.clone());
        }
        agent
    }

    /// Sets the sender form learned for `agent`, and stores it with its registration so every replica
    /// that looks the agent up from now on uses it (in the background: the call in hand goes on).
    pub(crate) fn learned_sender_form(&self, agent: &ExternalAgent, form: SenderForm) {
        agent.set_sender_form(form);
        self.store_label(agent, SENDER_FORM_LABEL, form.as_str(), "sender form");
    }

    /// Sets the dialect learned for `agent` from its answers (an MCP server, ADR 0046), and stores it with
    /// its registration as [`ExternalAgents::learned_sender_form`] stores a sender form.
    pub(crate) fn learned_dialect(&self, agent: &ExternalAgent, dialect: Dialect) {
        agent.set_dialect(dialect);
        self.store_label(agent, DIALECT_LABEL, dialect.as_str(), "dialect");
    }

    /// Stores `key = value` with `agent`'s registration, in the background.
    fn store_label(&self, agent: &ExternalAgent, key: &str, value: &str, what: &'static str) {
        let request = self.manager_link.as_operator(SetAgentLabelRequest {
            agent_id: agent.agent_id.to_string(),
            key: key.to_owned(),
            value: value.to_owned(),
        });
        let mut agents = self.manager_link.agents.clone();
        let agent_id = agent.agent_id.clone();
        tokio::spawn(async move {
            if let Err(status) = agents.set_agent_label(request).await {
                tracing::warn!(%agent_id, %status, "cannot store the agent's {what}; other replicas learn it themselves");
            }
        });
    }

    /// Marks a player registration at `contact_endpoint` under way until the guard is dropped. The
    /// registration that starts a league makes the manager queue its first events at once: one may reach
    /// this gateway's bridge before the registration's answer does, and, sent before the greeting, in a
    /// sender form the agent refuses. [`ExternalAgents::external_agent`] waits for the registration instead.
    pub(crate) fn registering(&self, contact_endpoint: &str) -> RegistrationUnderWay {
        let (over, under_way) = tokio::sync::watch::channel(true);
        if let Ok(mut registering) = self.registering.write() {
            registering.insert(contact_endpoint.to_owned(), under_way);
        }
        RegistrationUnderWay {
            registering: self.registering.clone(),
            contact_endpoint: contact_endpoint.to_owned(),
            over,
        }
    }

    /// An external agent this gateway knows already (no manager call).
    pub(crate) fn known_agent(&self, agent_id: &AgentId) -> Option<Arc<ExternalAgent>> {
        self.external
            .read()
            .ok()
            .and_then(|external| external.get(agent_id).cloned())
    }

    /// An external agent by id, from the cache or the manager (it may have registered through another
    /// gateway replica, or before this one started).
    pub(crate) async fn external_agent(&self, agent_id: &AgentId) -> LeagueResult<Arc<ExternalAgent>> {
        if let Some(agent) = self.known_agent(agent_id) {
            return Ok(agent);
        }
        let response = self
            .manager_link
            .agents
            .clone()
            .get_agent(self.manager_link.as_operator(GetAgentRequest {
                agent_id: agent_id.to_string(),
            }))
            .await
            .map_err(to_league_error)?
            .into_inner()
            .agent
            .ok_or_else(|| {
                LeagueError::new(ErrorCode::PlayerNotRegistered, format!("no agent {agent_id}"))
            })?;
        // An agent registered without metadata: the canonical dialect, the default sender form.
        let meta = response.meta.unwrap_or_default();
        let dialect = meta
            .labels
            .get(DIALECT_LABEL)
            .and_then(|name| Dialect::parse(name))
            .unwrap_or(Dialect::Canonical);
        let form = meta
            .labels
            .get(SENDER_FORM_LABEL)
            .and_then(|name| SenderForm::parse(name))
            .unwrap_or_default();
        let under_way = self
            .registering
            .read()
            .ok()
            .and_then(|registering| registering.get(&meta.contact_endpoint).cloned());
        if let Some(mut under_way) = under_way {
            // Registered a moment ago through this gateway, which is still greeting it: the agent it
            // remembers then, with its sender form, is the one to call.
            tokio::time::timeout(REGISTRATION_WAIT, under_way.wait_for(|under_way| !under_way))
                .await
                .ok();
            if let Some(agent) = self.known_agent(agent_id) {
                return Ok(agent);
            }
        }
        // The manager answers for the agent asked about: its id is the one asked with.
        Ok(self.remember(agent_id.clone(), meta.contact_endpoint, dialect, form))
    }
}
