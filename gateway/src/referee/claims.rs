//! Matches for external referees. For every referee registered through a gateway, each replica runs a
//! claimer: it claims matches for the referee (the operator credential acting for it; the manager caps
//! the referee's running matches at its `max_concurrent_matches`, whichever replica claims), sends each
//! as START_MATCH to the referee's contact endpoint, and renews the match's lease until the report
//! arrives or the referee has had the whole time a match may take. A referee that cannot be reached or
//! refuses is given no more matches for a while, and the match goes back to the queue at once for any
//! other referee.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use league_proto::v2::{
    Agent, AgentKind, ClaimMatchesRequest, LeaseRef, ListAgentsRequest, MatchAssignment, MatchTiming,
    ReleaseLeasesRequest, RenewLeasesRequest,
};
use league_runtime::ShutdownSignal;
use serde_json::{Value, json};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::{RefereedMatch, Referees, lock};
use crate::bridge::player::Failure;
use crate::dialect::MessageType;
use crate::league::EXTERNAL_LABEL;
use crate::wire::{self, timestamp};

/// How long one claim waits at the manager for a match (long poll).
const CLAIM_WAIT: Duration = Duration::from_secs(20);
/// How often each replica looks for referees registered through other replicas.
const DISCOVERY_INTERVAL: Duration = Duration::from_secs(5);
/// Pause after a failed claim or a referee that would not start a match; doubles up to the maximum.
const FIRST_PAUSE: Duration = Duration::from_millis(500);
const MAX_PAUSE: Duration = Duration::from_secs(30);
/// Time a referee has to report, on top of playing the match by the league's timings.
const REPORT_ALLOWANCE: Duration = Duration::from_secs(10);

/// One external referee's claimer on this replica.
#[derive(Debug)]
struct Claimer {
    referee_id: String,
    slots: Arc<Semaphore>,
    /// When claiming may resume, and the pause to use after the next failure.
    paused: Mutex<(Instant, Duration)>,
}

impl Claimer {
    fn pause(&self) {
        let mut paused = lock(&self.paused);
        let pause = paused.1;
        *paused = (Instant::now() + pause, (pause * 2).min(MAX_PAUSE));
    }

    fn resume(&self) {
        *lock(&self.paused) = (Instant::now(), FIRST_PAUSE);
    }

    fn paused_until(&self) -> Instant {
        lock(&self.paused).0
    }
}

impl Referees {
    /// Finds external referees (at start, when one registers here, and every few seconds for those
    /// registered through other replicas) and runs a claimer for each until shutdown.
    pub async fn run_claimers(self: Arc<Self>, shutdown: ShutdownSignal) {
        loop {
            let request = self.league.as_operator(ListAgentsRequest {
                kind: AgentKind::Referee as i32,
                label: EXTERNAL_LABEL.to_owned(),
            });
            match self.league.agents.clone().list_agents(request).await {
                Ok(response) => {
                    for referee in response.into_inner().agents {
                        self.start_claimer(referee, &shutdown);
                    }
                }
                Err(status) => tracing::debug!(%status, "cannot list external referees yet"),
            }
            tokio::select! {
                () = self.discover.notified() => {}
                () = tokio::time::sleep(DISCOVERY_INTERVAL) => {}
                () = shutdown.clone().wait() => return,
            }
        }
    }

    fn start_claimer(self: &Arc<Self>, referee: Agent, shutdown: &ShutdownSignal) {
        if !lock(&self.claimers).insert(referee.agent_id.clone()) {
            return;
        }
        let claimer = Arc::new(Claimer {
            referee_id: referee.agent_id,
            slots: Arc::new(Semaphore::new(referee.max_concurrent_matches.max(1) as usize)),
            paused: Mutex::new((Instant::now(), FIRST_PAUSE)),
        });
        tracing::info!(referee_id = %claimer.referee_id, "claiming matches for an external referee");
        tokio::spawn(self.clone().claim(claimer, shutdown.clone()));
    }

