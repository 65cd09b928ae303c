//! The agents' compliance warnings as the live page shows them: who, what kind, how often, when last —
//! so a referee whose reports were refused (`refused_result`) is seen by everyone watching. An example
//! is shown only for the kinds whose examples the gateway writes from league facts (a refused report:
//! its match and field); the others may quote what an agent sent, its endpoint among them, which the
//! page never shows.

use league_manager_link::ManagerLink;
use league_proto::v2::ListComplianceWarningsRequest;
use league_v2::compliance::kinds;
use league_v2::timestamp;
use serde_json::{Value, json};

/// The most warnings the page lists (the most frequent first).
const SHOWN: usize = 200;

/// Kinds whose example the page may show.
const PUBLIC_EXAMPLES: [&str; 1] = [kinds::REFUSED_RESULT];

pub(crate) async fn warnings(manager_link: &ManagerLink) -> Result<Value, tonic::Status> {
    let request = manager_link.as_operator(ListComplianceWarningsRequest {
        agent_id: String::new(),
    });
    let mut listed = manager_link
        .agents
        .clone()
        .list_compliance_warnings(request)
        .await?
        .into_inner()
        .warnings;
    listed.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.agent_id.cmp(&b.agent_id)));
    let total = listed.len();
    let shown: Vec<Value> = listed
        .into_iter()
        .take(SHOWN)
        .map(|warning| {
            let example = PUBLIC_EXAMPLES
                .contains(&warning.kind.as_str())
                .then_some(warning.detail);
            let last_seen = warning
                .last_seen
                .and_then(|at| std::time::SystemTime::try_from(at).ok())
                .map(timestamp::format);
            json!({
                "agent_id": warning.agent_id,
                "kind": warning.kind,
                "count": warning.count,
                "last_seen": last_seen,
                "example": example,
            })
        })
        .collect();
    Ok(json!({"warnings": shown, "total": total}))
}
