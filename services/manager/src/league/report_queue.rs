//! Results recorded together (group commit). A round's matches end within a few milliseconds of each
//! other, so their reports arrive together; recorded one by one, each would pay its own transaction,
//! its own fsync and its own completion check. Here every report goes through one queue, and one
//! writer records whatever has gathered while its previous batch was committing, all in one
//! transaction ([`report::record`]). Under no load a batch is a single report, recorded at once: the
//! writer never waits for a batch to fill.
//!
//! The writer records a batch in a task of its own, so a batch's transaction runs to its end even if
//! the calls that queued it are gone (see `run_to_end` in crate::service for why that matters), and a
//! panic fails that batch's reports (the referees repeat them) instead of the queue. The writer, not the
//! callers, wakes the waiting claims and the event delivery when a batch completed a round, so a caller
//! that went away cannot leave the next round waiting for a claim's timeout.

use std::sync::Arc;

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};

use crate::error::ManagerResult;
use crate::league::kept_table::KeptTables;
use crate::league::report::{self, Report, Reported};
use crate::metrics;
use crate::wakeups::Wakeups;

/// The most reports one transaction records.
const MAX_BATCH: usize = 128;
/// Reports waiting beyond this make their callers wait to queue (back-pressure on the referees).
const QUEUE_CAPACITY: usize = 1024;

#[derive(Debug, Clone)]
pub struct ReportQueue {
    sender: mpsc::Sender<Queued>,
}

#[derive(Debug)]
struct Queued {
    report: Report,
    reply: oneshot::Sender<ManagerResult<Reported>>,
}

impl ReportQueue {
    /// Starts the writer, which stops once every handle to the queue is dropped.
    pub fn start(pool: PgPool, wakeups: Arc<Wakeups>) -> Self {
        let (sender, receiver) = mpsc::channel(QUEUE_CAPACITY);
        tokio::spawn(write(pool, KeptTables::default(), wakeups, receiver));
        Self { sender }
    }

    /// Records `report` with whatever reports arrive with it; answers once its batch is committed and
    /// the rounds it finished are completed.
    pub async fn submit(&self, report: Report) -> ManagerResult<Reported> {
        let (reply, answer) = oneshot::channel();
        self.sender
            .send(Queued { report, reply })
            .await
            .map_err(|_| anyhow::anyhow!("the result writer has stopped"))?;
        answer
            .await
            .map_err(|_| anyhow::anyhow!("the result writer stopped before answering"))?
    }
}

async fn write(pool: PgPool, tables: KeptTables, wakeups: Arc<Wakeups>, mut queue: mpsc::Receiver<Queued>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (reports, replies): (Vec<Report>, Vec<_>) = batch
            .drain(..)
            .map(|queued| (queued.report, queued.reply))
            .unzip();
        let (pool, tables) = (pool.clone(), tables.clone());
        let size = reports.len();
        metrics::RESULT_BATCH_SIZE.observe(size as f64);
        let waiting = wakeups.waiting_claims.clone();
        let recording = tokio::spawn(async move { report::record(&pool, &tables, &waiting, &reports).await });
        match recording.await {
            Ok(outcomes) => {
                if outcomes
                    .iter()
                    .any(|outcome| outcome.as_ref().is_ok_and(|reported| reported.round_completed))
                {
                    wakeups.matches_ready.notify_waiters();
                    wakeups.events_pending.notify_one();
                }
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    // The caller may have gone; its report is recorded all the same.
                    let _ = reply.send(outcome);
                }
            }
            Err(error) => {
                tracing::error!(%error, size, "recording a batch of results failed");
                for reply in replies {
                    let _ = reply.send(Err(anyhow::anyhow!("recording the result failed").into()));
                }
            }
        }
    }
}
