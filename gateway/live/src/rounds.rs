//! Completed rounds, kept once fetched: a round whose matches are all final never changes, nor does the
//! table as it stood after it. So each gateway asks the manager for a completed round's matches once,
//! and for the points after each round once (the progression chart), however many viewers look. One
//! fetch at a time per gateway: viewers arriving together wait for it and share what it brought. Only a
//! cache — a second replica fetches its own — and bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use league_domain::LeagueId;
use league_manager_link::ManagerLink;
use league_proto::v2::{GetStandingsByRoundRequest, ScheduledRound};

use super::view;

/// The points of every player after one round, by player id.
pub(crate) type Points = Arc<HashMap<String, u32>>;

/// Rounds (matches, and points after) kept at once over all leagues; past it, all are dropped.
const MAX_ROUNDS: usize = 8192;

type Key = (LeagueId, u32);

#[derive(Debug, Default)]
pub(crate) struct CompletedRounds {
    matches: Mutex<HashMap<Key, Arc<ScheduledRound>>>,
    points: Mutex<HashMap<Key, Points>>,
    /// Held while fetching, so that viewers who need the same rounds wait for one fetch.
    fetching: tokio::sync::Mutex<()>,
}

fn lock<T>(map: &Mutex<HashMap<Key, T>>) -> MutexGuard<'_, HashMap<Key, T>> {
    map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn keep<T>(map: &Mutex<HashMap<Key, T>>, key: Key, value: T) {
    let mut map = lock(map);
    if map.len() >= MAX_ROUNDS {
        map.clear();
    }
    map.insert(key, value);
}

impl CompletedRounds {
    /// The matches of round `round_id` of `league_id`, which the caller knows to be completed (`None`:
    /// no such round).
    pub(crate) async fn matches(
        &self,
        manager_link: &ManagerLink,
        league_id: &LeagueId,
        round_id: u32,
    ) -> Result<Option<Arc<ScheduledRound>>, tonic::Status> {
        let key = (league_id.clone(), round_id);
        if let Some(round) = lock(&self.matches).get(&key) {
            return Ok(Some(round.clone()));
        }
        let _fetching = self.fetching.lock().await;
        if let Some(round) = lock(&self.matches).get(&key) {
            return Ok(Some(round.clone()));
        }
        let Some(round) = view::round(manager_link, league_id, round_id).await? else {
            return Ok(None);
        };
        let round = Arc::new(round);
        // Kept only when every match has its result (it is completed, as the caller said).
        if round.matches.iter().all(|m| m.result.is_some()) {
            keep(&self.matches, key, round.clone());
        }
        Ok(Some(round))
    }

    /// The points after each of rounds 1..=`completed` of `league_id`, in order; only the rounds not
    /// seen before are fetched.
    pub(crate) async fn points(
        &self,
        manager_link: &ManagerLink,
        league_id: &LeagueId,
        completed: u32,
    ) -> Result<Vec<Points>, tonic::Status> {
        if let Some(all) = self.cached_points(league_id, completed) {
            return Ok(all);
        }
        let _fetching = self.fetching.lock().await;
        let mut all: Vec<Option<Points>> = {
            let points = lock(&self.points);
            (1..=completed)
                .map(|round| points.get(&(league_id.clone(), round)).cloned())
                .collect()
        };
        let mut next = all.iter().position(Option::is_none).map_or(0, |i| i as u32 + 1);
        // Each page brings at least one round: at most `completed` pages.
        while next != 0 && next <= completed {
            let request = manager_link.as_operator(GetStandingsByRoundRequest {
                league_id: league_id.to_string(),
                first_round_id: next,
                max_rounds: completed - next + 1,
            });
            let page = manager_link
                .manager
                .clone()
                .get_standings_by_round(request)
                .await?
                .into_inner();
            for round in page
                .rounds
                .iter()
                .filter(|round| (1..=completed).contains(&round.round_id))
            {
                let points: Points = Arc::new(
                    round
                        .standings
                        .iter()
                        .map(|row| (row.player_id.clone(), row.points))
                        .collect(),
                );
                all[round.round_id as usize - 1] = Some(points.clone());
                keep(&self.points, (league_id.to_owned(), round.round_id), points);
            }
            if page.next_round_id <= next {
                break;
            }
            next = page.next_round_id;
        }
        all.into_iter()
            .enumerate()
            .map(|(i, points)| {
                points.ok_or_else(|| {
                    tonic::Status::unavailable(format!("the table after round {} is not available", i + 1))
                })
            })
            .collect()
    }

    fn cached_points(&self, league_id: &LeagueId, completed: u32) -> Option<Vec<Points>> {
        let points = lock(&self.points);
        (1..=completed)
            .map(|round| points.get(&(league_id.clone(), round)).cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn league(id: &str) -> LeagueId {
        LeagueId::parse(id).expect("a league id")
    }

    fn points(of: u32) -> Points {
        Arc::new(HashMap::from([("P01".to_owned(), of)]))
    }

    #[test]
    fn the_points_are_known_only_when_every_round_up_to_the_last_is() {
        let rounds = CompletedRounds::default();
        assert_eq!(
            rounds.cached_points(&league("l1"), 0),
            Some(Vec::new()),
            "no round: nothing to fetch"
        );
        keep(&rounds.points, (league("l1"), 1), points(3));
        keep(&rounds.points, (league("l1"), 3), points(6));
        assert_eq!(rounds.cached_points(&league("l1"), 1), Some(vec![points(3)]));
        assert_eq!(rounds.cached_points(&league("l1"), 3), None, "round 2 is missing");
        assert_eq!(
            rounds.cached_points(&league("l2"), 1),
            None,
            "another league's rounds are its own"
        );
        keep(&rounds.points, (league("l1"), 2), points(4));
        assert_eq!(
            rounds.cached_points(&league("l1"), 3),
            Some(vec![points(3), points(4), points(6)])
        );
    }

    #[test]
    fn the_kept_rounds_are_bounded() {
        let kept = Mutex::new(HashMap::new());
        for round_id in 0..MAX_ROUNDS as u32 {
            keep(&kept, (league("l1"), round_id), round_id);
        }
        assert_eq!(lock(&kept).len(), MAX_ROUNDS);
        keep(&kept, (league("l2"), 1), 1);
        assert_eq!(lock(&kept).len(), 1, "full: all dropped for the newest");
    }
}
