//! The gateway's request rates, each a GCRA limiter (`governor`) kept per key, with bursts the size of a
//! second's allowance:
//!
//! - **per address**, before anything the request says is believed (`LEAGUE_ADDRESS_RATE_LIMIT`): a
//!   client that names a new sender on every request still spends its one address's allowance;
//! - **per agent** (`LEAGUE_AGENT_RATE_LIMIT`): the address and the sender the message names, so agents
//!   that share an address (a NAT, one host running several) each have their own allowance, and naming
//!   someone else spends only the namer's address's allowance;
//! - **registrations per address** (`LEAGUE_REGISTRATION_RATE_LIMIT` a minute): registering is what makes
//!   a league big, so one address cannot fill it;
//! - **failed authentications per address** (`LEAGUE_FAILED_AUTH_LIMIT` a minute): an address past it
//!   is refused everything (429) until its allowance grows back, so guessing tokens costs the manager
//!   at most that many lookups a minute per address, and each refused guess costs it nothing.
//!
//! The connection bounds are in connections.rs, the body's where it is read (http.rs).

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use league_proto::ErrorCode;
use serde_json::Value;

use crate::jsonrpc::Call;

/// Keys kept by one limiter before those whose allowance is full again are forgotten.
const MAX_KEYS: usize = 10_000;

/// The configured rates (see the module's documentation).
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    pub per_address: u32,
    pub per_agent: u32,
    pub failed_auth_per_minute: u32,
    pub registrations_per_minute: u32,
}

/// Every request-rate bound of one gateway.
#[derive(Debug)]
pub struct RequestLimits {
    address: Keyed<IpAddr>,
    agent: Keyed<(IpAddr, String)>,
    failed_auth: Keyed<IpAddr>,
    registrations: Keyed<IpAddr>,
    /// Addresses refused everything until the instant named, after too many failed authentications.
    barred: Mutex<HashMap<IpAddr, Instant>>,
}

impl RequestLimits {
    pub fn new(rates: Rates) -> Self {
        let per_second = |n: u32| Quota::per_second(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN));
        let per_minute = |n: u32| Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN));
        Self {
            address: Keyed::new(per_second(rates.per_address)),
            agent: Keyed::new(per_second(rates.per_agent)),
            failed_auth: Keyed::new(per_minute(rates.failed_auth_per_minute)),
            registrations: Keyed::new(per_minute(rates.registrations_per_minute)),
            barred: Mutex::default(),
        }
    }

    /// Whether a request from `ip` may be read at all: its address's rate, and no bar for failed
    /// authentications.
    pub fn allow_address(&self, ip: IpAddr) -> bool {
        let barred_until = self
            .barred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&ip)
            .copied();
        if barred_until.is_some_and(|until| Instant::now() < until) {
            return false;
        }
        self.address.allow(&ip)
    }

    /// Whether one call from `ip` may go on: its agent's rate, and its address's registrations when it
    /// is one.
    pub fn allow_call(&self, ip: IpAddr, call: &Call) -> bool {
        self.allow_agent(ip, claimed_sender(call)) && (!is_registration(call) || self.allow_registration(ip))
    }

    /// Counts an answer refusing a token (E012) against the address's failed authentications. A missing
    /// token (E011) does not count: it never reached the manager.
    pub fn count_answer(&self, ip: IpAddr, answer: Option<&Value>) {
        let code = answer.and_then(|answer| answer.pointer("/error/data/error_code"));
        if code.and_then(Value::as_str) == Some(ErrorCode::AuthTokenInvalid.code()) {
            self.failed_authentication(ip);
        }
    }

    /// Whether one call from `ip` claiming to be `sender` may go on.
    pub fn allow_agent(&self, ip: IpAddr, sender: &str) -> bool {
        let sender = sender
            .char_indices()
            .nth(64)
            .map_or(sender, |(end, _)| &sender[..end]);
        self.agent.allow(&(ip, sender.to_owned()))
    }

    /// Whether `ip` may register one more agent now.
    pub fn allow_registration(&self, ip: IpAddr) -> bool {
        self.registrations.allow(&ip)
    }

    /// Counts a failed authentication from `ip`; past the allowance the address is barred until the
    /// allowance has grown back by one.
    pub fn failed_authentication(&self, ip: IpAddr) {
        if let Err(not_until) = self.failed_auth.limiter.check_key(&ip) {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            let mut barred = self.barred.lock().unwrap_or_else(PoisonError::into_inner);
            if barred.len() >= MAX_KEYS {
                let now = Instant::now();
                barred.retain(|_, until| *until > now);
            }
            barred.insert(ip, Instant::now() + wait);
            tracing::info!(%ip, ?wait, "too many failed authentications; address barred");
        }
        self.failed_auth.forget_idle();
    }
}

/// Whether a call looks like a registration, in any framing (`register_player`,
/// `LEAGUE_REGISTER_REQUEST`, `tools/call {name: "register_referee"}`, a `message_type`): cheap, before
/// the call is resolved; a false match only spends the registration allowance.
fn is_registration(call: &Call) -> bool {
    let names = [
        Some(call.method.as_str()),
        call.params.get("name").and_then(Value::as_str),
        call.params.get("message_type").and_then(Value::as_str),
    ];
    names
        .into_iter()
        .flatten()
        .any(|name| name.to_ascii_lowercase().contains("register"))
}

/// The sender a call names, in any of the framings agents use.
fn claimed_sender(call: &Call) -> &str {
    let params = &call.params;
    params
        .get("sender")
        .or_else(|| params.get("message").and_then(|m| m.get("sender")))
        .or_else(|| params.get("arguments").and_then(|a| a.get("sender")))
        .and_then(Value::as_str)
        .unwrap_or("-")
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
        self.forget_idle();
        allowed
    }

    /// A key whose allowance is full again is the same as no key: forget those when there are many.
    fn forget_idle(&self) {
        if self.limiter.len() >= MAX_KEYS {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
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

    #[test]
    fn an_agent_has_its_burst_then_is_refused() {
        let limits = limits();
        let ip: IpAddr = [127, 0, 0, 1].into();
        assert!((0..3).all(|_| limits.allow_agent(ip, "player:P01")));
        assert!(!limits.allow_agent(ip, "player:P01"));
        assert!(limits.allow_agent(ip, "player:P02"), "each sender has its own");
    }

    #[test]
    fn new_senders_do_not_get_past_the_address_rate() {
        let limits = limits();
        let ip: IpAddr = [127, 0, 0, 1].into();
        let allowed = (0..50).filter(|_| limits.allow_address(ip)).count();
        assert_eq!(allowed, 5);
        assert!(limits.allow_address([127, 0, 0, 2].into()), "per address");
    }

    #[test]
    fn failed_authentications_bar_the_address() {
        let limits = limits();
        let ip: IpAddr = [127, 0, 0, 1].into();
        limits.failed_authentication(ip);
        limits.failed_authentication(ip);
        assert!(limits.allow_address(ip), "two failures are within the allowance");
        limits.failed_authentication(ip);
        assert!(!limits.allow_address(ip), "the third bars it");
        assert!(limits.allow_address([127, 0, 0, 2].into()), "only that address");
    }
}
