//! Graceful shutdown: one trigger (SIGTERM, Ctrl-C, or a test) that every task of a service can wait on.

use tokio::sync::watch;

/// The owner's side: trigger once, and every [`ShutdownSignal`] wakes.
#[derive(Debug, Clone)]
pub struct Shutdown {
    sender: watch::Sender<bool>,
}

/// A task's side: `wait().await` returns once shutdown has begun (at once if it already has).
#[derive(Debug, Clone)]
pub struct ShutdownSignal {
    receiver: watch::Receiver<bool>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    pub fn new() -> Self {
        let (sender, _) = watch::channel(false);
        Self { sender }
    }

    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    pub fn signal(&self) -> ShutdownSignal {
        ShutdownSignal {
            receiver: self.sender.subscribe(),
        }
    }

    /// Triggers this shutdown on SIGTERM or Ctrl-C (runs until one arrives).
    pub async fn trigger_on_os_signal(self) {
        wait_for_os_signal().await;
        tracing::info!("shutdown requested");
        self.trigger();
    }
}

impl ShutdownSignal {
    pub async fn wait(mut self) {
        // An error means the owner is gone, which also means: stop.
        let _ = self.receiver.wait_for(|stopping| *stopping).await;
    }

    pub fn is_triggered(&self) -> bool {
        *self.receiver.borrow()
    }
}

async fn wait_for_os_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_signal_wakes_once_triggered() {
        let shutdown = Shutdown::new();
        let early = shutdown.signal();
        let waiter = tokio::spawn(early.wait());
        assert!(!shutdown.signal().is_triggered());
        shutdown.trigger();
        waiter.await.expect("waiter ends");
        // A signal taken after the trigger returns at once.
        shutdown.signal().wait().await;
    }
}
