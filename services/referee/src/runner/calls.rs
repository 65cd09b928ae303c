//! The runner's calls to players: each made again through an outage of the league's own services
//! (see [`outage`](super::outage)) until it gets through or the player misses it; a miss recorded,
//! answered with GAME_ERROR and counted against the seat's attempts; GAME_OVER delivered to both.

use super::*;

impl<P: Players> Runner<'_, P> {
    /// Makes the call `call` builds, bounded by `timeout`, and again after each outage of the league's
    /// services (see [`outage`]) until it gets through: the answer, or the player's miss (recorded as the
    /// missing `reply`). [`Interrupted`] when the outage outlasts the match's patience.
    pub(super) async fn reach<T, F>(
        &self,
        seat: Seat,
        reply: &str,
        attempt: u32,
        timeout: Duration,
        call: impl Fn() -> F,
    ) -> Result<Result<T, Miss>, Interrupted>
    where
        F: Future<Output = Result<T, Status>>,
    {
        let patience = self.patience;
        let since = tokio::time::Instant::now();
        let mut pauses = outage::pauses();
        loop {
            let status = match tokio::time::timeout(timeout, call()).await {
                Ok(Ok(answer)) => return Ok(Ok(answer)),
                Ok(Err(status)) if miss::is_outage(&status) => status,
                Ok(Err(status)) => return Ok(Err(self.call_failed(seat, reply, attempt, &status))),
                Err(_) => return Ok(Err(self.timed_out(seat, reply, attempt, timeout))),
            };
            let waited = since.elapsed();
            if waited >= patience {
                return Err(Interrupted {
                    reason: format!(
                        "{} could not be reached through the league's services for {waited:?}: {:?}: {}",
                        self.id(seat),
                        status.code(),
                        status.message()
                    ),
                });
            }
            let pause = pauses.next().unwrap_or(outage::MIN_PATIENCE);
            tracing::warn!(
                match_id = %self.context.match_id,
                player_id = self.id(seat),
                %status,
                ?pause,
                "the league's services are down between the referee and the player; not the player's miss, calling again"
            );
            metrics::outage_waited();
            tokio::time::sleep(pause.min(patience - waited)).await;
        }
    }

    /// After a miss: tells the player (GAME_ERROR) and says whether it failed for good.
    pub(super) async fn missed(
        &self,
        seat: Seat,
        exchange: Exchange,
        attempt: u32,
        miss: Miss,
        misses: &mut Vec<Miss>,
    ) -> Option<SeatFailure> {
        let retry_follows = miss.retryable() && attempt < self.timing.max_attempts;
        tracing::warn!(
            match_id = %self.context.match_id,
            player_id = self.id(seat),
            exchange = exchange.name(),
            attempt,
            code = %miss.code,
            detail = %miss.detail,
            retry_follows,
            "player missed an exchange"
        );
        spans::record_error(&Span::current(), &miss.detail);
        if retry_follows {
            metrics::player_retried(exchange.name());
        }
        self.game_error(seat, exchange, attempt, &miss, retry_follows)
            .await;
        let refused = !miss.retryable();
        misses.push(miss);
        refused.then(|| self.exhausted(seat, exchange, misses))
    }

    pub(super) fn exhausted(&self, seat: Seat, exchange: Exchange, misses: &[Miss]) -> SeatFailure {
        SeatFailure {
            seat,
            reason: failure_reason(self.id(seat), exchange.name(), misses),
            cause: misses.last().map_or("refused", |miss| miss.kind.cause()),
        }
    }

    /// GAME_ERROR to the player in `seat` about `miss`: best effort, bounded by the game-over timeout.
    pub(super) async fn game_error(
        &self,
        seat: Seat,
        exchange: Exchange,
        attempt: u32,
        miss: &Miss,
        retry_follows: bool,
    ) {
        let action = if retry_follows {
            exchange.retry_action()
        } else {
            ACTION_NONE
        };
        let max_attempts = self.timing.max_attempts;
        let request = NotifyGameErrorRequest {
            player_id: self.id(seat).to_owned(),
            context: Some(self.context.clone()),
            error_code: miss.code.code().to_owned(),
            error_description: miss.detail.clone(),
            affected_player: self.id(seat).to_owned(),
            action_required: action.to_owned(),
            retry_count: attempt,
            max_retries: max_attempts,
            consequence: CONSEQUENCE.to_owned(),
        };
        let payload = object([
            ("error_description", string(miss.detail.as_str())),
            ("action_required", string(action)),
            ("retry_count", number(attempt)),
            ("max_retries", number(max_attempts)),
            ("consequence", string(CONSEQUENCE)),
        ]);
        self.sent(
            seat,
            MessageType::GameError.as_str(),
            attempt,
            Some(payload),
            Some(miss.code),
        );
        self.deliver(
            seat,
            MessageType::GameError.as_str(),
            attempt,
            self.players.game_error(seat, request),
        )
        .await;
    }

    /// GAME_OVER with `result` to both players at once, best effort.
    pub(super) async fn game_over(&self, result: &MatchResult) {
        let status = result.status().as_str_name();
        let payload = object([
            (
                "status",
                string(status.strip_prefix("RESULT_STATUS_").unwrap_or(status)),
            ),
            ("winner_player_id", string(result.winner_player_id.as_str())),
            ("reason", string(result.reason.as_str())),
        ]);
        let notify = |seat: Seat| {
            let request = NotifyGameOverRequest {
                player_id: self.id(seat).to_owned(),
                context: Some(self.context.clone()),
                result: Some(result.clone()),
            };
            self.sent(
                seat,
                MessageType::GameOver.as_str(),
                1,
                Some(payload.clone()),
                None,
            );
            self.deliver(
                seat,
                MessageType::GameOver.as_str(),
                1,
                self.players.game_over(seat, request),
            )
        };
        join(notify(Seat::A), notify(Seat::B)).await;
    }

    /// Waits up to the game-over timeout for a notification to be taken; records a failure.
    pub(super) async fn deliver<T>(
        &self,
        seat: Seat,
        message_type: &str,
        attempt: u32,
        call: impl Future<Output = Result<T, Status>>,
    ) {
        let timeout = self.timing.game_over_timeout;
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(_)) => {}
            Ok(Err(status)) => {
                let miss = self.call_failed(seat, message_type, attempt, &status);
                spans::record_error(&Span::current(), &miss.detail);
            }
            Err(_) => {
                let miss = self.timed_out(seat, message_type, attempt, timeout);
                spans::record_error(&Span::current(), &miss.detail);
            }
        }
    }

    /// Records that `reply` did not come because the call failed with `status`.
    pub(super) fn call_failed(&self, seat: Seat, reply: &str, attempt: u32, status: &Status) -> Miss {
        let miss = Miss::from_status(reply, status);
        self.reply_missing(seat, reply, attempt, &miss);
        miss
    }

    /// Records that `reply` did not come within `timeout`.
    pub(super) fn timed_out(&self, seat: Seat, reply: &str, attempt: u32, timeout: Duration) -> Miss {
        let miss = Miss::timeout(reply, timeout);
        self.reply_missing(seat, reply, attempt, &miss);
        miss
    }

    pub(super) fn reply_missing(&self, seat: Seat, reply: &str, attempt: u32, miss: &Miss) {
        if miss.code == ErrorCode::Timeout {
            metrics::player_timed_out(reply);
        }
        let payload = object([("error", string(miss.detail.as_str()))]);
        self.received(seat, reply, attempt, Some(payload), Some(miss.code));
    }
}
