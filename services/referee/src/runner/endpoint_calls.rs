//! The match calls a referee has for one player endpoint, sent together (ADR 0058).
//!
//! A referee runs many matches at once, and most of their players live on the same player host (or
//! behind the same gateway), so at any moment it has many calls for one endpoint. Each unary call was a
//! gRPC exchange of its own; here every caller queues its call, and one task per endpoint takes
//! whatever has gathered while the tasks that were ready ran (no timer: a call waits for nothing but
//! the task's turn), up to [`MAX_BATCH_CALLS`] calls and [`MAX_BATCH_BYTES`], and sends it as one `MatchCalls`
//! exchange, on a task of its own so that the next batch need not wait for this one's answers. The
//! answers are streamed back as each is ready and handed to their callers.
//!
//! A caller that stops waiting (the runner's timeout dropped its call) takes nothing; once no caller of
//! an exchange waits any more, the exchange is dropped — the response stream reset, so the player host
//! drops the calls still running, as it does a unary call its referee gave up on. A failure of the
//! exchange itself (the endpoint refused the connection, or it broke) fails each call still waiting with
//! the status a unary call would have had, and an exchange that ends without answering a call fails it
//! (INTERNAL): the runner's miss and outage rules (`miss.rs`, `outage.rs`) read those statuses as
//! before.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

use league_proto::v2::match_call::Request as Call;
use league_proto::v2::match_calls_response::Answer;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::{MatchCall, MatchCallsRequest, MatchCallsResponse};
use league_runtime::grpc::{GrpcChannel, match_call, status_of};
use prost::Message;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;

/// The most calls one exchange carries (a player host takes up to 1,024).
pub const MAX_BATCH_CALLS: usize = 256;
/// The most bytes of calls one exchange carries (unless one call alone is more): well under gRPC's
/// 4 MB message limit.
pub const MAX_BATCH_BYTES: usize = 1 << 20;

/// A call's answer: the player's, or the status its unary call would have failed with.
type Answered = Result<Answer, Status>;

/// One queued call and where its answer goes.
struct Queued {
    call: MatchCall,
    answer: oneshot::Sender<Answered>,
}

/// The calls to one player endpoint. Cheap to clone; the task that sends them ends when the last clone
/// is dropped.
#[derive(Debug, Clone)]
pub struct EndpointCalls {
    queue: mpsc::UnboundedSender<Queued>,
}

impl EndpointCalls {
    /// Calls to the endpoint `channel` reaches. Must be called inside a tokio runtime.
    pub fn new(channel: GrpcChannel) -> EndpointCalls {
        // Unbounded in type only: a running match makes one call a seat at a time, a referee runs at
        // most its capacity of matches, and this task takes what is queued as soon as it runs.
        let (queue, queued) = mpsc::unbounded_channel();
        tokio::spawn(send_batches(PlayerServiceClient::new(channel), queued));
        EndpointCalls { queue }
    }

    /// Makes `call` in the current span (its trace context goes with it) and waits for its answer.
    /// Dropping the future withdraws the call.
    pub async fn call(&self, call: Call) -> Answered {
        let (answer, answered) = oneshot::channel();
        self.queue
            .send(Queued {
                call: match_call(call),
                answer,
            })
            .map_err(|_| Status::unavailable("the referee's calls to this player endpoint have stopped"))?;
        answered
            .await
            .map_err(|_| Status::internal("the exchange carrying this call ended without its answer"))?
    }
}

/// Takes what has gathered in `queued`, batch after batch, and starts an exchange for each.
async fn send_batches(client: PlayerServiceClient<GrpcChannel>, mut queued: mpsc::UnboundedReceiver<Queued>) {
    // A call that would have made the last batch too large starts the next one.
    let mut carried = None;
    loop {
        let first = match carried.take() {
            Some(first) => first,
            None => {
                let Some(first) = queued.recv().await else {
                    return;
                };
                // Woken by the first call, this task would run next, before the other matches that
                // have calls to make: it lets every task that is ready run first (tokio wakes a task
                // that yields only once it has run out of ready ones), and takes what they queued.
                tokio::task::yield_now().await;
                first
            }
        };
        let mut bytes = first.call.encoded_len();
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH_CALLS {
            let Ok(next) = queued.try_recv() else {
                break;
            };
            let size = next.call.encoded_len();
            if bytes + size > MAX_BATCH_BYTES {
                carried = Some(next);
                break;
            }
            bytes += size;
            batch.push(next);
        }
        tokio::spawn(exchange(client.clone(), batch));
    }
}

/// One exchange: sends `batch`, hands each answer to its caller, and stops (dropping the exchange)
/// once nobody waits for an answer.
async fn exchange(mut client: PlayerServiceClient<GrpcChannel>, batch: Vec<Queued>) {
    // A caller gone before its call was sent: the call is not sent at all.
    let (calls, mut waiting): (Vec<MatchCall>, Vec<Option<oneshot::Sender<Answered>>>) = batch
        .into_iter()
        .filter(|queued| !queued.answer.is_closed())
        .map(|queued| (queued.call, Some(queued.answer)))
        .unzip();
    if calls.is_empty() {
        return;
    }
    let opening = client.match_calls(MatchCallsRequest { calls });
    let Some(opened) = unless_abandoned(&mut waiting, opening).await else {
        return;
    };
    let mut answers = match opened {
        Ok(answers) => answers.into_inner(),
        Err(status) => return fail_all(&mut waiting, &status),
    };
    loop {
        let Some(next) = unless_abandoned(&mut waiting, answers.message()).await else {
            return;
        };
        match next {
            Ok(Some(answer)) => deliver(&mut waiting, answer),
            Ok(None) => {
                let missing =
                    Status::internal("the player endpoint ended the exchange without answering this call");
                return fail_all(&mut waiting, &missing);
            }
            Err(status) => return fail_all(&mut waiting, &status),
        }
    }
}

/// `future`'s output, or `None` as soon as no caller in `waiting` waits any more.
async fn unless_abandoned<F: Future>(
    waiting: &mut [Option<oneshot::Sender<Answered>>],
    future: F,
) -> Option<F::Output> {
    let mut future = pin!(future);
    poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        // Stops at the first caller still waiting, and is woken when that one stops: only then can
        // every caller have stopped.
        if waiting
            .iter_mut()
            .flatten()
            .all(|waiter| waiter.poll_closed(cx).is_ready())
        {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

/// Hands `answer` to the caller of the call it answers.
fn deliver(waiting: &mut [Option<oneshot::Sender<Answered>>], answer: MatchCallsResponse) {
    let index = answer.index;
    let Some(waiter) = usize::try_from(index)
        .ok()
        .and_then(|index| waiting.get_mut(index))
        .and_then(Option::take)
    else {
        tracing::debug!(index, "an answer to no call still waiting for one");
        return;
    };
    let answered = match answer.answer {
        Some(Answer::Failure(failure)) => Err(status_of(failure)),
        Some(answer) => Ok(answer),
        None => Err(Status::internal(
            "the player endpoint answered a call with nothing",
        )),
    };
    // A caller that has stopped waiting takes nothing.
    let _ = waiter.send(answered);
}

/// Fails every call still waiting with `status`.
fn fail_all(waiting: &mut [Option<oneshot::Sender<Answered>>], status: &Status) {
    for waiter in waiting.iter_mut().filter_map(Option::take) {
        let _ = waiter.send(Err(status.clone()));
    }
}
