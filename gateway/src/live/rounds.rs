//! Completed rounds, kept once fetched: a round whose matches are all final never changes, so each
//! gateway asks the manager for it once however many viewers look at it or at the progression chart
//! built from it. Only a cache — a second replica fetches its own — and bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream;
use league_proto::v2::{MatchResult, ScheduledRound};

use super::view;
use crate::league::League;

/// A round with each match's result.
pub type Round = Arc<(ScheduledRound, Vec<Option<MatchResult>>)>;

/// Completed rounds kept at once, over all leagues (a 200-player league has 199).
const MAX_ROUNDS: usize = 4096;
/// Rounds fetched at once when a viewer needs many (the first look at a long league).
const CONCURRENT_FETCHES: usize = 4;

#[derive(Debug, Default)]
pub struct CompletedRounds {
    rounds: Mutex<HashMap<(String, u32), Round>>,
}

impl CompletedRounds {
    /// Round `round_id` of `league_id`, which the caller knows to be completed (`None`: no such round).
    pub async fn get(
        &self,
        league: &League,
        league_id: &str,
        round_id: u32,
    ) -> Result<Option<Round>, tonic::Status> {
        let key = (league_id.to_owned(), round_id);
        if let Some(round) = self.lock().get(&key) {
            return Ok(Some(round.clone()));
        }
        let Some(fetched) = view::round(league, league_id, round_id).await? else {
            return Ok(None);
        };
        let round = Arc::new(fetched);
        // A completed round's results are all there; one still missing a result is not cached.
        if round.1.iter().all(Option::is_some) {
            let mut rounds = self.lock();
            if rounds.len() >= MAX_ROUNDS {
                rounds.clear();
            }
            rounds.insert(key, round.clone());
        }
        Ok(Some(round))
    }

    /// Rounds 1..=`completed` of `league_id`, in order.
    pub async fn all(
        &self,
        league: &League,
        league_id: &str,
        completed: u32,
    ) -> Result<Vec<Round>, tonic::Status> {
        let fetched: Vec<Result<Option<Round>, tonic::Status>> = stream::iter(1..=completed)
            .map(|round_id| self.get(league, league_id, round_id))
            .buffered(CONCURRENT_FETCHES)
            .collect()
            .await;
        let mut rounds = Vec::with_capacity(fetched.len());
        for round in fetched {
            rounds.extend(round?);
        }
        Ok(rounds)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u32), Round>> {
        self.rounds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
