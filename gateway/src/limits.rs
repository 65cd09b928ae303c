//! The gateway's request limits, and the one place that applies them to calls. Every call, whatever
//! carries it (a single JSON-RPC call, each element of a batch, an MCP `tools/call`, any dialect), comes
//! through [`Inbound::handle`](crate::inbound::Inbound::handle), which asks [`RequestLimits::admit`]
//! once the call is resolved; every token the gateway cannot vouch for from its own cache of verified
//! credentials is checked with the manager only through [`RequestLimits::authentication`]. Nothing else
//! decides.
//!
//! - **per address**, before anything the request says is believed (`LEAGUE_ADDRESS_RATE_LIMIT` a
//!   second, per HTTP request): a client that names a new sender on every request still spends its one
//!   address's allowance;
//! - **per agent** (`LEAGUE_AGENT_RATE_LIMIT` a second, per call): the address and the sender the message
//!   names, so agents that share an address (a NAT, one host running several) each have their own
//!   allowance, and naming someone else spends only the namer's address's allowance;
//! - **registrations per address** (`LEAGUE_REGISTRATION_RATE_LIMIT` a minute, per call): registering
//!   is what makes a league big, so one address cannot fill it;
//! - **failed authentications per address** (`LEAGUE_FAILED_AUTH_LIMIT` a minute): a token the manager
//!   has to look up is let through only while the address could still fail that many times counting
//!   the lookups already in flight, so even a batch or a burst of concurrent requests reaches the
//!   manager at most that many times (plus what grew back). A lookup that finds only lookups in flight
//!   in its way waits for them to settle (many agents behind one address starting at once are good
//!   tokens, and give their places back); an address with no room for another failure even then is
//!   refused everything (429) until its allowance grows back by one.
//!
//! The rates are GCRA limiters (`governor`) kept per key, with bursts the size of a second's (or a
//! minute's) allowance; the failed authentications are a leaky bucket of their own, because a lookup in
//! flight must hold its place before anyone knows whether it fails. The connection bounds are in
//! connections.rs, the body's where it is read (http.rs).

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota};
use league_proto::ErrorCode;
use tokio::sync::Notify;

use league_v2::league_error::LeagueError;

/// Keys kept by one limiter before those whose allowance is full again are forgotten.
const MAX_KEYS: usize = 10_000;
/// The longest a token's lookup waits for the lookups in flight from its address to settle.
pub(crate) const SETTLE_WAIT: Duration = Duration::from_secs(5);

/// The configured rates (see the module's documentation).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rates {
    pub(crate) per_address: u32,
    pub(crate) per_agent: u32,
    pub(crate) failed_auth_per_minute: u32,
    pub(crate) registrations_per_minute: u32,
}

/// Every request-rate bound of one gateway.
#[derive(Debug)]
pub(crate) struct RequestLimits {
    address: Keyed<IpAddr>,
    agent: Keyed<(IpAddr, String)>,
    registrations: Keyed<IpAddr>,
    failures: Arc<Failures>,
}

/// What kind of call is being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    Registration,
    Other,
}

