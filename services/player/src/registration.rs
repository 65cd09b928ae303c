//! Registering the host's bots with the manager (LEAGUE_REGISTER_REQUEST), many at once.
//!
//! Every bot is served at the same gRPC address (`service_endpoint`); its `contact_endpoint`, which the
//! manager requires to be unique, is that address plus `/players/<name>`, its name `bot-<n>`, `n` its
//! place in the host's list (stable across restarts of the host). Display names need not be unique: bots
//! are told apart by the player ids the manager gives them.
//!
//! A host that restarts — on the same address or another one — resumes each bot whose identity it kept
//! under the bot's name (see [`resume_or_register_bots`]): the registration carries the bot's previous id
//! and token, and the manager gives the bot its identity back at its new endpoint, in its league, even
//! while that league is running (ADR 0040).

use anyhow::{Context, bail};
use futures::StreamExt;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{AgentMeta, RegisterPlayerRequest};
use league_proto::{ErrorCode, error_code};
use league_runtime::grpc::GrpcChannel;
use league_runtime::{Credentials, SavedIdentities};

use crate::behaviour::Behaviour;
use crate::host::PlayerHost;
use crate::strategy::GAME_TYPES;

/// The league.v2 protocol version the bots speak.
pub const PROTOCOL_VERSION: &str = "2.1.0";
/// Registrations in flight at once: enough to register hundreds of bots quickly, few enough not to
/// flood the manager's connection pool.
const MAX_IN_FLIGHT: usize = 16;

/// A bot to register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotSpec {
    pub display_name: String,
    pub behaviour: Behaviour,
}

/// A bot the manager accepted.
#[derive(Debug, Clone)]
pub struct RegisteredBot {
    pub player_id: String,
    pub credentials: Credentials,
    pub display_name: String,
    pub behaviour: Behaviour,
    /// The league the bot joined (the open one when none was named).
    pub league_id: String,
    /// Its contact endpoint.
    pub contact_endpoint: String,
}

/// Registers every bot of `specs` in `league_id` (empty: the league open for registration), at most
/// 16 at a time, and returns them in the order of `specs`.
///
/// Every registration is waited for, even after one fails, so that no accepted bot is silently dropped;
/// the error then names each bot that failed.
pub async fn register_bots(
    client: &mut ManagerServiceClient<GrpcChannel>,
    host: &PlayerHost,
    specs: &[BotSpec],
    service_endpoint: &str,
    league_id: &str,
) -> anyhow::Result<Vec<RegisteredBot>> {
    resume_or_register_bots(client, host, specs, service_endpoint, league_id, None).await
}

/// The name a bot's identity is kept under: `bot-<n>`, `n` its place in the host's list from 1.
pub fn bot_name(index: usize) -> String {
    format!("bot-{:02}", index + 1)
}

/// [`register_bots`], resuming every bot whose identity `store` kept (under its name) from a previous
/// run of this host instead of registering it anew, and keeping the identity of every bot registered now
/// in `store` the moment it is registered — also when others fail, so that a restart after a partial
/// registration resumes the ones that made it.
pub async fn resume_or_register_bots(
    client: &mut ManagerServiceClient<GrpcChannel>,
    host: &PlayerHost,
    specs: &[BotSpec],
    service_endpoint: &str,
    league_id: &str,
    store: Option<&SavedIdentities>,
) -> anyhow::Result<Vec<RegisteredBot>> {
    // Calls for these bots that arrive before their registration's answer wait for it (see PlayerHost).
    let _registering = host.registration();
    // Collected first: a lazy `map` of futures borrowing `specs` makes the whole future not `Send`
    // ("FnOnce is not general enough"), and the player service must be spawnable.
    let registrations: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            // Clients share one channel; a clone per request lets the requests run concurrently.
            let mut client = client.clone();
            async move {
                let name = bot_name(index);
                let registered = register(&mut client, host, spec, service_endpoint, &name, league_id, store)
                    .await
                    .with_context(|| {
                        format!(
                            "registering bot {name} {:?} ({})",
                            spec.display_name, spec.behaviour
                        )
                    });
                (index, registered)
            }
        })
        .collect();
    let mut outcomes: Vec<_> = futures::stream::iter(registrations)
        .buffer_unordered(MAX_IN_FLIGHT)
        .collect()
        .await;
    outcomes.sort_by_key(|&(index, _)| index);
    let (registered, failed): (Vec<_>, Vec<_>) = outcomes
        .into_iter()
        .map(|(_, outcome)| outcome)
        .partition(Result::is_ok);
    let failed: Vec<String> = failed
        .into_iter()
        .filter_map(Result::err)
        .map(|e| format!("{e:#}"))
        .collect();
    if !failed.is_empty() {
        bail!(
            "{} of {} bots could not be registered ({} were): {}",
            failed.len(),
            specs.len(),
            registered.len(),
            failed.join("; ")
        );
    }
    Ok(registered.into_iter().filter_map(Result::ok).collect())
}

async fn register(
    client: &mut ManagerServiceClient<GrpcChannel>,
    host: &PlayerHost,
    spec: &BotSpec,
    service_endpoint: &str,
    name: &str,
    league_id: &str,
    store: Option<&SavedIdentities>,
) -> anyhow::Result<RegisteredBot> {
    let contact_endpoint = format!("{service_endpoint}/players/{name}");
    let meta = AgentMeta {
        display_name: spec.display_name.clone(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        game_types: GAME_TYPES.map(str::to_owned).to_vec(),
        contact_endpoint: contact_endpoint.clone(),
        service_endpoint: service_endpoint.to_owned(),
        protocol_version: PROTOCOL_VERSION.to_owned(),
        labels: Default::default(),
    };
    let request = RegisterPlayerRequest {
        meta: Some(meta),
        league_id: league_id.to_owned(),
    };
    let previous = match store {
        Some(store) => store.load(name)?,
        None => None,
    };
    let mut answer = None;
    if let Some(previous) = &previous {
        match client.register_player(previous.request(request.clone())).await {
            Ok(response) => {
                tracing::info!(player_id = %previous.agent_id, "bot resumed its registration");
                answer = Some((response.into_inner(), Some(previous)));
            }
            // The manager forgot it (a new database): register anew.
            Err(status) if error_code::code_of(&status) == Some(ErrorCode::PlayerNotRegistered) => {
                tracing::warn!(player_id = %previous.agent_id, %status, "saved registration unknown; registering anew");
            }
            Err(status) => return Err(status).context("resuming the registration"),
        }
    }
    let (response, previous) = match answer {
        Some(answer) => answer,
        // Registration is the one unauthenticated call: the credentials come out of it.
        None => (client.register_player(request).await?.into_inner(), None),
    };
    if response.player_id.is_empty() || response.auth_token.is_empty() {
        bail!("the manager answered without a player id or token");
    }
    if previous.is_some_and(|previous| previous.agent_id != response.player_id) {
        bail!(
            "the manager resumed the bot under another id ({})",
            response.player_id
        );
    }
    let credentials = Credentials::new(&response.player_id, response.auth_token);
    if let Some(store) = store
        && previous.is_none()
    {
        store.save(name, &credentials)?;
    }
    // Served at once: the registration that completes the league can start it, and the first
    // invitation may follow this answer within microseconds.
    host.add_bot(&response.player_id, &spec.display_name, spec.behaviour);
    Ok(RegisteredBot {
        credentials,
        player_id: response.player_id,
        display_name: spec.display_name.clone(),
        behaviour: spec.behaviour,
        league_id: response.league_id,
        contact_endpoint,
    })
}
