//! A short-lived cache of each league's standings, so that GET_STANDINGS at thousands of queries per
//! second costs the manager (and Postgres) one query per league per [`STANDINGS_MAX_AGE`], not one per
//! request.
//!
//! The bound, precisely: a fetch is stamped with the instant it was *issued* (before the request leaves
//! for the manager), so whatever it returns describes the league at that instant or later. A fetch is
//! shared — by the callers that arrive while it is in flight (single flight) and by those that arrive
//! after it completed — only while it is younger than `max_age`. So the standings answered to a query
//! that arrives at `t` always describe the league as it was at some instant at or after `t - max_age`:
//! a query that arrives `max_age` after a result was recorded (or a round completed) sees it. A failed
//! fetch is handed to the callers already waiting for it, never to later ones. A change the gateway
//! makes itself (registering a player) clears the cache, so whoever asks this gateway next sees it at
//! once.
//!
//! Standings are the same for every caller the league lets ask (the operator and any registered agent),
//! so one cached answer serves all of them; the gateway authenticates each caller itself before
//! answering from the cache, and fetches with its own operator credential. Each user keeps its own
//! cache, of the form it answers from (the gateway its league.v2 JSON, the live page its snapshots).

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use league_domain::LeagueId;
use tokio::time::Instant;

/// How old a league's standings may be when answered (see the module's documentation).
pub const STANDINGS_MAX_AGE: Duration = Duration::from_millis(100);

/// Leagues remembered at once; past it, the stale entries go (and, under a flood of made-up league
/// ids, all of them: this is only a cache).
const MAX_LEAGUES: usize = 64;

type Fetch<T> = Shared<BoxFuture<'static, Result<T, tonic::Status>>>;

struct Slot<T> {
    issued: Instant,
    fetch: Fetch<T>,
}

/// Standings (whatever form `T` the caller keeps them in, cheap to clone: an `Arc`) by requested
/// league id (`None`: the newest league, as the manager reads it).
pub struct StandingsCache<T> {
    max_age: Duration,
    slots: Mutex<HashMap<Option<LeagueId>, Slot<T>>>,
}

impl<T> std::fmt::Debug for StandingsCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let leagues = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len();
        f.debug_struct("StandingsCache")
            .field("max_age", &self.max_age)
            .field("leagues", &leagues)
            .finish()
    }
}

impl<T: Clone + Send + Sync + 'static> Default for StandingsCache<T> {
    fn default() -> Self {
        Self::new(STANDINGS_MAX_AGE)
    }
}

