//! `league warnings`: the operator's view of each external agent's protocol-compliance warnings (what
//! the gateway accepted in lenient mode), from the manager.

use clap::Args;
use league_proto::v2::ListComplianceWarningsRequest;
use league_proto::v2::agents_service_client::AgentsServiceClient;
use league_runtime::credentials::operator_request;
use secrecy::SecretString;
use serde::Deserialize;

#[derive(Debug, Clone, Args)]
pub struct WarningsArgs {
    /// Only this agent's warnings (P01, REF02…).
    #[arg(long, default_value = "")]
    pub agent: String,
}

/// Where the manager is and the operator credential (`LEAGUE_MANAGER_URL`, `LEAGUE_OPERATOR_TOKEN`).
#[derive(Debug, Deserialize)]
#[serde(default)]
struct OperatorConfig {
    manager_url: String,
    operator_token: Option<SecretString>,
}

impl Default for OperatorConfig {
    fn default() -> Self {
        Self {
            manager_url: "http://127.0.0.1:50051".to_owned(),
            operator_token: None,
        }
    }
}

pub async fn warnings(args: WarningsArgs) -> anyhow::Result<()> {
    let config: OperatorConfig = league_runtime::config::load()?;
    let token = config
        .operator_token
        .ok_or_else(|| anyhow::anyhow!("LEAGUE_OPERATOR_TOKEN is required"))?;
    let mut client = AgentsServiceClient::new(league_runtime::grpc::channel(&config.manager_url)?);
    let warnings = client
        .list_compliance_warnings(operator_request(
            &token,
            ListComplianceWarningsRequest { agent_id: args.agent },
        ))
        .await
        .map_err(|status| anyhow::anyhow!("listing compliance warnings: {}", status.message()))?
        .into_inner()
        .warnings;
    if warnings.is_empty() {
        println!("no compliance warnings");
        return Ok(());
    }
    println!("{:<8} {:<32} {:>7}  example", "agent", "kind", "count");
    for warning in warnings {
        println!(
            "{:<8} {:<32} {:>7}  {}",
            warning.agent_id, warning.kind, warning.count, warning.detail
        );
    }
    Ok(())
}
