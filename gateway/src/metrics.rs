//! The gateway's metrics: requests by method and outcome, and calls to external agents by outcome.

use std::sync::LazyLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    /// The resolved league.v2 message type or action (never the raw method, which agents choose).
    pub(crate) method: String,
    /// `ok`, or the league.v2 / JSON-RPC error code.
    pub(crate) status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct OutboundLabels {
    pub(crate) message_type: &'static str,
    /// `ok`, `not_implemented`, `refused`, or the league.v2 code (E001 timeout, E009 connection…).
    pub(crate) outcome: &'static str,
}

pub(crate) static REQUESTS: LazyLock<Family<RequestLabels, Counter>> = LazyLock::new(|| {
    let family = Family::default();
    league_runtime::metrics::register(
        "league_gateway_requests",
        "JSON-RPC calls received, by message type and outcome",
        family.clone(),
    );
    family
});

pub(crate) static OUTBOUND: LazyLock<Family<OutboundLabels, Counter>> = LazyLock::new(|| {
    let family = Family::default();
    league_runtime::metrics::register(
        "league_gateway_agent_calls",
        "Calls to external agents, by message type and outcome",
        family.clone(),
    );
    family
});
