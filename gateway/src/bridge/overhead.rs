//! What the gateway adds to a match with external players: the time each bridge call spends inside the
//! gateway, apart from the time the agent has it.
//!
//! For one call of a match (GAME_INVITATION, CHOOSE_PARITY_CALL / GAME_MOVE_CALL, GAME_OVER, GAME_ERROR)
//! the **overhead** is the time from the moment the bridge's `PlayerService` handler starts to the moment
//! it returns, minus the time the agent has the call: each HTTP exchange with it (request written to
//! answer read, [`agent_time`]) and any wait for a reply it sends as a separate call ([`waiting`]). What
//! is left is the gateway's own work: looking the agent up, building the league.v2 message, encoding
//! and decoding JSON, checking the answer, recording warnings. The gRPC hop from the referee to the
//! bridge (HTTP/2, protobuf) is outside it; the benchmark's all-bot versus all-external comparison
//! covers the whole path.
//!
//! The **overhead per match** is the sum over that match's calls handled by this gateway; it is recorded
//! once the match's last GAME_OVER to an external player this gateway invited has been answered (or has
//! failed).
//!
//! Both are histograms on the admin server's `/metrics`: `league_gateway_bridge_overhead_seconds
//! {message_type}` per call and `league_gateway_match_overhead_seconds` per match.

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use league_domain::{MatchId, MessageType, PlayerId, move_messages};
use league_proto::v2::player_service_server::PlayerService;
use league_proto::v2::*;
use league_runtime::grpc::{MatchCallAnswers, answer_match_calls};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use tokio::time::Instant;
use tonic::{Request, Response, Status};

use super::PlayerBridge;

tokio::task_local! {
    /// The agent's share of the bridge call running in this task.
    static AGENT_TIME: Cell<Duration>;
}

/// Counts `spent` as the agent's time in the bridge call running in this task (if one is measured).
pub(crate) fn agent_time(spent: Duration) {
    let _ = AGENT_TIME.try_with(|total| total.set(total.get() + spent));
}

/// Awaits `future` (a wait for the agent, e.g. for a reply it sends separately), counting the wait as
/// the agent's time.
pub(crate) async fn waiting<F: Future>(future: F) -> F::Output {
    let started = Instant::now();
    let output = future.await;
    agent_time(started.elapsed());
    output
}

/// 20 µs … ~1.5 s in steps of 15 %: fine enough to read a percentile to within a few per cent.
fn buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_02, 1.15, 80))
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    message_type: &'static str,
}

type PerCall = Family<CallLabels, Histogram, fn() -> Histogram>;

static PER_CALL: LazyLock<PerCall> = LazyLock::new(|| {
    let family: PerCall = Family::new_with_constructor(buckets);
    league_runtime::metrics::register(
        "league_gateway_bridge_overhead_seconds",
        "Time a bridge call spends in the gateway, apart from the agent's time, by message type",
        family.clone(),
    );
    family
});

static PER_MATCH: LazyLock<Histogram> = LazyLock::new(|| {
    let histogram = buckets();
    league_runtime::metrics::register(
        "league_gateway_match_overhead_seconds",
        "Gateway overhead summed over one match's bridge calls",
        histogram.clone(),
    );
    histogram
});

/// Matches in progress remembered at once; past it, those untouched for a minute are dropped.
const MAX_OPEN_MATCHES: usize = 10_000;

/// One match's calls so far.
#[derive(Debug)]
struct OpenMatch {
    overhead: Duration,
    /// The players this gateway invited.
    invited: Vec<PlayerId>,
    /// The players this gateway delivered (or tried to deliver) GAME_OVER to.
    over: Vec<PlayerId>,
    touched: Instant,
}

/// Per-match sums, recorded into a histogram when the match is over.
#[derive(Debug, Default)]
pub(crate) struct MatchOverheads {
    open: Mutex<HashMap<MatchId, OpenMatch>>,
}

