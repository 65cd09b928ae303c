//! Waiting for something a test can only see from outside (a row, a process's state): polled, with a
//! bound, instead of a sleep standing in for it.

use std::time::{Duration, Instant};

/// How often [`observe`] looks.
pub const POLL: Duration = Duration::from_millis(5);

/// Polls `probe` until it returns a value; panics after `within`.
pub async fn observe<T>(what: &str, within: Duration, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(Instant::now() < deadline, "not seen within {within:?}: {what}");
        tokio::time::sleep(POLL).await;
    }
}
