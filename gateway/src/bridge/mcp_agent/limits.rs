//! The bounds on the gateway's MCP sessions with agents (issue 53): how many there are at once, how long
//! each HTTP exchange of one may last, and the switch that ends every exchange of a session the moment
//! the gateway lets the session go.
//!
//! Why the switch: rmcp's client worker (a task of its own) sends `initialize` and reads its answer
//! without watching for its own cancellation, so a session given up while an agent holds `initialize`
//! unanswered, or answers it with an event stream that never ends, would keep its task and its
//! connection for ever. Every exchange of a session goes through its [`Lifeline`] instead: when the
//! session's [`SessionLife`] is dropped (the call that opened it ran out of time, the session failed or
//! was replaced), the exchange ends at once, rmcp's worker sees its transport fail and stops, and the
//! connection is closed. [`EXCHANGE_LIMIT`] bounds whatever the switch does not.
//!
//! The numbers:
//! - [`MAX_SESSIONS`] = 256 sessions open or being opened in the gateway at once: above the largest
//!   field the league has run through one gateway (200 external agents,
//!   docs/benchmarks/17-2026-11-26-external-agents-at-200-players.md); with [`CALLS_PER_SESSION`]
//!   connections each at most, 1,024 outbound connections, the bound the gateway keeps inbound
//!   (`LEAGUE_MAX_CONNECTIONS`). A session waits for a place
//!   within its call's own deadline (a full gateway delays a new session, never refuses an open one).
//! - [`SESSIONS_PER_AGENT`] = 2: the one in use, and the one that replaces it while the failed one's
//!   last calls finish. A third is the agent's own failure, charged to it alone.
//! - [`CALLS_PER_SESSION`] = 4 requests in flight per session: a player has at most a game call, its
//!   join and a league event or two outstanding at once.
//! - [`EXCHANGE_LIMIT`] = 5 minutes for any one exchange (answer head, body or event stream): a backstop
//!   for what neither the call's deadline nor the lifeline ends (a stream rmcp keeps after a call it
//!   gave up on), well above the deadlines leagues are configured with (a move's is 30 s by default), so it
//!   never cuts an answer someone waits for.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use league_proto::ErrorCode;
use league_v2::league_error::LeagueError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit, watch};

/// MCP sessions open or being opened in the gateway at once.
pub(crate) const MAX_SESSIONS: usize = 256;
/// MCP sessions open or closing with one agent at once.
pub(crate) const SESSIONS_PER_AGENT: usize = 2;
/// Requests in flight in one session at once.
pub(crate) const CALLS_PER_SESSION: usize = 4;
/// The longest any one HTTP exchange of a session lasts: an answer's head, its body, an event stream.
pub(crate) const EXCHANGE_LIMIT: Duration = Duration::from_secs(300);

/// The gateway's places for sessions (one gateway a process).
static SESSIONS: Semaphore = Semaphore::const_new(MAX_SESSIONS);

/// One agent's places for sessions.
#[derive(Debug, Clone)]
pub(crate) struct AgentSessions(Arc<Semaphore>);

impl Default for AgentSessions {
    fn default() -> Self {
        Self(Arc::new(Semaphore::new(SESSIONS_PER_AGENT)))
    }
}

impl AgentSessions {
    /// A place for a new session with this agent and in the gateway (waiting for the gateway's, not for
    /// the agent's own): the session's life, and the lifeline its exchanges watch.
    pub(crate) async fn admit(&self) -> Result<(SessionLife, Lifeline), LeagueError> {
        let agent = self.0.clone().try_acquire_owned().map_err(|_| {
            LeagueError::new(
                ErrorCode::ConnectionError,
                format!("the agent already has {SESSIONS_PER_AGENT} MCP sessions that did not end"),
            )
        })?;
        let gateway = SESSIONS
            .acquire()
            .await
            .map_err(|_| LeagueError::new(ErrorCode::ConnectionError, "the gateway is shutting down"))?;
        let (alive, watched) = watch::channel(());
        let life = SessionLife {
            _alive: alive,
            _agent: agent,
            _gateway: gateway,
        };
        Ok((life, Lifeline(watched)))
    }

    /// Sessions with this agent that have not ended.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        SESSIONS_PER_AGENT - self.0.available_permits()
    }
}

/// A session's places; dropping it ends every exchange of the session.
#[derive(Debug)]
pub(crate) struct SessionLife {
    _alive: watch::Sender<()>,
    _agent: OwnedSemaphorePermit,
    _gateway: SemaphorePermit<'static>,
}

/// What a session's exchanges watch: whether the session still lives.
#[derive(Debug, Clone)]
pub(crate) struct Lifeline(watch::Receiver<()>);

/// Why an exchange was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Cut {
    #[error("the session was closed")]
    Closed,
    #[error("no end within {EXCHANGE_LIMIT:?}")]
    TooLong,
}

impl Lifeline {
    /// Resolves when the session's [`SessionLife`] is dropped.
    async fn ended(&self) {
        let mut watched = self.0.clone();
        while watched.changed().await.is_ok() {}
    }

    /// `exchange`, unless the session ends or [`EXCHANGE_LIMIT`] passes first.
    pub(crate) async fn bound<T>(&self, exchange: impl Future<Output = T>) -> Result<T, Cut> {
        tokio::select! {
            done = tokio::time::timeout(EXCHANGE_LIMIT, exchange) => done.map_err(|_| Cut::TooLong),
            () = self.ended() => Err(Cut::Closed),
        }
    }

    /// `stream` until the session ends or [`EXCHANGE_LIMIT`] passes: then it ends (an event stream cut
    /// short is an answer that never came).
    pub(crate) fn bound_stream<S: Stream + Send + 'static>(
        &self,
        stream: S,
    ) -> impl Stream<Item = S::Item> + use<S> {
        let lifeline = self.clone();
        let end = async move {
            tokio::select! {
                () = tokio::time::sleep(EXCHANGE_LIMIT) => {}
                () = lifeline.ended() => {}
            }
        };
        stream.take_until(Box::pin(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dropping_a_session_s_life_ends_its_exchanges_and_frees_its_place() {
        let agent = AgentSessions::default();
        let (life, lifeline) = agent.admit().await.expect("a place");
        let (second, _) = agent.admit().await.expect("a second place");
        assert_eq!(agent.held(), 2);
        let refused = agent.admit().await.expect_err("a third is refused");
        assert_eq!(refused.code, ErrorCode::ConnectionError);

        let hanging = tokio::spawn({
            let lifeline = lifeline.clone();
            async move { lifeline.bound(std::future::pending::<()>()).await }
        });
        let stream = lifeline.bound_stream(futures::stream::pending::<u8>());
        drop(life);
        assert_eq!(hanging.await.expect("joined"), Err(Cut::Closed));
        assert_eq!(stream.collect::<Vec<_>>().await, Vec::<u8>::new());
        assert_eq!(agent.held(), 1);
        drop(second);
        assert_eq!(agent.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn an_exchange_nobody_ends_ends_after_the_limit() {
        let (_life, lifeline) = AgentSessions::default().admit().await.expect("a place");
        let started = tokio::time::Instant::now();
        assert_eq!(
            lifeline.bound(std::future::pending::<()>()).await,
            Err(Cut::TooLong)
        );
        assert_eq!(started.elapsed(), EXCHANGE_LIMIT);
        let events = lifeline.bound_stream(futures::stream::pending::<u8>());
        assert_eq!(events.collect::<Vec<_>>().await, Vec::<u8>::new());
    }
}
