//! Waiting out an outage of the league's own services in the middle of a match.
//!
//! Our own infrastructure failing is not a player's fault. A call to a player that fails because the
//! service in between is down ([`miss::is_outage`](super::miss::is_outage): the gateway or the player
//! host refused or dropped the connection, or the gateway could not look the player up) uses no attempt
//! and sends no GAME_ERROR: the same message is sent again, with a fresh deadline, after a backoff (from
//! 100 ms, doubling up to 2 s, with jitter) until the service answers.
//!
//! If the outage lasts longer than the patience — the match's lease duration, at least 5 s (30 s when
//! the lease is not known) — the match is [`Interrupted`]: it has no result, nobody is charged, and the
//! worker gives its lease back so that it goes back to the queue and is played again from the start.
//! Meanwhile the worker keeps renewing the lease, so a match waiting out an outage is not taken over.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};

/// The shortest time a match waits for the league's services to come back.
pub const MIN_PATIENCE: Duration = Duration::from_secs(5);
/// The patience when the match's lease duration is not known.
pub const DEFAULT_PATIENCE: Duration = Duration::from_secs(30);

/// A match stopped without a result because the league's own services stayed down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted {
    /// What stayed down, for the logs.
    pub reason: String,
}

/// How long a match waits for the league's services before it is interrupted, given the lease length
/// its assignment carries (`None` when it carries none).
pub(crate) fn patience(lease_duration: Option<Duration>) -> Duration {
    lease_duration.unwrap_or(DEFAULT_PATIENCE).max(MIN_PATIENCE)
}

/// The pauses between two calls made during an outage; never runs out (the patience bounds the wait).
pub(crate) fn pauses() -> impl Iterator<Item = Duration> {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_secs(2))
        .with_jitter()
        .without_max_times()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patience_is_the_lease_but_never_shorter_than_the_minimum() {
        let lease = |seconds: Option<u64>| seconds.map(Duration::from_secs);
        assert_eq!(patience(lease(Some(60))), Duration::from_secs(60));
        assert_eq!(patience(lease(Some(1))), MIN_PATIENCE);
        assert_eq!(patience(lease(None)), DEFAULT_PATIENCE);
    }

    #[test]
    fn pauses_grow_and_stay_bounded() {
        let pauses: Vec<_> = pauses().take(20).collect();
        assert_eq!(pauses.len(), 20);
        assert!(pauses.iter().all(|pause| *pause <= Duration::from_secs(4)));
        assert!(pauses[19] >= Duration::from_secs(2));
    }
}