    async fn claim(self: Arc<Self>, claimer: Arc<Claimer>, shutdown: ShutdownSignal) {
        loop {
            let permit = tokio::select! {
                permit = claimer.slots.clone().acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
                () = shutdown.clone().wait() => return,
            };
            let resume_at = claimer.paused_until();
            if resume_at > Instant::now() {
                tokio::select! {
                    () = tokio::time::sleep_until(resume_at) => {}
                    () = shutdown.clone().wait() => return,
                }
            }
            let free = 1 + claimer.slots.available_permits() as u32;
            let mut request = self.league.for_referee(
                &claimer.referee_id,
                ClaimMatchesRequest {
                    max_matches: free,
                    wait: prost_types::Duration::try_from(CLAIM_WAIT).ok(),
                },
            );
            request.set_timeout(CLAIM_WAIT + Duration::from_secs(10));
            let mut manager = self.league.manager.clone();
            let claimed = tokio::select! {
                claimed = manager.claim_matches(request) => claimed,
                () = shutdown.clone().wait() => return,
            };
            let assignments = match claimed {
                Ok(response) => response.into_inner().assignments,
                Err(status) => {
                    tracing::warn!(referee_id = %claimer.referee_id, %status, "claim for an external referee failed");
                    claimer.pause();
                    continue;
                }
            };
            let mut first = Some(permit);
            for assignment in assignments {
                // The manager never hands out more than `free`, so a slot is there for each.
                let Some(slot) = first
                    .take()
                    .or_else(|| claimer.slots.clone().try_acquire_owned().ok())
                else {
                    break;
                };
                tokio::spawn(
                    self.clone()
                        .start_match(claimer.clone(), assignment, slot, shutdown.clone()),
                );
            }
        }
    }

    /// Sends START_MATCH and keeps the lease while the referee plays; the slot is free again after.
    async fn start_match(
        self: Arc<Self>,
        claimer: Arc<Claimer>,
        assignment: MatchAssignment,
        _slot: OwnedSemaphorePermit,
        shutdown: ShutdownSignal,
    ) {
        let scheduled = assignment.r#match.clone().unwrap_or_default();
        let key = (scheduled.league_id.clone(), scheduled.match_id.clone());
        let lease = LeaseRef {
            match_id: scheduled.match_id.clone(),
            lease_id: assignment.lease_id.clone(),
            league_id: scheduled.league_id.clone(),
        };
        self.remember_match(RefereedMatch {
            league_id: scheduled.league_id.clone(),
            match_id: scheduled.match_id.clone(),
            round_id: scheduled.round_id,
            game_type: scheduled.game_type.clone(),
            player_a: scheduled.player_a_id.clone(),
            player_b: scheduled.player_b_id.clone(),
            referee_id: claimer.referee_id.clone(),
            running: true,
        });
        let reported = Arc::new(Notify::new());
        lock(&self.reported).insert(key.clone(), reported.clone());
        let timing = assignment.timing.unwrap_or_default();
        let budget = match_budget(&timing);
        if self
            .send_start_match(&claimer.referee_id, &assignment, budget)
            .await
        {
            claimer.resume();
            self.keep_lease(&claimer.referee_id, &lease, &timing, budget, &reported, shutdown)
                .await;
        } else {
            claimer.pause();
            let request = self.league.for_referee(
                &claimer.referee_id,
                ReleaseLeasesRequest {
                    leases: vec![lease.clone()],
                },
            );
            if let Err(status) = self.league.manager.clone().release_leases(request).await {
                tracing::warn!(match_id = %lease.match_id, %status, "cannot release the match; its lease will expire");
            }
            lock(&self.matches).remove(&key);
        }
        lock(&self.reported).remove(&key);
    }

