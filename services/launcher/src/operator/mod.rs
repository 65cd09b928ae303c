//! The operator's commands against a running system (`league leagues | create | enroll | start |
//! pause | resume | cancel | withdraw | standings | schedule | match | player | ratings | warnings |
//! referees | revoke-referee | referee-token`). Where the system is comes from `LEAGUE_MANAGER_URL` and
//! `LEAGUE_OPERATOR_TOKEN` (or the `LEAGUE_CONFIG` file), else from the state file of a `league run`
//! or `league serve` on this machine. The reading commands (`leagues | standings | schedule | match |
//! player | ratings`) read a past league's database too (`--database`): they are the one way to ask each of
//! these questions, whether the league is running or long over.

pub mod cancel;
pub mod create;
pub mod enroll;
pub mod leagues;
pub mod match_view;
pub mod pause;
pub mod player;
pub mod players;
pub mod ratings;
pub mod referees;
pub mod schedule;
pub mod standings;
pub mod start;
pub mod withdraw;

use std::path::PathBuf;

use clap::Args;
use league_domain::LeagueId;
use league_proto::v2::ListLeaguesRequest;
use league_proto::v2::agents_service_client::AgentsServiceClient;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_runtime::credentials::operator_request;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;
use serde::Deserialize;

use crate::output::Format;
use crate::report::source::{self, Connected, Source};
use crate::state::{State, state_file};

/// What every operator command takes.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// How to print: table, json or csv.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// The league (default: LEAGUE_ID, else the running system's league, else the newest).
    #[arg(long)]
    pub league: Option<LeagueId>,
}

/// What every reading command takes: [`Common`], and where to read the league.
#[derive(Debug, Clone, Args)]
pub struct Reading {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub from: ReadFrom,
}

impl Reading {
    pub async fn connect(&self) -> anyhow::Result<Operator> {
        self.from.connect().await
    }
}

/// Where a reading command reads: the running system, or a league database.
#[derive(Debug, Clone, Args)]
pub struct ReadFrom {
    /// Read a league database instead of the running system: a connection URL, or the name of a
    /// database on the local server (a run kept with `league run --keep`, or `league serve`'s).
    #[arg(long)]
    pub database: Option<String>,
    /// Where a private Postgres cluster lives, if `league run` started one (read with --database).
    #[arg(long, default_value = ".league/postgres")]
    pub cluster_dir: PathBuf,
}

impl ReadFrom {
    /// The running system's manager, or, with `--database`, the manager's queries served in this
    /// process over that database (read-only: see [`crate::report::source`]).
    pub async fn connect(&self) -> anyhow::Result<Operator> {
        let Some(database) = &self.database else {
            return Operator::connect();
        };
        let url = source::database_url(database, &self.cluster_dir).await?;
        let connected = source::connect(Source::Database(url)).await?;
        Ok(Operator {
            manager: connected.client.clone(),
            agents: None,
            token: connected.token.clone(),
            default_league: None,
            _database: Some(connected),
        })
    }
}

/// The settings an operator command reads (`LEAGUE_MANAGER_URL`, `LEAGUE_OPERATOR_TOKEN`, `LEAGUE_ID`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Settings {
    manager_url: Option<String>,
    operator_token: Option<SecretString>,
    #[serde(rename = "id")]
    league_id: Option<String>,
}

/// The league named by `LEAGUE_ID` (or the `LEAGUE_CONFIG` file), which every command reads when none
/// is named on its command line.
pub fn league_id_setting() -> anyhow::Result<Option<String>> {
    let settings: Settings = league_runtime::config::load()?;
    Ok(settings.league_id)
}

/// A connection to the manager with the operator's credential.
#[derive(Debug)]
pub struct Operator {
    pub manager: ManagerServiceClient<GrpcChannel>,
    /// None when reading a database: it answers the league's queries, not the agents'.
    agents: Option<AgentsServiceClient<GrpcChannel>>,
    pub token: SecretString,
    default_league: Option<String>,
    /// The query service over a database (`--database`), kept up while the command runs.
    _database: Option<Connected>,
}

