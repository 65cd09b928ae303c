//! The player host: one `PlayerService` serving many bots, each addressed by the `player_id` of a request.
//!
//! The bots live behind one mutex that is held only while a bot decides or remembers — never while a
//! reply waits (see [`Reply::deliver`]) — so a silent or late bot delays nobody else.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use league_proto::v2::player_service_server::{PlayerService, PlayerServiceServer};
use league_proto::v2::{
    InviteToMatchRequest, InviteToMatchResponse, LeagueEventDelivery, MatchCallsRequest, MatchContext,
    NotifyGameErrorRequest, NotifyGameErrorResponse, NotifyGameOverRequest, NotifyGameOverResponse,
    NotifyLeagueEventRequest, NotifyLeagueEventResponse, NotifyLeagueEventsRequest,
    NotifyLeagueEventsResponse, RequestMoveRequest, RequestMoveResponse,
};
use league_proto::{ErrorCode, error_code};
use league_runtime::grpc::{MatchCallAnswers, answer_match_calls};
use rand::rngs::{OsRng, StdRng};
use rand::{SeedableRng, TryRngCore};
use sha2::{Digest, Sha256};
use tonic::{Request, Response, Status};

use crate::behaviour::Behaviour;
use crate::bot::{Bot, Reply};
use crate::llm::LlmClient;
use crate::llm_moves::{self, Decider, LlmMoves};
use crate::memory::{EventKind, GameErrorRecord, GameRecord, Shared};
use crate::strategy::{EVEN_ODD, parity_move};

/// A hosted bot as listed by [`PlayerHost::bots`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotInfo {
    pub player_id: String,
    pub display_name: String,
    pub behaviour: Behaviour,
}

/// Many bot players behind one `PlayerService`.
#[derive(Debug, Default)]
pub struct PlayerHost {
    bots: Mutex<BTreeMap<String, Bot>>,
    /// What the bots share: one copy of each league event and of each name their memories hold. Locked
    /// only while `bots` is held, so the two are always taken in that order.
    shared: Mutex<Shared>,
    /// Counts league notifications taken (first deliveries only), so a watcher can wait for one
    /// instead of polling.
    events_seen: tokio::sync::watch::Sender<u64>,
    /// Registrations still waiting for the manager's answer. The registration that completes a league
    /// may start it, and the first call for that player can arrive before its answer does: such a call
    /// waits for the registrations in flight instead of being refused.
    registering: AtomicUsize,
    /// Bumped whenever a bot is added or a registration ends.
    roster: tokio::sync::watch::Sender<u64>,
    /// Makes the bots' choices reproducible (see [`PlayerHost::seeded`]); none: the OS RNG.
    seed: Option<u64>,
    /// The chat endpoint `llm` bots ask; without one they play their fallback.
    llm: Option<Arc<LlmClient>>,
    /// How long every bot thinks before each move (see [`PlayerHost::thinking`]).
    think_time: Duration,
    /// The host as [`PlayerHost::service`] serves it: a MatchCalls exchange streams its answers after
    /// the handler has returned, so its calls need the host for as long as they run.
    served: OnceLock<Weak<PlayerHost>>,
}

/// Held while one registration is in flight (see [`PlayerHost::registration`]).
#[derive(Debug)]
pub struct Registration<'a>(&'a PlayerHost);

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.0.registering.fetch_sub(1, Ordering::SeqCst);
        self.0.roster.send_modify(|generation| *generation += 1);
    }
}

/// The longest a call for an unknown player waits for registrations in flight.
const REGISTRATION_WAIT: Duration = Duration::from_secs(10);

impl PlayerHost {
    pub fn new() -> PlayerHost {
        PlayerHost::default()
    }

    /// With a seed, each choice comes from an RNG seeded by the seed and what is being decided (player,
    /// match, step, attempt), so the same bot in the same situation chooses the same, whatever order
    /// the calls arrive in. Only the bots' choices: the referee's draw stays the OS CSPRNG's.
    pub fn seeded(self, seed: Option<u64>) -> PlayerHost {
        PlayerHost { seed, ..self }
    }

    /// The chat endpoint that `llm` bots ask for their Even/Odd choices.
    pub fn with_llm(self, llm: Option<LlmClient>) -> PlayerHost {
        PlayerHost {
            llm: llm.map(Arc::new),
            ..self
        }
    }

