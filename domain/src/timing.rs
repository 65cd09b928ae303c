//! A match's timings: the specification's values, written once as [`Timing`]'s `Default`, and the
//! conversions from and to the wire's `MatchTiming`.
//!
//! Every field of `MatchTiming` is optional on the wire; an unset field takes the default. A duration
//! that is set but cannot be used (negative, or zero for a timeout or the lease, which would fail every
//! call) also takes the default, so a bad league configuration cannot make every player lose. A zero
//! `retry_delay` is kept: it means "retry at once". `max_attempts` 0 (unset) takes the default.

use std::time::Duration;

use league_proto::v2::MatchTiming;

/// Time a referee has to report, on top of playing the match by the league's timings.
pub const REPORT_ALLOWANCE: Duration = Duration::from_secs(10);

/// Renewals a referee sends in one lease: a lease of 10 s is renewed every 2 s, so a referee that stops
/// renewing loses its matches within one lease, while one that misses up to four renewals in a row (a
/// manager restarting, a slow network) keeps them (ADR 0042).
pub const RENEWALS_PER_LEASE: u32 = 5;

/// The shortest pause between two renewals, whatever the lease (a millisecond lease in a test).
pub const MIN_RENEWAL_INTERVAL: Duration = Duration::from_millis(50);

/// The timings of one league's matches, with every default applied. With the `serde` feature it is
/// also the shape of the manager's `LEAGUE_*` timing variables (humantime strings: "5s", "250ms").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize), serde(default))]
pub struct Timing {
    /// Time for a player to acknowledge an invitation.
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub join_timeout: Duration,
    /// Time for a player to answer a move request.
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub move_timeout: Duration,
    /// Time for a player to take a GAME_OVER (and a GAME_ERROR; both best effort).
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub game_over_timeout: Duration,
    /// Attempts for one exchange before the player fails it; at least 1.
    pub max_attempts: u32,
    /// Pause between two attempts.
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub retry_delay: Duration,
    /// How long a referee holds a match between two renewals of its lease.
    #[cfg_attr(feature = "serde", serde(with = "humantime_serde"))]
    pub lease_duration: Duration,
}

impl Default for Timing {
    /// The specification's timings, and the league's lease.
    fn default() -> Timing {
        Timing {
            join_timeout: Duration::from_secs(5),
            move_timeout: Duration::from_secs(30),
            game_over_timeout: Duration::from_secs(5),
            max_attempts: 3,
            retry_delay: Duration::from_secs(2),
            lease_duration: Duration::from_secs(10),
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
            lease_duration: positive(timing.lease_duration).unwrap_or(defaults.lease_duration),
        }
    }

    /// The lease length `timing` gives, when it gives a usable one. A referee that is not told
    /// estimates the lease from its expiry rather than assume the default.
    pub fn given_lease(timing: Option<&MatchTiming>) -> Option<Duration> {
        positive(timing?.lease_duration)
    }

    /// The timings on the wire, every field set.
    pub fn to_proto(&self) -> MatchTiming {
        MatchTiming {
            join_timeout: wire(self.join_timeout),
            move_timeout: wire(self.move_timeout),
            game_over_timeout: wire(self.game_over_timeout),
            max_attempts: self.max_attempts,
            retry_delay: wire(self.retry_delay),
            lease_duration: wire(self.lease_duration),
        }
    }

    /// How often a referee renews a lease of `lease_duration`: a fifth of it ([`RENEWALS_PER_LEASE`]).
    pub fn renewal_interval(lease_duration: Duration) -> Duration {
        (lease_duration / RENEWALS_PER_LEASE).max(MIN_RENEWAL_INTERVAL)
    }

    /// The longest a match may take: every attempt at the invitation and the move, the GAME_OVER, and
    /// time to report.
    pub fn match_budget(&self) -> Duration {
        (self.join_timeout + self.move_timeout + self.retry_delay * 2) * self.max_attempts
            + self.game_over_timeout
            + REPORT_ALLOWANCE
    }
}

impl From<Option<&MatchTiming>> for Timing {
    fn from(timing: Option<&MatchTiming>) -> Timing {
        Timing::from_proto(timing)
    }
}

impl From<Timing> for MatchTiming {
    fn from(timing: Timing) -> MatchTiming {
        timing.to_proto()
    }
}

/// A wire duration as a `std` one; `None` when unset or negative (or beyond `std`'s range).
fn duration(value: Option<prost_types::Duration>) -> Option<Duration> {
    value.and_then(|value| Duration::try_from(value).ok())
}

/// Like [`duration`], but zero is unusable too.
fn positive(value: Option<prost_types::Duration>) -> Option<Duration> {
    duration(value).filter(|duration| !duration.is_zero())
}

