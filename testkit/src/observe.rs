//! Waiting for something a test can only see from outside (a row, a process's state, a file): polled,
//! with a bound, instead of a sleep standing in for it. [`observe`] in async tests, [`wait_for`] in
//! tests without a runtime (they drive the `league` binary with `std::process`).

use std::time::{Duration, Instant};

/// How often [`observe`] looks.
pub const POLL: Duration = Duration::from_millis(5);

/// How often [`wait_for`] looks: its checks may run a command each time (`league leagues`), so ten
/// times a second, not [`POLL`]'s two hundred.
pub const BLOCKING_POLL: Duration = Duration::from_millis(100);

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

/// [`observe`] for a test without a runtime: polls `check`, blocking the thread between looks, until it
/// returns a value; panics after `within`.
pub fn wait_for<T>(what: &str, within: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(Instant::now() < deadline, "not seen within {within:?}: {what}");
        std::thread::sleep(BLOCKING_POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_for_returns_what_the_check_found() {
        let mut looks = 0;
        let found = wait_for("the third look", Duration::from_secs(10), || {
            looks += 1;
            (looks == 3).then_some(looks)
        });
        assert_eq!(found, 3);
    }

    #[test]
    #[should_panic(expected = "not seen within 0ns: never")]
    fn wait_for_fails_saying_what_it_waited_for() {
        wait_for("never", Duration::ZERO, || None::<()>);
    }
}