    /// Every bot waits `think_time` before each move, whatever its behaviour: a league slowed to a pace
    /// people can watch. Unlike the `late` fault it is the same for every bot and no behaviour of its own,
    /// so it changes no result and names no strategy.
    pub fn thinking(self, think_time: Duration) -> PlayerHost {
        PlayerHost { think_time, ..self }
    }

    /// For an `llm` bot in an Even/Odd match, the model's move; `None` when the bot is not one, or the
    /// model gave no usable answer (then the bot plays its fallback). Every move of an `llm` bot is
    /// counted by who decided it ([`crate::llm_moves`]).
    async fn ask_llm(&self, request: &RequestMoveRequest) -> Option<RequestMoveResponse> {
        let player_id = request.player_id.as_str();
        let opponent = request.opponent_id.as_str();
        let history = self
            .with_bot(player_id, |bot| {
                (bot.behaviour == Behaviour::Llm).then(|| {
                    bot.memory
                        .history()
                        .iter()
                        .filter(|game| game.opponent_id == opponent)
                        .filter_map(|game| game.opponent_choice)
                        .collect::<Vec<_>>()
                })
            })
            .ok()??;
        let game_type = request.context.as_ref().map(|context| context.game_type.as_str());
        let answer = match (&self.llm, game_type == Some(EVEN_ODD)) {
            (_, false) => Err(Decider::OtherGame),
            // Refused at start-up (`unavailable_llm`); a host built without one has nobody to ask.
            (None, true) => Err(Decider::Down),
            (Some(llm), true) => llm.choose(opponent, &history).await.map_err(|error| {
                tracing::warn!(%player_id, %error, "llm strategy: playing adaptive instead");
                Decider::of(&error)
            }),
        };
        let decider = answer
            .as_ref()
            .map_or_else(|decider| *decider, |_| Decider::Model);
        let first_of_its_kind = self
            .with_bot(player_id, |bot| {
                bot.llm_moves.count(decider);
                bot.llm_moves.of(decider) == 1
            })
            .unwrap_or(false);
        llm_moves::record(player_id, decider);
        if decider == Decider::OtherGame && first_of_its_kind {
            tracing::warn!(
                %player_id,
                game_type = game_type.unwrap_or_default(),
                "llm strategy: the model is asked only in even_odd; this bot plays adaptive's moves here"
            );
        }
        answer.ok().map(|parity| RequestMoveResponse {
            move_payload: Some(parity_move(parity.as_str())),
        })
    }

    /// Each `llm` bot's moves by who decided them, by player id.
    pub fn llm_moves(&self) -> BTreeMap<String, LlmMoves> {
        self.lock()
            .iter()
            .filter(|(_, bot)| bot.behaviour == Behaviour::Llm)
            .map(|(player_id, bot)| (player_id.clone(), bot.llm_moves.clone()))
            .collect()
    }