    /// START_MATCH, retried as the protocol retries (E001/E009, `max_attempts`, `retry_delay` apart).
    /// Whether the referee took the match.
    async fn send_start_match(
        &self,
        referee_id: &str,
        assignment: &MatchAssignment,
        budget: Duration,
    ) -> bool {
        let scheduled = assignment.r#match.clone().unwrap_or_default();
        let agent = match self.league.external_agent(referee_id).await {
            Ok(agent) => agent,
            Err(error) => {
                tracing::warn!(%referee_id, error = %error.description, "cannot look up the referee");
                return false;
            }
        };
        let message = self.start_match_message(referee_id, assignment, budget);
        let timing = assignment.timing.unwrap_or_default();
        let attempts = timing.max_attempts.max(1);
        let retry_delay = duration(timing.retry_delay.as_ref(), Duration::from_secs(2));
        for attempt in 1..=attempts {
            let outcome = self
                .bridge
                .call(
                    &agent,
                    MessageType::StartMatch,
                    message.clone(),
                    self.bridge.timeouts.other,
                )
                .await;
            match outcome {
                Ok(answer) if refused(&answer) => {
                    tracing::warn!(%referee_id, match_id = %scheduled.match_id, %answer, "the referee declined the match");
                    return false;
                }
                Ok(_) => {
                    tracing::debug!(%referee_id, match_id = %scheduled.match_id, "external referee started the match");
                    return true;
                }
                Err(Failure::League(error)) if error.code.is_retryable() && attempt < attempts => {
                    tracing::debug!(%referee_id, error = %error.description, attempt, "START_MATCH failed; retrying");
                    tokio::time::sleep(retry_delay).await;
                }
                Err(failure) => {
                    let status = failure.status(MessageType::StartMatch.as_str());
                    tracing::warn!(%referee_id, match_id = %scheduled.match_id, error = %status.message(), "the referee did not take the match");
                    return false;
                }
            }
        }
        false
    }

    fn start_match_message(&self, referee_id: &str, assignment: &MatchAssignment, budget: Duration) -> Value {
        let scheduled = assignment.r#match.clone().unwrap_or_default();
        let timing = assignment.timing.unwrap_or_default();
        let millis = |d: Option<&prost_types::Duration>| {
            d.and_then(|d| Duration::try_from(*d).ok())
                .map_or(Value::Null, |d| (d.as_millis() as u64).into())
        };
        let player = |seat: &str, player: Option<&league_proto::v2::AssignedPlayer>| {
            let player = player.cloned().unwrap_or_default();
            let record = player.record.unwrap_or_default();
            json!({
                "player_id": player.player_id,
                "display_name": player.display_name,
                "role_in_match": seat,
                "contact_endpoint": self.player_url(&player.player_id),
                "standings": {"wins": record.wins, "draws": record.draws, "losses": record.losses},
            })
        };
        wire::message(
            MessageType::StartMatch.as_str(),
            "league_manager",
            &format!("conv-{}-{}", scheduled.league_id, scheduled.match_id),
            json!({
                "league_id": scheduled.league_id,
                "round_id": scheduled.round_id,
                "match_id": scheduled.match_id,
                "game_type": scheduled.game_type,
                "referee_id": referee_id,
                "player_a_id": scheduled.player_a_id,
                "player_b_id": scheduled.player_b_id,
                "player_a_endpoint": self.player_url(&scheduled.player_a_id),
                "player_b_endpoint": self.player_url(&scheduled.player_b_id),
                "players": [
                    player("PLAYER_A", assignment.player_a.as_ref()),
                    player("PLAYER_B", assignment.player_b.as_ref()),
                ],
                "report_endpoint": self.public_url,
                "timing": {
                    "join_timeout_ms": millis(timing.join_timeout.as_ref()),
                    "move_timeout_ms": millis(timing.move_timeout.as_ref()),
                    "game_over_timeout_ms": millis(timing.game_over_timeout.as_ref()),
                    "max_attempts": timing.max_attempts,
                    "retry_delay_ms": millis(timing.retry_delay.as_ref()),
                },
                "deadline": timestamp::format(std::time::SystemTime::now() + budget),
            }),
        )
    }

