//! A match's timings: the specification's defaults and the conversion from the wire's `MatchTiming`.
//!
//! Every field of `MatchTiming` is optional on the wire; an unset field takes the default below. A
//! duration that is set but cannot be used (negative, or zero for a timeout, which would fail every call)
//! also takes the default, so a bad league configuration cannot make every player lose. A zero
//! `retry_delay` is kept: it means "retry at once".

use std::time::Duration;

use league_proto::v2::MatchTiming;

/// Time for a player to acknowledge an invitation.
pub const DEFAULT_JOIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Time for a player to answer a move request.
pub const DEFAULT_MOVE_TIMEOUT: Duration = Duration::from_secs(30);
/// Time for a player to take a GAME_OVER (and a GAME_ERROR).
pub const DEFAULT_GAME_OVER_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts for one exchange before the player fails it.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// Pause between two attempts.
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(2);

/// The timings of one match, with every default applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub join_timeout: Duration,
    pub move_timeout: Duration,
    /// Bounds GAME_OVER and GAME_ERROR deliveries (both best effort).
    pub game_over_timeout: Duration,
    /// At least 1.
    pub max_attempts: u32,
    pub retry_delay: Duration,
    /// The lease length, when the league says; the worker otherwise estimates it from the lease expiry.
    pub lease_duration: Option<Duration>,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            join_timeout: DEFAULT_JOIN_TIMEOUT,
            move_timeout: DEFAULT_MOVE_TIMEOUT,
            game_over_timeout: DEFAULT_GAME_OVER_TIMEOUT,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            retry_delay: DEFAULT_RETRY_DELAY,
            lease_duration: None,
        }
    }
}

impl Timing {
    /// The timings an assignment carries, defaults filling whatever is unset or unusable.
    pub fn from_proto(timing: Option<&MatchTiming>) -> Timing {
        let defaults = Timing::default();
        let Some(timing) = timing else {
            return defaults;
        };
        Timing {
            join_timeout: positive(timing.join_timeout).unwrap_or(defaults.join_timeout),
            move_timeout: positive(timing.move_timeout).unwrap_or(defaults.move_timeout),
            game_over_timeout: positive(timing.game_over_timeout).unwrap_or(defaults.game_over_timeout),
            max_attempts: match timing.max_attempts {
                0 => defaults.max_attempts,
                attempts => attempts,
            },
            retry_delay: duration(timing.retry_delay).unwrap_or(defaults.retry_delay),
            lease_duration: positive(timing.lease_duration),
        }
    }
}

impl From<Option<&MatchTiming>> for Timing {
    fn from(timing: Option<&MatchTiming>) -> Timing {
        Timing::from_proto(timing)
    }
}

/// A wire duration as a `std` one; `None` when unset or negative (or beyond `std`'s range).
pub fn duration(value: Option<prost_types::Duration>) -> Option<Duration> {
    value.and_then(|value| Duration::try_from(value).ok())
}

/// Like [`duration`], but zero is unusable too.
fn positive(value: Option<prost_types::Duration>) -> Option<Duration> {
    duration(value).filter(|duration| !duration.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(seconds: i64, nanos: i32) -> Option<prost_types::Duration> {
        Some(prost_types::Duration { seconds, nanos })
    }

    #[test]
    fn unset_timings_take_the_specification_defaults() {
        let expected = Timing {
            join_timeout: Duration::from_secs(5),
            move_timeout: Duration::from_secs(30),
            game_over_timeout: Duration::from_secs(5),
            max_attempts: 3,
            retry_delay: Duration::from_secs(2),
            lease_duration: None,
        };
        assert_eq!(Timing::from_proto(None), expected);
        assert_eq!(Timing::from_proto(Some(&MatchTiming::default())), expected);
    }

    #[test]
    fn set_timings_are_converted() {
        let timing = MatchTiming {
            join_timeout: wire(1, 500_000_000),
            move_timeout: wire(10, 0),
            game_over_timeout: wire(0, 250_000_000),
            max_attempts: 5,
            retry_delay: wire(0, 0),
            lease_duration: wire(60, 0),
        };
        assert_eq!(
            Timing::from(Some(&timing)),
            Timing {
                join_timeout: Duration::from_millis(1500),
                move_timeout: Duration::from_secs(10),
                game_over_timeout: Duration::from_millis(250),
                max_attempts: 5,
                retry_delay: Duration::ZERO,
                lease_duration: Some(Duration::from_secs(60)),
            }
        );
    }

    #[test]
    fn unusable_durations_take_the_defaults() {
        let timing = MatchTiming {
            join_timeout: wire(0, 0),
            move_timeout: wire(-1, 0),
            game_over_timeout: wire(0, -5),
            max_attempts: 0,
            retry_delay: wire(-2, 0),
            lease_duration: wire(0, 0),
        };
        assert_eq!(Timing::from_proto(Some(&timing)), Timing::default());
    }
}
