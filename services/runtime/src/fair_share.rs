//! A budget shared fairly among client addresses: the gateway's connections, and the live page's event
//! streams (two crates, one rule, so it lives here below both). Each address holds at most
//! `max_per_address`; while the budget has room anyone may take a place. When it is full, a newcomer
//! does not simply get a 503: the address holding the most places gives up its longest-idle one,
//! provided it holds at least two more than the newcomer (so a transfer never leaves the newcomer
//! holding more than the one it took from). A place in use (a connection serving a request) is never
//! taken; only idle ones are.
//!
//! So a handful of addresses cannot hold the whole budget against everyone else: with `n` addresses
//! wanting places, each keeps at least about `budget / n`. A registered agent holds the few connections
//! it uses, so it is never the address holding the most while anonymous addresses hoard, and its
//! connection always finds room (docs/adr/0041-fair-shares-at-the-edge.md).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

/// The budget and every place taken in it.
#[derive(Debug, Clone)]
pub struct FairShare {
    state: Arc<Mutex<State>>,
    max_total: usize,
    max_per_address: usize,
}

#[derive(Debug, Default)]
struct State {
    holders: HashMap<IpAddr, Vec<Place>>,
    total: usize,
    next_id: u64,
}

#[derive(Debug)]
struct Place {
    id: u64,
    /// Uses in progress; the place may be taken only at 0.
    busy: u32,
    /// Since when it has been idle (or open, if never used).
    idle_since: Instant,
    evict: Arc<Notify>,
}

impl FairShare {
    pub fn new(max_total: usize, max_per_address: usize) -> Self {
        Self {
            state: Arc::default(),
            max_total,
            max_per_address,
        }
    }

    /// A place for `ip`, or `None` when its own share is used up, or the budget is full and no address
    /// holding more can give one up.
    pub fn take(&self, ip: IpAddr) -> Option<Share> {
        let mut state = self.lock();
        let held = state.holders.get(&ip).map_or(0, Vec::len);
        if held >= self.max_per_address {
            return None;
        }
        if state.total >= self.max_total && !state.make_room(ip, held) {
            return None;
        }
        state.total += 1;
        state.next_id += 1;
        let id = state.next_id;
        let evict = Arc::new(Notify::new());
        state.holders.entry(ip).or_default().push(Place {
            id,
            busy: 0,
            idle_since: Instant::now(),
            evict: evict.clone(),
        });
        Some(Share {
            fair: self.clone(),
            ip,
            id,
            evict,
        })
    }

    /// Places taken now (for tests and metrics).
    pub fn taken(&self) -> usize {
        self.lock().total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn with_place(&self, ip: IpAddr, id: u64, change: impl FnOnce(&mut Place)) {
        let mut state = self.lock();
        if let Some(place) = state
            .holders
            .get_mut(&ip)
            .and_then(|places| places.iter_mut().find(|place| place.id == id))
        {
            change(place);
        }
    }

    fn give_back(&self, ip: IpAddr, id: u64) {
        let mut state = self.lock();
        let Some(places) = state.holders.get_mut(&ip) else {
            return;
        };
        let before = places.len();
        places.retain(|place| place.id != id);
        let removed = before - places.len();
        if places.is_empty() {
            state.holders.remove(&ip);
        }
        state.total -= removed;
    }
}

impl State {
    /// Takes the longest-idle place of the address holding the most (at least two more than `held`,
    /// what the newcomer `ip` holds), tells its holder to let go, and frees it; whether it could.
    fn make_room(&mut self, ip: IpAddr, held: usize) -> bool {
        let victim = self
            .holders
            .iter()
            .filter(|(holder, places)| **holder != ip && places.len() >= held + 2)
            .filter_map(|(holder, places)| {
                let idlest = places
                    .iter()
                    .filter(|place| place.busy == 0)
                    .min_by_key(|place| place.idle_since)?;
                Some((
                    places.len(),
                    std::cmp::Reverse(idlest.idle_since),
                    *holder,
                    idlest.id,
                ))
            })
            .max_by_key(|(count, idle, _, _)| (*count, *idle));
        let Some((_, _, holder, id)) = victim else {
            return false;
        };
        let Some(places) = self.holders.get_mut(&holder) else {
            return false;
        };
        if let Some(index) = places.iter().position(|place| place.id == id) {
            let place = places.swap_remove(index);
            place.evict.notify_one();
            self.total -= 1;
            tracing::debug!(%holder, newcomer = %ip, "an idle place given up to make room");
        }
        true
    }
}

/// One place in the budget, given back when dropped.
#[derive(Debug)]
pub struct Share {
    fair: FairShare,
    ip: IpAddr,
    id: u64,
    evict: Arc<Notify>,
}

impl Share {
    /// Resolves when the place was given to someone else: its holder must let go now.
    pub fn evicted(&self) -> impl Future<Output = ()> + Send + 'static {
        let evict = self.evict.clone();
        async move { evict.notified().await }
    }

    /// Marks the place in use until the guard is dropped; it cannot be taken meanwhile.
    pub fn busy(&self) -> Busy {
        self.fair.with_place(self.ip, self.id, |place| place.busy += 1);
        Busy {
            fair: self.fair.clone(),
            ip: self.ip,
            id: self.id,
        }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.fair.give_back(self.ip, self.id);
    }
}

/// A use of a place in progress.
#[derive(Debug)]
pub struct Busy {
    fair: FairShare,
    ip: IpAddr,
    id: u64,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.fair.with_place(self.ip, self.id, |place| {
            place.busy = place.busy.saturating_sub(1);
            if place.busy == 0 {
                place.idle_since = Instant::now();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        [127, 0, 0, last].into()
    }

    #[test]
    fn an_address_gets_its_share_and_a_full_budget_makes_room_for_others() {
        let fair = FairShare::new(4, 3);
        let a: Vec<Share> = (0..3).map(|_| fair.take(ip(1)).expect("a's")).collect();
        assert!(fair.take(ip(1)).is_none(), "a's share is 3");
        let _b = fair.take(ip(2)).expect("b's first");
        assert_eq!(fair.taken(), 4);
        // Full: c gets a's longest-idle place (a holds 3, c none).
        let _c = fair.take(ip(3)).expect("room made for c");
        assert_eq!(fair.taken(), 4);
        // a holds 2, d none: a gives up another.
        let _d = fair.take(ip(4)).expect("room made for d");
        // Everyone holds 1 now: nobody gives up a place for e.
        assert!(fair.take(ip(5)).is_none());
        drop(a);
        assert_eq!(fair.taken(), 3, "a's evicted places were not counted twice");
    }

    #[test]
    fn a_place_in_use_is_never_taken() {
        let fair = FairShare::new(2, 2);
        let first = fair.take(ip(1)).expect("first");
        let second = fair.take(ip(1)).expect("second");
        let _busy = (first.busy(), second.busy());
        assert!(fair.take(ip(2)).is_none(), "both in use");
    }

    #[tokio::test]
    async fn the_longest_idle_place_is_told_to_let_go() {
        let fair = FairShare::new(2, 2);
        let older = fair.take(ip(1)).expect("older");
        let newer = fair.take(ip(1)).expect("newer");
        drop(newer.busy());
        let _b = fair.take(ip(2)).expect("room made");
        tokio::time::timeout(std::time::Duration::from_secs(1), older.evicted())
            .await
            .expect("the longest idle was told");
    }
}