    /// Renews the lease every third of its duration until the match is reported (here, or — the
    /// renewal says so — through another replica), the lease is lost, or the referee has had `budget`.
    async fn keep_lease(
        &self,
        referee_id: &str,
        lease: &LeaseRef,
        timing: &MatchTiming,
        budget: Duration,
        reported: &Notify,
        shutdown: ShutdownSignal,
    ) {
        let every = (duration(timing.lease_duration.as_ref(), Duration::from_secs(30)) / 3)
            .max(Duration::from_millis(50));
        let give_up_at = Instant::now() + budget;
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = reported.notified() => return,
                () = shutdown.clone().wait() => return,
            }
            if Instant::now() >= give_up_at {
                tracing::warn!(%referee_id, match_id = %lease.match_id, ?budget,
                    "the external referee did not report in time; its lease will expire and the match be replayed");
                return;
            }
            let request = self.league.for_referee(
                referee_id,
                RenewLeasesRequest {
                    leases: vec![lease.clone()],
                },
            );
            match self.league.manager.clone().renew_leases(request).await {
                Ok(response) if response.get_ref().renewals.iter().all(|r| r.renewed) => {}
                // Reported (through any replica) or lost: nothing left to keep.
                Ok(_) => return,
                Err(status) => tracing::warn!(match_id = %lease.match_id, %status, "lease renewal failed"),
            }
        }
    }
}

/// The longest a match may take by the league's timings: every attempt at the invitation and the move,
/// the GAME_OVER, and time to report.
fn match_budget(timing: &MatchTiming) -> Duration {
    let attempts = timing.max_attempts.max(1);
    let retry = duration(timing.retry_delay.as_ref(), Duration::from_secs(2));
    let join = duration(timing.join_timeout.as_ref(), Duration::from_secs(5));
    let moves = duration(timing.move_timeout.as_ref(), Duration::from_secs(30));
    let over = duration(timing.game_over_timeout.as_ref(), Duration::from_secs(5));
    (join + moves + retry * 2) * attempts + over + REPORT_ALLOWANCE
}

fn duration(value: Option<&prost_types::Duration>, default: Duration) -> Duration {
    value
        .and_then(|d| Duration::try_from(*d).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(default)
}

/// A START_MATCH answer that says no (`status` REJECTED/DECLINED, or `accept: false`).
fn refused(answer: &Value) -> bool {
    let status = answer
        .get("status")
        .and_then(Value::as_str)
        .map(str::to_ascii_uppercase);
    matches!(
        status.as_deref(),
        Some("REJECTED" | "DECLINED" | "REFUSED" | "BUSY")
    ) || answer.get("accept").and_then(Value::as_bool) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_match_budget_covers_every_attempt_and_the_report() {
        let spec = MatchTiming::default();
        // The specification's timings: 3 × (5 + 30 + 2 × 2) + 5 + 10.
        assert_eq!(
            match_budget(&MatchTiming {
                max_attempts: 3,
                ..spec
            }),
            Duration::from_secs(132)
        );
        let fast = MatchTiming {
            join_timeout: prost_types::Duration::try_from(Duration::from_millis(100)).ok(),
            move_timeout: prost_types::Duration::try_from(Duration::from_millis(100)).ok(),
            retry_delay: prost_types::Duration::try_from(Duration::from_millis(10)).ok(),
            game_over_timeout: prost_types::Duration::try_from(Duration::from_millis(100)).ok(),
            max_attempts: 1,
            lease_duration: None,
        };
        assert_eq!(match_budget(&fast), Duration::from_millis(320) + REPORT_ALLOWANCE);
    }

    #[test]
    fn refusals_are_told_apart_from_acknowledgements() {
        assert!(!refused(
            &json!({"message_type": "START_MATCH_ACK", "status": "MATCH_STARTED"})
        ));
        assert!(!refused(&json!({"status": "ok"})));
        assert!(!refused(&json!({})));
        assert!(refused(&json!({"status": "rejected", "reason": "busy"})));
        assert!(refused(&json!({"accept": false})));
    }
}
