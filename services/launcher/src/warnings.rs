//! `league warnings`: the operator's view of each external agent's protocol-compliance warnings (what
//! the gateway accepted in lenient mode), from the manager.

use clap::Args;
use league_proto::v2::ListComplianceWarningsRequest;

use crate::operator::{Operator, failed};
use crate::output::{self, Format, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct WarningsArgs {
    /// Only this agent's warnings (P01, REF02…).
    #[arg(long, default_value = "")]
    pub agent: String,
    /// How to print: table, json or csv.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

pub async fn warnings(args: WarningsArgs) -> anyhow::Result<()> {
    let operator = Operator::connect()?;
    let request = operator.request(ListComplianceWarningsRequest { agent_id: args.agent });
    let listed = operator
        .agents()?
        .list_compliance_warnings(request)
        .await
        .map_err(failed("listing compliance warnings"))?
        .into_inner();
    if listed.warnings.is_empty() && args.output == Format::Table {
        println!("no compliance warnings");
        return Ok(());
    }
    let mut rows = Rows::new(&["agent", "kind", "count", "example"]);
    for warning in &listed.warnings {
        rows.push(vec![
            warning.agent_id.clone(),
            warning.kind.clone(),
            cell(warning.count),
            warning.detail.clone(),
        ]);
    }
    output::print(args.output, &rows, || {
        output::json("league.v2.ListComplianceWarningsResponse", &listed)
    })
}