impl RequestLimits {
    pub(crate) fn new(rates: Rates) -> Self {
        let per_second = |n: u32| Quota::per_second(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN));
        let per_minute = |n: u32| Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN));
        Self {
            address: Keyed::new(per_second(rates.per_address)),
            agent: Keyed::new(per_second(rates.per_agent)),
            registrations: Keyed::new(per_minute(rates.registrations_per_minute)),
            failures: Arc::new(Failures::new(rates.failed_auth_per_minute.max(1))),
        }
    }

    /// Whether an HTTP request from `ip` may be read at all: its address's rate, and room for another
    /// failed authentication.
    pub(crate) fn allow_address(&self, ip: IpAddr) -> bool {
        !self.failures.barred(ip) && self.address.allow(&ip)
    }

    /// Whether one call from `ip`, naming `sender` (`None`: names none), may go on: room for another
    /// failed authentication, its agent's rate, and its address's registrations when it is one. Every
    /// call is admitted here, whatever carried it.
    pub(crate) fn admit(&self, ip: IpAddr, sender: Option<&str>, kind: CallKind) -> Result<(), LeagueError> {
        if self.failures.barred(ip) {
            return Err(rate_limited(
                "too many failed authentications from this address; retry later",
            ));
        }
        if !self.allow_agent(ip, sender.unwrap_or("-")) {
            return Err(rate_limited("too many requests; slow down and retry"));
        }
        if kind == CallKind::Registration && !self.registrations.allow(&ip) {
            return Err(rate_limited(
                "too many registrations from this address; retry later",
            ));
        }
        Ok(())
    }

    /// Leave to ask the manager whose a token is, for a caller at `ip`: granted while the address could
    /// still fail once more counting the lookups in flight. When only lookups in flight stand in the way
    /// (many agents behind one address starting at once), it waits for them to settle, at most
    /// [`SETTLE_WAIT`]; with no room even if they all succeed, it is refused at once. The ticket says
    /// how the lookup went.
    pub(crate) async fn authentication(&self, ip: IpAddr) -> Result<AuthenticationTicket, LeagueError> {
        let refused = || rate_limited("too many failed authentications from this address; retry later");
        let deadline = tokio::time::Instant::now() + SETTLE_WAIT;
        loop {
            // Listening before looking, so a lookup that settles in between is not missed.
            let settled = self.failures.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            match self.failures.begin(ip) {
                Begin::Granted => {
                    return Ok(AuthenticationTicket {
                        failures: self.failures.clone(),
                        ip,
                        failed: false,
                    });
                }
                Begin::Refused => return Err(refused()),
                Begin::Wait => {
                    if tokio::time::timeout_at(deadline, settled).await.is_err() {
                        return Err(refused());
                    }
                }
            }
        }
    }

    /// A refused token that never reached the manager (the league's own outbound token, or another
    /// agent's token for a claimed id): a failed authentication all the same.
    pub(crate) fn failed_authentication(&self, ip: IpAddr) {
        self.failures.failed(ip);
    }

    fn allow_agent(&self, ip: IpAddr, sender: &str) -> bool {
        let sender = sender
            .char_indices()
            .nth(64)
            .map_or(sender, |(end, _)| &sender[..end]);
        self.agent.allow(&(ip, sender.to_owned()))
    }
}

fn rate_limited(description: &str) -> LeagueError {
    LeagueError::new(ErrorCode::RateLimited, description)
}

/// One lookup of a token with the manager, holding its address's place until it is settled. Dropped
/// without [`failed`](Self::failed): the token was good, and costs nothing.
#[derive(Debug)]
pub(crate) struct AuthenticationTicket {
    failures: Arc<Failures>,
    ip: IpAddr,
    failed: bool,
}

impl AuthenticationTicket {
    /// The manager refused the token.
    pub(crate) fn failed(mut self) {
        self.failed = true;
    }
}

impl Drop for AuthenticationTicket {
    fn drop(&mut self) {
        self.failures.end(self.ip, self.failed);
    }
}

/// Failed authentications per address: a leaky bucket holding at most `per_minute`, draining at
/// `per_minute` a minute, with the lookups in flight counted as if they will fail.
#[derive(Debug)]
struct Failures {
    per_minute: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
    /// Told whenever a lookup settles.
    settled: Notify,
}

/// Whether a lookup may start.
#[derive(Debug, PartialEq, Eq)]
enum Begin {
    Granted,
    /// Only if some lookup in flight turns out good.
    Wait,
    /// Not even if every lookup in flight turns out good.
    Refused,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Failures in the bucket at `at`.
    level: f64,
    at: Instant,
    in_flight: u32,
}

impl Bucket {
    fn level_now(&mut self, per_minute: u32, now: Instant) -> f64 {
        let drained = now.saturating_duration_since(self.at).as_secs_f64() * f64::from(per_minute) / 60.0;
        self.level = (self.level - drained).max(0.0);
        self.at = now;
        self.level
    }
}

