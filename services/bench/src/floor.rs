//! The floor the specification sets for external agents: every message to one is its own HTTP exchange,
//! 12 a match. The bench measures, in the same run, the gateway's CPU a match with external agents and
//! the CPU of one bare exchange (wrk's `ping` at the gateway, both ends: the gateway's CPU and wrk's),
//! and reports the first over 12 of the second. Issue 56's goal: at most 1.5.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};

use league_launcher::children::cpu_time;
use league_launcher::run::Finished;

/// HTTP exchanges a match takes with external agents: to each of its two players the invitation, the
/// parity call and the game over (6), and the round's three notifications to every player
/// (ROUND_ANNOUNCEMENT, ROUND_COMPLETED, LEAGUE_STANDINGS_UPDATE: 3 × N over N/2 matches, 6 a match).
pub(super) const EXCHANGES_A_MATCH: u32 = 12;

/// The CPU the processes doing an exchange have used so far: the gateway (one process) and this
/// process's waited-for children (wrk, once it has exited).
#[derive(Debug, Clone, Copy)]
pub(super) struct Ends {
    gateway: Duration,
    children: Duration,
}

impl Ends {
    pub(super) fn now(finished: &Finished) -> Option<Ends> {
        let (_, pid) = finished
            .pids
            .iter()
            .find(|(name, _)| name.starts_with("gateway"))?;
        let children = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
        let seconds = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec().max(0) as u64) + Duration::from_micros(t.tv_usec().max(0) as u64)
        };
        Some(Ends {
            gateway: cpu_time(*pid)?,
            children: seconds(children.user_time()) + seconds(children.system_time()),
        })
    }

    /// Both ends' CPU from `self` to `later`, over `exchanges`.
    pub(super) fn per_exchange(self, later: Ends, exchanges: u64) -> Option<Duration> {
        let used = later.gateway.saturating_sub(self.gateway) + later.children.saturating_sub(self.children);
        (exchanges > 0).then(|| used / u32::try_from(exchanges).unwrap_or(u32::MAX))
    }
}

/// How many requests wrk made, from the line the bench's script prints (`…, 123456 requests`).
pub(super) fn requests(line: &str) -> Option<u64> {
    let (_, last) = line.rsplit_once(", ")?;
    last.strip_suffix(" requests")?.trim().parse().ok()
}

/// The report's lines: the gateway's CPU a match against 12 bare exchanges, and the ratio.
pub(super) fn render(gateway_per_match: Duration, per_exchange: Duration) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let floor = per_exchange * EXCHANGES_A_MATCH;
    format!(
        "\nexternal agents against the HTTP floor (ADR 0087):\n\n| gateway CPU a match (ms) | one bare exchange, both ends (ms) | {EXCHANGES_A_MATCH} bare exchanges (ms) | ratio (goal ≤ 1.5) |\n|---:|---:|---:|---:|\n| {:.3} | {:.4} | {:.3} | {:.2} |\n",
        ms(gateway_per_match),
        ms(per_exchange),
        ms(floor),
        gateway_per_match.as_secs_f64() / floor.as_secs_f64().max(f64::MIN_POSITIVE)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_s_request_count_is_read_from_the_script_s_line() {
        assert_eq!(
            requests("14321 requests/s, p50 0.41 ms, p99 1.20 ms, errors 0, 143210 requests"),
            Some(143_210)
        );
        assert_eq!(requests("14321 requests/s, p50 0.41 ms"), None);
    }

    #[test]
    fn the_ratio_is_a_match_over_twelve_exchanges() {
        let text = render(Duration::from_micros(600), Duration::from_micros(25));
        assert!(text.contains("| 0.600 | 0.0250 | 0.300 | 2.00 |"), "{text}");
    }

    #[test]
    fn both_ends_are_summed_and_shared_over_the_exchanges() {
        let ms = Duration::from_millis;
        let before = Ends {
            gateway: ms(100),
            children: ms(10),
        };
        let after = Ends {
            gateway: ms(300),
            children: ms(110),
        };
        assert_eq!(
            before.per_exchange(after, 1_000),
            Some(Duration::from_micros(300))
        );
        assert_eq!(before.per_exchange(after, 0), None);
    }
}