    /// Marks a registration as in flight until the returned guard is dropped (after `add_bot`).
    pub fn registration(&self) -> Registration<'_> {
        self.registering.fetch_add(1, Ordering::SeqCst);
        Registration(self)
    }

    /// Returns when `player_id` is hosted, or when no registration that could add it is in flight.
    async fn await_bot(&self, player_id: &str) {
        let mut roster = self.roster.subscribe();
        let deadline = tokio::time::Instant::now() + REGISTRATION_WAIT;
        while !self.lock().contains_key(player_id) && self.registering.load(Ordering::SeqCst) > 0 {
            if tokio::time::timeout_at(deadline, roster.changed()).await.is_err() {
                return;
            }
        }
    }

    /// [`PlayerHost::await_bot`] for each of a delivery's recipients, locking only while registrations are
    /// in flight.
    async fn await_bots(&self, player_ids: &[String]) {
        let mut roster = self.roster.subscribe();
        let deadline = tokio::time::Instant::now() + REGISTRATION_WAIT;
        loop {
            let waiting = self.registering.load(Ordering::SeqCst) > 0 && {
                let bots = self.lock();
                !player_ids.iter().all(|player_id| bots.contains_key(player_id))
            };
            if !waiting || tokio::time::timeout_at(deadline, roster.changed()).await.is_err() {
                return;
            }
        }
    }

    /// Returns once every hosted bot has been told LEAGUE_COMPLETED (at once if they all have).
    pub async fn league_completed_for_all(&self) {
        let mut seen = self.events_seen.subscribe();
        loop {
            let done = {
                let bots = self.lock();
                !bots.is_empty() && bots.values().all(|bot| bot.memory.took_league_completed())
            };
            if done || seen.changed().await.is_err() {
                return;
            }
        }
    }

    /// Hosts a bot under the id the manager gave it. Adding an id again replaces that bot, memory and all.
    pub fn add_bot(
        &self,
        player_id: impl Into<String>,
        display_name: impl Into<String>,
        behaviour: Behaviour,
    ) {
        self.lock()
            .insert(player_id.into(), Bot::new(display_name, behaviour));
        self.roster.send_modify(|generation| *generation += 1);
    }

    /// Every hosted bot, by player id.
    pub fn bots(&self) -> Vec<BotInfo> {
        self.lock()
            .iter()
            .map(|(player_id, bot)| BotInfo {
                player_id: player_id.clone(),
                display_name: bot.display_name.clone(),
                behaviour: bot.behaviour,
            })
            .collect()
    }

    /// The bot's finished matches, in arrival order; `None` for an id this host does not serve.
    pub fn history(&self, player_id: &str) -> Option<Vec<GameRecord>> {
        self.lock()
            .get(player_id)
            .map(|bot| bot.memory.history().to_vec())
    }

    /// The league events the bot took, first deliveries only: `(event_id, kind)`.
    pub fn events(&self, player_id: &str) -> Option<Vec<(String, EventKind)>> {
        let bots = self.lock();
        let bot = bots.get(player_id)?;
        let shared = self.shared();
        let events = bot.memory.events(&shared.events);
        Some(
            events
                .map(|(event_id, kind)| (event_id.to_owned(), kind))
                .collect(),
        )
    }

    pub fn game_errors(&self, player_id: &str) -> Option<Vec<GameErrorRecord>> {
        self.lock()
            .get(player_id)
            .map(|bot| bot.memory.game_errors().to_vec())
    }

    /// The gRPC service, sharing the host with the caller (who can keep adding bots and reading memory).
    pub fn service(self: &Arc<Self>) -> PlayerServiceServer<PlayerHost> {
        // Served once or many times, it is the same host.
        let _ = self.served.set(Arc::downgrade(self));
        PlayerServiceServer::from_arc(Arc::clone(self))
    }

    /// A poisoned lock still guards consistent data: every critical section is a single insert or push.
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Bot>> {
        self.bots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the bots share; taken only while `bots` is locked, always in that order.
    fn shared(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` on the bot `player_id` under the lock; E005 when this host does not serve that id.
    fn with_bot<R>(&self, player_id: &str, work: impl FnOnce(&mut Bot) -> R) -> Result<R, Status> {
        let mut bots = self.lock();
        let bot = bots.get_mut(player_id).ok_or_else(|| {
            error_code::status(
                ErrorCode::PlayerNotRegistered,
                format!("player {player_id:?} is not hosted here"),
            )
        })?;
        Ok(work(bot))
    }
}

#[tonic::async_trait]
impl PlayerService for PlayerHost {
    async fn invite_to_match(
        &self,
        request: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, Status> {
        let request = request.into_inner();
        name_call(&request.player_id, request.context.as_ref());
        tracing::debug!(player_id = %request.player_id, opponent_id = %request.opponent_id, "invitation");
        self.await_bot(&request.player_id).await;
        let reply = self.with_bot(&request.player_id, |bot| bot.invitation())?;
        reply.deliver().await
    }

    async fn request_move(
        &self,
        request: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, Status> {
        let request = request.into_inner();
        name_call(&request.player_id, request.context.as_ref());
        tracing::debug!(
            player_id = %request.player_id,
            step = request.step,
            attempt = request.attempt,
            "move request"
        );
        self.await_bot(&request.player_id).await;
        if !self.think_time.is_zero() {
            tokio::time::sleep(self.think_time).await;
        }
        if let Some(answer) = self.ask_llm(&request).await {
            return Ok(Response::new(answer));
        }
        // Unseeded, bots play against the operating system's RNG: nothing for an opponent to learn.
        let reply: Reply<_> = self.with_bot(&request.player_id, |bot| match self.seed {
            Some(seed) => bot.move_for(&request, &mut choice_rng(seed, &request)),
            None => bot.move_for(&request, &mut OsRng.unwrap_err()),
        })?;
        reply.deliver().await
    }

    async fn notify_game_over(
        &self,
        request: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, Status> {
        let request = request.into_inner();
        let player_id = &request.player_id;
        name_call(player_id, request.context.as_ref());
        self.await_bot(player_id).await;
        self.with_bot(player_id, |bot| match &request.result {
            Some(result) => {
                let names = &mut self.shared().names;
                let record = GameRecord::from_result(player_id, request.context.as_ref(), result, names);
                if !bot.memory.record_game(record) {
                    tracing::debug!(%player_id, match_id = %result.match_id, "GAME_OVER redelivered");
                }
            }
            // Nothing to learn from, but nothing the referee can fix either: take it and move on.
            None => tracing::warn!(%player_id, "GAME_OVER without a result"),
        })?;
        Ok(Response::new(NotifyGameOverResponse {}))
    }

    async fn notify_game_error(
        &self,
        request: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, Status> {
        let request = request.into_inner();
        name_call(&request.player_id, request.context.as_ref());
        tracing::debug!(player_id = %request.player_id, code = %request.error_code, "GAME_ERROR");
        let error = GameErrorRecord::from(&request);
        self.await_bot(&request.player_id).await;
        self.with_bot(&request.player_id, |bot| bot.memory.record_game_error(error))?;
        Ok(Response::new(NotifyGameErrorResponse {}))
    }

    async fn notify_league_event(
        &self,
        request: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, Status> {
        let event = request.into_inner();
        let player_id = event.player_id.as_str();
        self.await_bot(player_id).await;
        if self.take_event(&event, &[player_id]) != [true] {
            return Err(error_code::status(
                ErrorCode::PlayerNotRegistered,
                format!("player {player_id:?} is not hosted here"),
            ));
        }
        Ok(Response::new(NotifyLeagueEventResponse {}))
    }

    async fn notify_league_events(
        &self,
        request: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
        let deliveries = request.into_inner().deliveries;
        let mut accepted = Vec::new();
        let mut failed: HashSet<String> = HashSet::new();
        for LeagueEventDelivery { event, player_ids } in deliveries {
            self.await_bots(&player_ids).await;
            // After a failure for a player, its later events wait for the redelivery: order holds. A
            // delivery without its event is taken by nobody.
            let held_back: Vec<bool> = player_ids.iter().map(|id| failed.contains(id)).collect();
            let recipients: Vec<&str> = player_ids
                .iter()
                .zip(&held_back)
                .filter(|(_, held_back)| !**held_back)
                .map(|(player_id, _)| player_id.as_str())
                .collect();
            let mut taken = match &event {
                Some(event) => self.take_event(event, &recipients),
                None => vec![false; recipients.len()],
            }
            .into_iter();
            for (player_id, held_back) in player_ids.into_iter().zip(held_back) {
                let took = !held_back && taken.next() == Some(true);
                if !took {
                    failed.insert(player_id);
                }
                accepted.push(took);
            }
        }
        Ok(Response::new(NotifyLeagueEventsResponse { accepted }))
    }

    type MatchCallsStream = MatchCallAnswers;

    /// Each call through its handler above, all at once, each answer as soon as it is ready.
    async fn match_calls(
        &self,
        request: Request<MatchCallsRequest>,
    ) -> Result<Response<MatchCallAnswers>, Status> {
        let host = self.served.get().and_then(Weak::upgrade).ok_or_else(|| {
            Status::internal("this player host answers MatchCalls only when served by PlayerHost::service")
        })?;
        answer_match_calls(host, request.into_inner())
    }
}

/// Names the player and the match a call is about on the call's span, so its trace and logs say so.
fn name_call(player_id: &str, context: Option<&MatchContext>) {
    let (league_id, match_id, conversation_id) = context.map_or(("", "", ""), |context| {
        (
            context.league_id.as_str(),
            context.match_id.as_str(),
            context.conversation_id.as_str(),
        )
    });
    league_runtime::grpc::record_call_fields(league_id, match_id, conversation_id, player_id);
}

/// The RNG of one seeded choice: a function of the seed and of what is being decided.
fn choice_rng(seed: u64, request: &RequestMoveRequest) -> StdRng {
    let match_id = request
        .context
        .as_ref()
        .map_or("", |context| context.match_id.as_str());
    let key = format!(
        "{seed}/{}/{match_id}/{}/{}",
        request.player_id, request.step, request.attempt
    );
    StdRng::from_seed(Sha256::digest(key.as_bytes()).into())
}

impl PlayerHost {
    /// Takes one league notification for each of `player_ids` under one lock, each bot once per event id
    /// (its own `player_id` is ignored: a delivery to many players has none). Whether each took it: a
    /// repeat is taken too (acknowledged, so the manager stops redelivering it); a player this host does
    /// not serve is not.
    fn take_event(&self, request: &NotifyLeagueEventRequest, player_ids: &[&str]) -> Vec<bool> {
        let kind = EventKind::of(request.event.as_ref());
        let mut first = 0;
        let taken = {
            let mut bots = self.lock();
            let mut shared = self.shared();
            let event = shared.event(&request.league_id, &request.event_id, kind);
            let taken = player_ids
                .iter()
                .map(|&player_id| {
                    let Some(bot) = bots.get_mut(player_id) else {
                        return false;
                    };
                    if bot.memory.take_event(&event) {
                        first += 1;
                    } else {
                        tracing::debug!(%player_id, event_id = %request.event_id, "event redelivered");
                    }
                    true
                })
                .collect();
            // The bots that took it forgot the league they had completed before: so does the host.
            if kind == EventKind::LeagueCompleted {
                shared.forget_unused(bots.values().map(|bot| &bot.memory));
            }
            taken
        };
        if first > 0 {
            self.events_seen.send_modify(|seen| *seen += first);
        }
        taken
    }
}

#[cfg(test)]
mod seeded {
    use super::*;

    /// A random bot's choices over 40 matches.
    async fn choices(seed: Option<u64>) -> Vec<String> {
        let host = PlayerHost::new().seeded(seed);
        host.add_bot("P01", "bot-random", "random".parse().expect("a behaviour"));
        let mut choices = vec![];
        for round in 1..=40 {
            let request = RequestMoveRequest {
                player_id: "P01".into(),
                step: 1,
                context: Some(MatchContext {
                    game_type: "even_odd".into(),
                    match_id: format!("R{round}M1"),
                    ..MatchContext::default()
                }),
                ..RequestMoveRequest::default()
            };
            let answer = host
                .request_move(Request::new(request))
                .await
                .expect("a move")
                .into_inner();
            choices.push(format!("{:?}", answer.move_payload));
        }
        choices
    }

    #[tokio::test(start_paused = true)]
    async fn every_bot_thinks_as_long_as_the_host_says_before_each_move() {
        let think = Duration::from_millis(300);
        let host = PlayerHost::new().seeded(Some(1)).thinking(think);
        host.add_bot("P01", "bot-random", "random".parse().expect("a behaviour"));
        let request = RequestMoveRequest {
            player_id: "P01".into(),
            step: 1,
            context: Some(MatchContext {
                game_type: "even_odd".into(),
                match_id: "R1M1".into(),
                ..MatchContext::default()
            }),
            ..RequestMoveRequest::default()
        };
        // The clock is paused and moves only when every task waits: the move took the think time on it.
        let before = tokio::time::Instant::now();
        let answer = host
            .request_move(Request::new(request.clone()))
            .await
            .expect("a move")
            .into_inner();
        assert_eq!(before.elapsed(), think);
        assert!(answer.move_payload.is_some());
        // Thinking changes nothing the bot chooses.
        let quick = PlayerHost::new().seeded(Some(1));
        quick.add_bot("P01", "bot-random", "random".parse().expect("a behaviour"));
        let before = tokio::time::Instant::now();
        let same = quick
            .request_move(Request::new(request))
            .await
            .expect("a move")
            .into_inner();
        assert_eq!(before.elapsed(), Duration::ZERO);
        assert_eq!(same, answer);
    }

    #[tokio::test]
    async fn the_same_seed_gives_the_same_choices_and_another_seed_others() {
        let first = choices(Some(7)).await;
        assert_eq!(first, choices(Some(7)).await);
        assert_ne!(first, choices(Some(8)).await);
        // Unseeded: the OS RNG; 40 coin flips coincide with the seeded ones once in 2^40.
        assert_ne!(first, choices(None).await);
    }
}
