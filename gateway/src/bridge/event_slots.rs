//! League events give way to games. A round's end sends every external player its table, the round's
//! result and the next round's announcement: at 100 players, 300 calls to agents at the moment the
//! next round's invitations go out. Sent all at once, they queue in front of those invitations (in the
//! gateway's one worker thread, and in any agent on the same machine), so a game call waits for a
//! whole round of notifications, and under load could miss its own deadline: a technical loss the
//! league caused itself.
//!
//! So a league event is sent only with one of a few slots, held until its agent answers or for a short
//! window, whichever is first. A fast agent's events go a few at a time, letting game calls in between;
//! a slow or silent agent keeps its slot only for the window, so it cannot hold back anyone else's
//! events (its own wait in order behind it, as before). Game calls take no slot. ADR 0031 has the
//! measurements and the trade-off for agents far away.

use std::future::Future;
use std::time::Duration;

use tokio::sync::Semaphore;

/// League events sent at once by default (`LEAGUE_EVENT_SLOTS`), each until its answer or the window.
pub(crate) const SLOTS: usize = 16;
/// The longest an event holds its slot by default (`LEAGUE_EVENT_SLOT_WINDOW`). An agent across a
/// network answers later than this, so its events go out side by side almost as before: the slots
/// start at least `SLOTS / WINDOW` (3,200) events a second, a 500-player round's 1,500 in under half a
/// second.
pub(crate) const WINDOW: Duration = Duration::from_millis(5);

#[derive(Debug)]
pub struct EventSlots {
    /// None: no limit.
    slots: Option<Semaphore>,
    window: Duration,
}

impl Default for EventSlots {
    fn default() -> Self {
        Self::new(SLOTS, WINDOW)
    }
}

impl EventSlots {
    /// `slots` events at once (0: no limit), each holding its slot for at most `window`.
    pub(crate) fn new(slots: usize, window: Duration) -> Self {
        Self {
            slots: (slots > 0).then(|| Semaphore::new(slots)),
            window,
        }
    }

    /// Runs `delivery` (one event to one agent) once a slot is free, holding the slot until it ends or
    /// the window has passed.
    pub(crate) async fn deliver<F: Future>(&self, delivery: F) -> F::Output {
        let Some(slots) = &self.slots else {
            return delivery.await;
        };
        // The semaphore is never closed; should it be, the event goes without a slot.
        let slot = slots.acquire().await.ok();
        let mut delivery = std::pin::pin!(delivery);
        match tokio::time::timeout(self.window, &mut delivery).await {
            Ok(done) => done,
            Err(_) => {
                drop(slot);
                delivery.await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts deliveries in their slot-holding part at once, and the most seen.
    #[derive(Default)]
    struct Gauge {
        now: AtomicUsize,
        most: AtomicUsize,
    }

    impl Gauge {
        async fn deliver(&self, answer_after: Duration) {
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(answer_after).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The most of 40 events to fast agents (answering in 1 ms) that were sent at once through `slots`.
    async fn most_at_once(slots: usize) -> usize {
        let slots = Arc::new(EventSlots::new(slots, Duration::from_millis(20)));
        let gauge = Arc::new(Gauge::default());
        let deliveries: Vec<_> = (0..40)
            .map(|_| {
                let (slots, gauge) = (slots.clone(), gauge.clone());
                tokio::spawn(async move { slots.deliver(gauge.deliver(Duration::from_millis(1))).await })
            })
            .collect();
        for delivery in deliveries {
            delivery.await.expect("delivered");
        }
        gauge.most.load(Ordering::SeqCst)
    }

    #[tokio::test(start_paused = true)]
    async fn fast_agents_get_their_events_a_few_at_a_time() {
        assert_eq!(most_at_once(4).await, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_agent_holds_its_slot_only_for_the_window() {
        let slots = Arc::new(EventSlots::new(1, Duration::from_millis(20)));
        let started = tokio::time::Instant::now();
        let silent = tokio::spawn({
            let slots = slots.clone();
            async move { slots.deliver(tokio::time::sleep(Duration::from_secs(10))).await }
        });
        tokio::task::yield_now().await;
        // The next agent's event goes out once the window has passed, not after the silent one's 10 s.
        slots.deliver(async {}).await;
        assert_eq!(started.elapsed(), Duration::from_millis(20));
        silent.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn no_slots_means_no_limit() {
        assert_eq!(most_at_once(0).await, 40);
    }

    #[tokio::test(start_paused = true)]
    async fn a_delivery_gives_back_what_it_returns() {
        let slots = EventSlots::default();
        assert_eq!(slots.deliver(async { 7 }).await, 7);
        let late = slots.deliver(async {
            tokio::time::sleep(WINDOW * 3).await;
            8
        });
        assert_eq!(late.await, 8);
    }
}