impl<T: Clone + Send + Sync + 'static> StandingsCache<T> {
    pub fn new(max_age: Duration) -> Self {
        Self {
            max_age,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// Forgets every league's standings: the next query fetches (a change this gateway made itself, such
    /// as a registration, is seen at once by whoever asks it next). Callers already waiting for a fetch
    /// still get it.
    pub fn clear(&self) {
        self.slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
    }

    /// The standings of `league_id`: shared from a fetch issued less than `max_age` ago (finished or
    /// still in flight), or from a new one that `fetch` starts.
    pub async fn get<F, Fut>(&self, league_id: Option<&LeagueId>, fetch: F) -> Result<T, tonic::Status>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, tonic::Status>> + Send + 'static,
    {
        let shared = {
            let now = Instant::now();
            let mut slots = self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let key = league_id.cloned();
            let reusable = slots.get(&key).filter(|slot| {
                now.duration_since(slot.issued) < self.max_age && !matches!(slot.fetch.peek(), Some(Err(_)))
            });
            match reusable {
                Some(slot) => slot.fetch.clone(),
                None => {
                    if slots.len() >= MAX_LEAGUES && !slots.contains_key(&key) {
                        let max_age = self.max_age;
                        slots.retain(|_, slot| now.duration_since(slot.issued) < max_age);
                        if slots.len() >= MAX_LEAGUES {
                            slots.clear();
                        }
                    }
                    // Stamped before the request is even built: the answer is at least this recent.
                    let slot = Slot {
                        issued: now,
                        fetch: fetch().boxed().shared(),
                    };
                    let shared = slot.fetch.clone();
                    slots.insert(key, slot);
                    shared
                }
            }
        };
        shared.await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use tokio::sync::oneshot;

    use super::*;

    const MAX_AGE: Duration = STANDINGS_MAX_AGE;

    type Answer = Result<Arc<u32>, tonic::Status>;

    /// Standings that say which version of the league they describe.
    fn version(n: u32) -> Answer {
        Ok(Arc::new(n))
    }

    fn round_of(answer: &Answer) -> u32 {
        answer.as_deref().copied().unwrap_or(u32::MAX)
    }

    fn cache() -> StandingsCache<Arc<u32>> {
        StandingsCache::new(MAX_AGE)
    }

    /// Numbers the fetches a test's cache makes (1, 2, …), so that an answer says which fetch it came
    /// from, and counts them.
    #[derive(Default)]
    struct Fetches(AtomicU32);

    impl Fetches {
        fn next(&self) -> u32 {
            self.0.fetch_add(1, Ordering::SeqCst) + 1
        }

        fn made(&self) -> u32 {
            self.0.load(Ordering::SeqCst)
        }

        /// A fetch that answers at once, with its own number as the version.
        fn versioned(&self) -> impl Future<Output = Answer> + Send + 'static {
            let n = self.next();
            async move { version(n) }
        }
    }

    /// A league id the tests name; `None` when `text` is none (then the newest league is asked).
    fn league(text: &str) -> Option<LeagueId> {
        LeagueId::parse(text).ok()
    }

    #[tokio::test(start_paused = true)]
    async fn fresh_standings_are_shared_and_stale_ones_fetched_again() {
        let cache = cache();
        let evening = league("evening");
        let other = league("other");
        let fetches = Fetches::default();
        let fetch = || fetches.versioned();
        assert_eq!(round_of(&cache.get(evening.as_ref(), fetch).await), 1);
        tokio::time::advance(MAX_AGE - Duration::from_millis(1)).await;
        assert_eq!(
            round_of(&cache.get(evening.as_ref(), fetch).await),
            1,
            "still fresh"
        );
        assert_eq!(fetches.made(), 1);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(
            round_of(&cache.get(evening.as_ref(), fetch).await),
            2,
            "max_age old: fetched again"
        );
        // Leagues are cached apart.
        assert_eq!(round_of(&cache.get(other.as_ref(), fetch).await), 3);
        assert_eq!(round_of(&cache.get(evening.as_ref(), fetch).await), 2);
        assert_eq!(fetches.made(), 3);
    }

    /// The league changes (a round completes) at known instants; whatever instant a query arrives at,
    /// the standings it gets describe the league at or after `arrival - max_age`.
    #[tokio::test(start_paused = true)]
    async fn no_answer_is_older_than_the_bound() {
        let cache = cache();
        let evening = league("evening");
        let start = Instant::now();
        // The league's version at an instant: a round completes every 37 ms.
        let version_at = move |at: Instant| (at.duration_since(start).as_millis() / 37) as u32;
        let fetch = || {
            // What the manager reads is the league as of the moment the fetch runs, which takes 3 ms.
            let read_at = Instant::now();
            async move {
                tokio::time::sleep(Duration::from_millis(3)).await;
                version(version_at(read_at))
            }
        };
        for step in 0..400u64 {
            // Queries at uneven instants: 0, 7, 14… ms apart, in bursts.
            tokio::time::advance(Duration::from_millis(step % 11)).await;
            let arrival = Instant::now();
            let got = round_of(&cache.get(evening.as_ref(), fetch).await);
            let oldest_allowed = version_at(arrival.checked_sub(MAX_AGE).unwrap_or(start).max(start));
            assert!(
                got >= oldest_allowed,
                "query at {:?} got version {got}, older than {oldest_allowed}",
                arrival.duration_since(start)
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn callers_during_a_fetch_share_it() {
        let cache = cache();
        let evening = league("evening");
        let fetches = Fetches::default();
        let (release, released) = oneshot::channel::<()>();
        let released = released.shared();
        let fetch = || {
            fetches.next();
            let released = released.clone();
            async move {
                released.await.ok();
                version(7)
            }
        };
        let mut waiting: Vec<_> = (0..10)
            .map(|_| Box::pin(cache.get(evening.as_ref(), fetch)))
            .collect();
        for caller in &mut waiting {
            assert!(futures::poll!(caller.as_mut()).is_pending());
        }
        assert_eq!(fetches.made(), 1, "one fetch in flight for ten callers");
        release.send(()).ok();
        for answer in futures::future::join_all(waiting).await {
            assert_eq!(round_of(&answer), 7);
        }
        assert_eq!(fetches.made(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_fetch_older_than_the_bound_is_not_joined_even_in_flight() {
        let cache = cache();
        let evening = league("evening");
        let fetches = Fetches::default();
        let fetch = || {
            let n = fetches.next();
            async move {
                // The first fetch is slow (longer than the bound), the next one quick.
                if n == 1 {
                    tokio::time::sleep(MAX_AGE * 3).await;
                }
                version(n)
            }
        };
        let mut slow = Box::pin(cache.get(evening.as_ref(), fetch));
        assert!(futures::poll!(slow.as_mut()).is_pending());
        tokio::time::advance(MAX_AGE).await;
        assert_eq!(round_of(&cache.get(evening.as_ref(), fetch).await), 2);
        assert_eq!(round_of(&slow.await), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_made_here_is_seen_at_once() {
        let cache = cache();
        let evening = league("evening");
        let fetches = Fetches::default();
        let fetch = || fetches.versioned();
        assert_eq!(round_of(&cache.get(evening.as_ref(), fetch).await), 1);
        cache.clear();
        assert_eq!(
            round_of(&cache.get(evening.as_ref(), fetch).await),
            2,
            "no waiting for max_age"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn failures_are_not_cached() {
        let cache = cache();
        let evening = league("evening");
        let fetches = Fetches::default();
        let fetch = || {
            let n = fetches.next();
            async move {
                if n == 1 {
                    Err(tonic::Status::unavailable("manager down"))
                } else {
                    version(n)
                }
            }
        };
        assert!(cache.get(evening.as_ref(), fetch).await.is_err());
        assert_eq!(
            round_of(&cache.get(evening.as_ref(), fetch).await),
            2,
            "tried again at once"
        );
        assert_eq!(round_of(&cache.get(evening.as_ref(), fetch).await), 2);
        assert_eq!(fetches.made(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn many_league_ids_stay_bounded() {
        let cache = cache();
        for n in 0..(MAX_LEAGUES as u32 * 3) {
            cache
                .get(
                    league(&format!("l{n}")).as_ref(),
                    move || async move { version(n) },
                )
                .await
                .ok();
        }
        let leagues = cache.slots.lock().map(|slots| slots.len()).unwrap_or(usize::MAX);
        assert!(leagues <= MAX_LEAGUES, "{leagues} leagues remembered");
    }
}
