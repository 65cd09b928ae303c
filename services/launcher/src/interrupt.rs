//! Ctrl-C and SIGTERM during `league run` / `league serve`: listened for before anything starts, so the
//! launcher (not the default action) decides what happens — stop every service in order, wait for them,
//! and say where the league so far is.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signals that end a run early.
#[derive(Debug)]
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
}

impl Signals {
    /// From now on SIGINT and SIGTERM are this process's to handle.
    pub fn listen() -> anyhow::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Waits for the next SIGINT or SIGTERM, and says which.
    pub async fn received(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
}

/// The error of a run that a signal ended: every service has stopped; the database stays.
#[derive(Debug)]
pub struct Interrupted {
    pub signal: StopSignal,
    /// The run's database, kept.
    pub database: String,
}

impl Interrupted {
    /// The shell's convention: 128 + the signal's number.
    pub fn exit_code(&self) -> u8 {
        match self.signal {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
        }
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted; the league so far is in database {} (kept; `league clean {}` drops it)",
            self.database, self.database
        )
    }
}

impl std::error::Error for Interrupted {}
