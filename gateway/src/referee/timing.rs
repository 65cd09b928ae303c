//! A league's match timings as an external referee's match uses them: how long its calls to players may
//! take, and how long the whole match may keep its lease. Unset timings take the specification's defaults.

use std::time::Duration;

use league_proto::v2::MatchTiming;

/// Time a referee has to report, on top of playing the match by the league's timings.
const REPORT_ALLOWANCE: Duration = Duration::from_secs(10);

/// The timings of one league.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing(pub MatchTiming);

impl Timing {
    /// Time for a player to acknowledge an invitation.
    pub fn join(&self) -> Duration {
        duration(self.0.join_timeout.as_ref(), Duration::from_secs(5))
    }

    /// Time for a player to choose or move.
    pub fn moves(&self) -> Duration {
        duration(self.0.move_timeout.as_ref(), Duration::from_secs(30))
    }

    /// Time for a player to take a GAME_OVER.
    pub fn game_over(&self) -> Duration {
        duration(self.0.game_over_timeout.as_ref(), Duration::from_secs(5))
    }

    pub fn retry_delay(&self) -> Duration {
        duration(self.0.retry_delay.as_ref(), Duration::from_secs(2))
    }

    pub fn attempts(&self) -> u32 {
        self.0.max_attempts.max(1)
    }

    /// The longest a match may take: every attempt at the invitation and the move, the GAME_OVER, and
    /// time to report.
    pub fn match_budget(&self) -> Duration {
        (self.join() + self.moves() + self.retry_delay() * 2) * self.attempts()
            + self.game_over()
            + REPORT_ALLOWANCE
    }
}

fn duration(value: Option<&prost_types::Duration>, default: Duration) -> Duration {
    value
        .and_then(|d| Duration::try_from(*d).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(default)
}

/// Milliseconds for the wire (`timing.move_timeout_ms`…); `null` when unset.
pub fn millis(value: Option<&prost_types::Duration>) -> serde_json::Value {
    value
        .and_then(|d| Duration::try_from(*d).ok())
        .map_or(serde_json::Value::Null, |d| (d.as_millis() as u64).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(millis: u64) -> Option<prost_types::Duration> {
        prost_types::Duration::try_from(Duration::from_millis(millis)).ok()
    }

    #[test]
    fn a_match_budget_covers_every_attempt_and_the_report() {
        let spec = Timing(MatchTiming {
            max_attempts: 3,
            ..MatchTiming::default()
        });
        // The specification's timings: 3 × (5 + 30 + 2 × 2) + 5 + 10.
        assert_eq!(spec.match_budget(), Duration::from_secs(132));
        let fast = Timing(MatchTiming {
            join_timeout: of(100),
            move_timeout: of(100),
            retry_delay: of(10),
            game_over_timeout: of(100),
            max_attempts: 1,
            lease_duration: None,
        });
        assert_eq!(fast.match_budget(), Duration::from_millis(320) + REPORT_ALLOWANCE);
    }

    #[test]
    fn a_league_s_own_timings_win_over_the_defaults() {
        // A league that gives players 45 s to move: an external referee's move calls wait that long.
        let slow = Timing(MatchTiming {
            move_timeout: of(45_000),
            join_timeout: of(8_000),
            ..MatchTiming::default()
        });
        assert_eq!(slow.moves(), Duration::from_secs(45));
        assert_eq!(slow.join(), Duration::from_secs(8));
        assert_eq!(slow.game_over(), Duration::from_secs(5));
        assert_eq!(Timing(MatchTiming::default()).moves(), Duration::from_secs(30));
    }
}