impl Failures {
    fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            buckets: Mutex::default(),
            settled: Notify::new(),
        }
    }

    /// Whether `ip` has no room for another failure.
    fn barred(&self, ip: IpAddr) -> bool {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        buckets.get_mut(&ip).is_some_and(|bucket| {
            bucket.level_now(self.per_minute, Instant::now()) + 1.0 > f64::from(self.per_minute)
        })
    }

    /// Starts a lookup for `ip` if it has room for one more failure beside those in flight.
    fn begin(&self, ip: IpAddr) -> Begin {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_KEYS {
            let per_minute = self.per_minute;
            buckets.retain(|_, bucket| bucket.in_flight > 0 || bucket.level_now(per_minute, now) > 0.0);
        }
        let bucket = buckets.entry(ip).or_insert(Bucket {
            level: 0.0,
            at: now,
            in_flight: 0,
        });
        let level = bucket.level_now(self.per_minute, now);
        let limit = f64::from(self.per_minute);
        if level + f64::from(bucket.in_flight) + 1.0 <= limit {
            bucket.in_flight += 1;
            Begin::Granted
        } else if level + 1.0 <= limit {
            Begin::Wait
        } else {
            tracing::info!(%ip, "too many failed authentications; address refused");
            Begin::Refused
        }
    }

    fn end(&self, ip: IpAddr, failed: bool) {
        {
            let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(bucket) = buckets.get_mut(&ip) {
                bucket.in_flight = bucket.in_flight.saturating_sub(1);
                if failed {
                    bucket.level_now(self.per_minute, Instant::now());
                    bucket.level += 1.0;
                }
            }
        }
        self.settled.notify_waiters();
    }

    /// A failure that needed no lookup.
    fn failed(&self, ip: IpAddr) {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = buckets.entry(ip).or_insert(Bucket {
            level: 0.0,
            at: now,
            in_flight: 0,
        });
        bucket.level = (bucket.level_now(self.per_minute, now) + 1.0).min(f64::from(self.per_minute));
    }
}

/// One keyed limiter, its memory bounded.
#[derive(Debug)]
struct Keyed<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
}

impl<K: Hash + Eq + Clone> Keyed<K> {
    fn new(quota: Quota) -> Self {
        Self {
            limiter: DefaultKeyedRateLimiter::keyed(quota),
        }
    }

    fn allow(&self, key: &K) -> bool {
        let allowed = self.limiter.check_key(key).is_ok();
        // A key whose allowance is full again is the same as no key: forget those when there are many.
        if self.limiter.len() >= MAX_KEYS {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> RequestLimits {
        RequestLimits::new(Rates {
            per_address: 5,
            per_agent: 3,
            failed_auth_per_minute: 2,
            registrations_per_minute: 2,
        })
    }

    const LOCAL: [u8; 4] = [127, 0, 0, 1];

    #[test]
    fn an_agent_has_its_burst_then_is_refused() {
        let limits = limits();
        let ip: IpAddr = LOCAL.into();
        assert!((0..3).all(|_| limits.admit(ip, Some("player:P01"), CallKind::Other).is_ok()));
        assert!(limits.admit(ip, Some("player:P01"), CallKind::Other).is_err());
        assert!(
            limits.admit(ip, Some("player:P02"), CallKind::Other).is_ok(),
            "each sender has its own"
        );
    }

    #[test]
    fn new_senders_do_not_get_past_the_address_rate() {
        let limits = limits();
        let ip: IpAddr = LOCAL.into();
        let allowed = (0..50).filter(|_| limits.allow_address(ip)).count();
        assert_eq!(allowed, 5);
        assert!(limits.allow_address([127, 0, 0, 2].into()), "per address");
    }

    #[tokio::test]
    async fn lookups_in_flight_hold_their_place() {
        let limits = limits();
        let ip: IpAddr = LOCAL.into();
        let first = limits.authentication(ip).await.expect("first");
        let second = limits.authentication(ip).await.expect("second");
        // A third waits for one of the two to settle; the first was a good token.
        let (third, ()) = tokio::join!(limits.authentication(ip), async { drop(first) });
        let third = third.expect("a good token gave its place back");
        second.failed();
        third.failed();
        let refused = tokio::time::timeout(Duration::from_secs(1), limits.authentication(ip)).await;
        assert!(
            matches!(refused, Ok(Err(_))),
            "two failed: refused at once, not after a wait"
        );
        assert!(!limits.allow_address(ip), "the address is refused everything");
        assert!(limits.allow_address([127, 0, 0, 2].into()), "only that address");
    }
}
