//! The live page's metrics: viewers connected to this gateway's event streams, and the snapshots its
//! watchers fetched from the manager — one per change of a watched league, however many viewers — and
//! the status checks that tell them of a change.

use std::sync::LazyLock;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;

pub(crate) static VIEWERS: LazyLock<Gauge> = LazyLock::new(|| {
    let gauge = Gauge::default();
    league_runtime::metrics::register(
        "league_gateway_live_viewers",
        "Live-page event streams open on this gateway",
        gauge.clone(),
    );
    gauge
});

pub(crate) static SNAPSHOTS: LazyLock<Counter> = LazyLock::new(|| {
    let counter = Counter::default();
    league_runtime::metrics::register(
        "league_gateway_live_snapshots",
        "League snapshots fetched from the manager for live-page viewers (one per change, shared by all)",
        counter.clone(),
    );
    counter
});

pub(crate) static POLLS: LazyLock<Counter> = LazyLock::new(|| {
    let counter = Counter::default();
    league_runtime::metrics::register(
        "league_gateway_live_polls",
        "Status checks the live page's watchers made (one per watched league per interval)",
        counter.clone(),
    );
    counter
});

/// A viewer's place among this gateway's viewers: counted while it lives.
#[derive(Debug)]
pub(crate) struct Seat {
    pub(crate) share: league_runtime::fair_share::Share,
}

impl Seat {
    pub(crate) fn new(share: league_runtime::fair_share::Share) -> Self {
        VIEWERS.inc();
        Self { share }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        VIEWERS.dec();
    }
}