impl MatchOverheads {
    /// Adds one call's overhead to its match; returns the match's total when this call ended it.
    pub(crate) fn add(
        &self,
        kind: MessageType,
        match_id: MatchId,
        player_id: &PlayerId,
        overhead: Duration,
    ) -> Option<Duration> {
        let now = Instant::now();
        let mut open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if open.len() >= MAX_OPEN_MATCHES && !open.contains_key(&match_id) {
            open.retain(|_, m| now.duration_since(m.touched) < Duration::from_secs(60));
        }
        let entry = open.entry(match_id).or_insert_with(|| OpenMatch {
            overhead: Duration::ZERO,
            invited: Vec::with_capacity(2),
            over: Vec::with_capacity(2),
            touched: now,
        });
        entry.overhead += overhead;
        entry.touched = now;
        let note = |players: &mut Vec<PlayerId>| {
            if !players.contains(player_id) {
                players.push(player_id.clone());
            }
        };
        match kind {
            MessageType::GameInvitation => note(&mut entry.invited),
            MessageType::GameOver => note(&mut entry.over),
            _ => {}
        }
        let ended = kind == MessageType::GameOver && entry.invited.iter().all(|p| entry.over.contains(p));
        if ended {
            return open.remove(&match_id).map(|m| m.overhead);
        }
        None
    }
}

static OPEN_MATCHES: LazyLock<MatchOverheads> = LazyLock::new(MatchOverheads::default);

/// Which match and player a call is for, as far as the measurement needs them: read from the request
/// before the bridge takes it. A call whose ids do not parse (the bridge refuses it) or that names no
/// match is measured alone, under no match.
fn in_match(context: Option<&MatchContext>, player_id: &str) -> Option<(MatchId, PlayerId)> {
    let match_id = MatchId::parse(&context?.match_id).ok()?;
    Some((match_id, PlayerId::parse(player_id).ok()?))
}

/// Runs one bridge call of a match, measuring its overhead.
async fn measured<T>(
    kind: MessageType,
    in_match: Option<(MatchId, PlayerId)>,
    call: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    let started = Instant::now();
    let (outcome, agent) = AGENT_TIME
        .scope(Cell::new(Duration::ZERO), async {
            let outcome = call.await;
            (outcome, AGENT_TIME.with(Cell::get))
        })
        .await;
    let overhead = started.elapsed().saturating_sub(agent);
    PER_CALL
        .get_or_create(&CallLabels {
            message_type: kind.as_str(),
        })
        .observe(overhead.as_secs_f64());
    if let Some((match_id, player_id)) = in_match
        && let Some(total) = OPEN_MATCHES.add(kind, match_id, &player_id, overhead)
    {
        PER_MATCH.observe(total.as_secs_f64());
    }
    outcome
}

/// The bridge with its overhead measured: what the gateway serves as every external player's
/// `PlayerService`.
#[derive(Debug, Clone)]
pub(crate) struct MeasuredBridge(pub PlayerBridge);