/// A `std` duration for the wire; `None` beyond the wire's range (some ten thousand years).
fn wire(value: Duration) -> Option<prost_types::Duration> {
    prost_types::Duration::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(seconds: i64, nanos: i32) -> Option<prost_types::Duration> {
        Some(prost_types::Duration { seconds, nanos })
    }

    fn millis(millis: u64) -> Option<prost_types::Duration> {
        wire(Duration::from_millis(millis))
    }

    #[test]
    fn unset_timings_take_the_specification_defaults() {
        let expected = Timing {
            join_timeout: Duration::from_secs(5),
            move_timeout: Duration::from_secs(30),
            game_over_timeout: Duration::from_secs(5),
            max_attempts: 3,
            retry_delay: Duration::from_secs(2),
            lease_duration: Duration::from_secs(10),
        };
        assert_eq!(Timing::default(), expected);
        assert_eq!(Timing::from_proto(None), expected);
        assert_eq!(Timing::from_proto(Some(&MatchTiming::default())), expected);
    }

    #[test]
    fn set_timings_are_converted() {
        let timing = MatchTiming {
            join_timeout: of(1, 500_000_000),
            move_timeout: of(10, 0),
            game_over_timeout: of(0, 250_000_000),
            max_attempts: 5,
            retry_delay: of(0, 0),
            lease_duration: of(20, 0),
        };
        assert_eq!(
            Timing::from(Some(&timing)),
            Timing {
                join_timeout: Duration::from_millis(1500),
                move_timeout: Duration::from_secs(10),
                game_over_timeout: Duration::from_millis(250),
                max_attempts: 5,
                retry_delay: Duration::ZERO,
                lease_duration: Duration::from_secs(20),
            }
        );
    }

    #[test]
    fn unusable_durations_take_the_defaults() {
        let timing = MatchTiming {
            join_timeout: of(0, 0),
            move_timeout: of(-1, 0),
            game_over_timeout: of(0, -5),
            max_attempts: 0,
            retry_delay: of(-2, 0),
            lease_duration: of(0, 0),
        };
        assert_eq!(Timing::from_proto(Some(&timing)), Timing::default());
    }

    #[test]
    fn only_a_usable_lease_is_given() {
        let lease = |lease_duration| {
            Timing::given_lease(Some(&MatchTiming {
                lease_duration,
                ..MatchTiming::default()
            }))
        };
        assert_eq!(lease(of(20, 0)), Some(Duration::from_secs(20)));
        assert_eq!(lease(None), None);
        assert_eq!(lease(of(0, 0)), None);
        assert_eq!(lease(of(-1, 0)), None);
        assert_eq!(Timing::given_lease(None), None);
    }

    #[test]
    fn timings_go_to_the_wire_and_back_unchanged() {
        let timing = Timing {
            join_timeout: Duration::from_millis(1500),
            retry_delay: Duration::ZERO,
            ..Timing::default()
        };
        let wired = MatchTiming::from(timing);
        assert_eq!(wired.join_timeout, millis(1500));
        assert_eq!(wired.retry_delay, millis(0));
        assert_eq!(wired.lease_duration, millis(10_000));
        assert_eq!(Timing::from_proto(Some(&wired)), timing);
    }

    #[test]
    fn a_silent_referee_is_noticed_within_seconds() {
        // The default lease: a referee that stops renewing loses its matches within 10 s, and renews
        // five times in a lease, so four missed renewals in a row cost it nothing.
        let lease = Timing::default().lease_duration;
        assert_eq!(lease, Duration::from_secs(10));
        assert_eq!(Timing::renewal_interval(lease), Duration::from_secs(2));
        assert_eq!(
            Timing::renewal_interval(Duration::from_millis(100)),
            MIN_RENEWAL_INTERVAL
        );
    }

    #[test]
    fn a_match_budget_covers_every_attempt_and_the_report() {
        // The specification's timings: 3 × (5 + 30 + 2 × 2) + 5 + 10.
        assert_eq!(Timing::default().match_budget(), Duration::from_secs(132));
        let fast = Timing::from_proto(Some(&MatchTiming {
            join_timeout: millis(100),
            move_timeout: millis(100),
            retry_delay: millis(10),
            game_over_timeout: millis(100),
            max_attempts: 1,
            lease_duration: None,
        }));
        assert_eq!(fast.match_budget(), Duration::from_millis(320) + REPORT_ALLOWANCE);
    }

    #[test]
    fn a_league_s_own_timings_win_over_the_defaults() {
        // A league that gives players 45 s to move: an external referee's move calls wait that long.
        let slow = Timing::from_proto(Some(&MatchTiming {
            move_timeout: millis(45_000),
            join_timeout: millis(8_000),
            ..MatchTiming::default()
        }));
        assert_eq!(slow.move_timeout, Duration::from_secs(45));
        assert_eq!(slow.join_timeout, Duration::from_secs(8));
        assert_eq!(slow.game_over_timeout, Duration::from_secs(5));
    }
}