impl Operator {
    pub fn connect() -> anyhow::Result<Self> {
        let settings: Settings = league_runtime::config::load()?;
        let state = State::read()?;
        if let (None, Some(state)) = (&settings.manager_url, &state) {
            eprintln!("asking {}", state.describe());
        }
        let manager_url = settings
            .manager_url
            .or_else(|| state.as_ref().map(|state| state.manager_url.clone()))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "no manager to ask: set LEAGUE_MANAGER_URL (and LEAGUE_OPERATOR_TOKEN), or start \
                     `league serve` on this machine (it writes {})",
                    state_file().display()
                )
            })?;
        let token = match (settings.operator_token, &state) {
            (Some(token), _) => token,
            (None, Some(state)) => state.operator_token()?,
            (None, None) => anyhow::bail!("LEAGUE_OPERATOR_TOKEN is required"),
        };
        let channel = league_runtime::grpc::channel(&manager_url)?;
        Ok(Self {
            manager: ManagerServiceClient::new(channel.clone()),
            agents: Some(AgentsServiceClient::new(channel)),
            token,
            default_league: settings.league_id.or(state.map(|state| state.league_id)),
            _database: None,
        })
    }

    /// The agents' service of the running system.
    pub fn agents(&self) -> anyhow::Result<AgentsServiceClient<GrpcChannel>> {
        self.agents.clone().ok_or_else(|| {
            anyhow::anyhow!("a league database answers no questions about agents: ask the running system")
        })
    }

    pub fn request<T>(&self, message: T) -> tonic::Request<T> {
        operator_request(&self.token, message)
    }

    /// The league a command is about: the one asked for, else the default, else the newest.
    pub async fn league(&mut self, asked: Option<LeagueId>) -> anyhow::Result<String> {
        if let Some(league) = asked {
            return Ok(league.into());
        }
        if let Some(league) = self.default_league.clone() {
            return Ok(league);
        }
        let newest = self
            .manager
            .list_leagues(self.request(ListLeaguesRequest {
                page_size: 1,
                page_token: String::new(),
            }))
            .await
            .map_err(failed("listing leagues"))?
            .into_inner()
            .leagues
            .into_iter()
            .next();
        newest
            .map(|league| league.league_id)
            .ok_or_else(|| anyhow::anyhow!("there is no league yet (`league create` makes one)"))
    }
}

/// An RPC's failure as the manager put it, or, when the manager was not reached, as the connection
/// failed: tonic's own words ("tcp connect error") say nothing until their source does.
pub fn failed(doing: &'static str) -> impl Fn(tonic::Status) -> anyhow::Error {
    move |status| {
        let mut why = status.message().to_owned();
        let mut next = std::error::Error::source(&status);
        while let Some(error) = next {
            // Each layer's words once: tonic's and hyper's errors repeat what they wrap.
            let said = error.to_string();
            if !why.contains(&said) {
                why.push_str(": ");
                why.push_str(&said);
            }
            next = error.source();
        }
        anyhow::anyhow!("{doing}: {why}")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::failed;

    #[test]
    fn a_manager_not_reached_is_told_by_the_connection_s_failure() {
        // As tonic gives it: a transport error wrapping the connect error again, then the refusal.
        #[derive(Debug)]
        struct Layer(&'static str, Option<std::io::Error>);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_ref().map(|e| e as _)
            }
        }
        let refused = std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            Layer("Connection refused (os error 111)", None),
        );
        let mut status = tonic::Status::unavailable("tcp connect error");
        status.set_source(Arc::new(Layer("tcp connect error", Some(refused))));
        assert_eq!(
            failed("listing leagues")(status).to_string(),
            "listing leagues: tcp connect error: Connection refused (os error 111)"
        );
        let refused = tonic::Status::not_found("E007 no league x");
        assert_eq!(
            failed("reading")(refused).to_string(),
            "reading: E007 no league x"
        );
    }
}