#[tonic::async_trait]
impl PlayerService for MeasuredBridge {
    async fn invite_to_match(
        &self,
        request: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, Status> {
        let called = in_match(request.get_ref().context.as_ref(), &request.get_ref().player_id);
        let call = self.0.invite_to_match(request);
        measured(MessageType::GameInvitation, called, call).await
    }

    async fn request_move(
        &self,
        request: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, Status> {
        let context = request.get_ref().context.as_ref();
        let called = in_match(context, &request.get_ref().player_id);
        // Without the match's context, the game is taken to be the league's own (even_odd).
        let kind = context.map_or(MessageType::ChooseParityCall, |c| move_messages(&c.game_type).0);
        let call = self.0.request_move(request);
        measured(kind, called, call).await
    }

    async fn notify_game_over(
        &self,
        request: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, Status> {
        let called = in_match(request.get_ref().context.as_ref(), &request.get_ref().player_id);
        let call = self.0.notify_game_over(request);
        measured(MessageType::GameOver, called, call).await
    }

    async fn notify_game_error(
        &self,
        request: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, Status> {
        let called = in_match(request.get_ref().context.as_ref(), &request.get_ref().player_id);
        let call = self.0.notify_game_error(request);
        measured(MessageType::GameError, called, call).await
    }

    // Lifecycle events are not part of a match. Their messages carry shared JSON (the same table to
    // every player), written into each request as it is (league_v2::shared_json).
    async fn notify_league_event(
        &self,
        request: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, Status> {
        league_v2::shared_json::scope(self.0.notify_league_event(request)).await
    }

    async fn notify_league_events(
        &self,
        request: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
        league_v2::shared_json::scope(self.0.notify_league_events(request)).await
    }

    type MatchCallsStream = MatchCallAnswers;

    /// Each call through the measured handlers above, so a call in an exchange is measured as a unary
    /// one is.
    async fn match_calls(
        &self,
        request: Request<MatchCallsRequest>,
    ) -> Result<Response<MatchCallAnswers>, Status> {
        answer_match_calls(Arc::new(self.clone()), request.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn player(text: &str) -> PlayerId {
        PlayerId::parse(text).expect("a player id")
    }

    #[test]
    fn a_match_ends_with_the_last_game_over_to_an_invited_player() {
        let overheads = MatchOverheads::default();
        let (m1, m2) = (MatchId::new(1, 1), MatchId::new(1, 2));
        let (p1, p2, p3) = (player("P01"), player("P02"), player("P03"));
        assert_eq!(overheads.add(MessageType::GameInvitation, m1, &p1, MS), None);
        assert_eq!(overheads.add(MessageType::GameInvitation, m1, &p2, MS), None);
        assert_eq!(overheads.add(MessageType::ChooseParityCall, m1, &p1, MS), None);
        assert_eq!(overheads.add(MessageType::ChooseParityCall, m1, &p2, MS), None);
        assert_eq!(overheads.add(MessageType::GameOver, m1, &p2, MS), None);
        // Another match meanwhile, with one external player (its opponent is a bot).
        assert_eq!(overheads.add(MessageType::GameInvitation, m2, &p3, MS), None);
        assert_eq!(
            overheads.add(MessageType::GameOver, m2, &p3, MS * 2),
            Some(MS * 3)
        );
        assert_eq!(overheads.add(MessageType::GameOver, m1, &p1, MS), Some(MS * 6));
        assert!(overheads.open.lock().expect("lock").is_empty());
    }

    #[test]
    fn a_call_whose_ids_do_not_parse_is_measured_under_no_match() {
        let context = |match_id: &str| MatchContext {
            match_id: match_id.into(),
            ..MatchContext::default()
        };
        let named = in_match(Some(&context("R1M2")), "P01");
        assert_eq!(named, Some((MatchId::new(1, 2), player("P01"))));
        assert_eq!(in_match(Some(&context("R1M2")), "p1"), None);
        assert_eq!(in_match(Some(&context("M1")), "P01"), None);
        assert_eq!(in_match(None, "P01"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_agents_time_is_not_overhead() {
        let outcome = measured(MessageType::GameOver, None, async {
            // 7 ms in all, of which the HTTP client reports 5 ms as the exchange with the agent.
            tokio::time::sleep(MS * 7).await;
            agent_time(MS * 5);
            // A reply the agent sends separately, 30 ms later.
            waiting(tokio::time::sleep(MS * 30)).await;
            Ok::<_, Status>(())
        })
        .await;
        assert!(outcome.is_ok());
        // No match id: nothing is kept per match.
        assert!(OPEN_MATCHES.open.lock().expect("lock").is_empty());
        let mut text = String::new();
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register("overhead", "", PER_CALL.clone());
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        let sum: f64 = text
            .lines()
            .find_map(|line| line.strip_prefix("overhead_sum{message_type=\"GAME_OVER\"} "))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("no sum in {text}"));
        // 37 ms in the handler, 35 ms of them the agent's: 2 ms of overhead, counted once.
        assert!((sum - 0.002).abs() < 0.000_5, "{text}");
        assert!(
            text.contains("overhead_count{message_type=\"GAME_OVER\"} 1"),
            "{text}"
        );
    }
}
