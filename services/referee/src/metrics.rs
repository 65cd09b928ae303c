//! The referee's Prometheus metrics (rendered by the admin server's `/metrics`; names and meanings in
//! docs/observability.md). A match is counted once, when this referee decides its result; a player's
//! failures as they happen.

use std::sync::LazyLock;

use league_runtime::metrics::register;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Cause {
    cause: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reply {
    reply: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Exchange {
    exchange: &'static str,
}

struct RefereeMetrics {
    matches_completed: Counter,
    outcomes: Family<Outcome, Counter>,
    technical_losses: Family<Cause, Counter>,
    timeouts: Family<Reply, Counter>,
    retries: Family<Exchange, Counter>,
    report_retries: Counter,
    outage_retries: Counter,
    interrupted: Counter,
}

static METRICS: LazyLock<RefereeMetrics> = LazyLock::new(|| {
    let metrics = RefereeMetrics {
        matches_completed: Counter::default(),
        outcomes: Family::default(),
        technical_losses: Family::default(),
        timeouts: Family::default(),
        retries: Family::default(),
        report_retries: Counter::default(),
        outage_retries: Counter::default(),
        interrupted: Counter::default(),
    };
    register(
        "league_referee_matches_completed",
        "Matches this referee ran to a result",
        metrics.matches_completed.clone(),
    );
    register(
        "league_referee_match_outcomes",
        "Matches this referee ran to a result, by outcome (win, draw, technical_loss, double_forfeit)",
        metrics.outcomes.clone(),
    );
    register(
        "league_referee_technical_losses",
        "Players at fault in a technical loss or double forfeit, by cause (timeout, unreachable, refused, invalid_move, declined, referee_error)",
        metrics.technical_losses.clone(),
    );
    register(
        "league_referee_player_timeouts",
        "Exchanges with players that ended in E001 (no answer in time), by the reply awaited",
        metrics.timeouts.clone(),
    );
    register(
        "league_referee_player_retries",
        "Invitations and move requests sent again after a miss, by exchange",
        metrics.retries.clone(),
    );
    register(
        "league_referee_report_retries",
        "Result reports to the manager sent again after a transient failure",
        metrics.report_retries.clone(),
    );
    register(
        "league_referee_outage_retries",
        "Calls to players made again because the league's own services in between were down (no attempt used, nobody charged)",
        metrics.outage_retries.clone(),
    );
    register(
        "league_referee_matches_interrupted",
        "Matches stopped without a result because the league's own services stayed down; given back to the queue",
        metrics.interrupted.clone(),
    );
    metrics
});

/// Registers the referee's metrics, so they read 0 before the first match.
pub fn register_all() {
    LazyLock::force(&METRICS);
}

pub(crate) fn match_completed(outcome: &'static str) {
    METRICS.matches_completed.inc();
    METRICS.outcomes.get_or_create(&Outcome { outcome }).inc();
}

pub(crate) fn player_at_fault(cause: &'static str) {
    METRICS.technical_losses.get_or_create(&Cause { cause }).inc();
}

pub(crate) fn player_timed_out(reply: &str) {
    METRICS
        .timeouts
        .get_or_create(&Reply {
            reply: reply.to_owned(),
        })
        .inc();
}

pub(crate) fn player_retried(exchange: &'static str) {
    METRICS.retries.get_or_create(&Exchange { exchange }).inc();
}

pub(crate) fn report_retried() {
    METRICS.report_retries.inc();
}

pub(crate) fn outage_waited() {
    METRICS.outage_retries.inc();
}

pub(crate) fn match_interrupted() {
    METRICS.interrupted.inc();
}
