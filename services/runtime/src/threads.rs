//! The threads each `league` process runs its async work on (`LEAGUE_WORKER_THREADS`). A league's
//! services mostly wait on one another and on Postgres, and where they run side by side (`league run`,
//! compose) they share the machine's cores: with a worker thread per core in every process, each
//! wake-up was a chance for another process's thread to be switched in, and measured on 2 cores the
//! league's processes spent about a quarter more CPU for the same league (docs/benchmarks.md). So one
//! worker thread is the default; a service with cores of its own (a large league's manager on its own
//! node) is given more with `LEAGUE_WORKER_THREADS`, and `0` means one per core. Blocking work still
//! goes to tokio's blocking pool either way.

use serde::Deserialize;

/// The default number of worker threads.
pub const DEFAULT_WORKER_THREADS: usize = 1;
/// The most a process is given: more is a typo, not a machine.
pub const MAX_WORKER_THREADS: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default)]
struct ThreadsConfig {
    worker_threads: usize,
}

impl Default for ThreadsConfig {
    fn default() -> Self {
        Self {
            worker_threads: DEFAULT_WORKER_THREADS,
        }
    }
}

/// The worker threads configured: `LEAGUE_WORKER_THREADS`, one per core for `0`.
pub fn worker_threads() -> anyhow::Result<usize> {
    let config: ThreadsConfig = crate::config::load()?;
    match config.worker_threads {
        0 => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
        threads if threads > MAX_WORKER_THREADS => Err(anyhow::anyhow!(
            "invalid configuration: LEAGUE_WORKER_THREADS={threads} is more than {MAX_WORKER_THREADS}"
        )),
        threads => Ok(threads),
    }
}

/// The process's async runtime, with [`worker_threads`] workers.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    let threads = worker_threads()?;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|error| {
            anyhow::anyhow!("cannot start the async runtime ({threads} worker threads): {error}")
        })
}

#[cfg(test)]
#[allow(clippy::result_large_err)] // figment's Jail API fixes the error type.
mod tests {
    use super::*;

    #[test]
    fn one_worker_thread_unless_told_otherwise() {
        figment::Jail::expect_with(|jail| {
            assert_eq!(worker_threads().map_err(|e| e.to_string())?, 1);
            jail.set_env("LEAGUE_WORKER_THREADS", "3");
            assert_eq!(worker_threads().map_err(|e| e.to_string())?, 3);
            jail.set_env("LEAGUE_WORKER_THREADS", "0");
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            assert_eq!(worker_threads().map_err(|e| e.to_string())?, cores);
            for wrong in ["many", "-1", "100000"] {
                jail.set_env("LEAGUE_WORKER_THREADS", wrong);
                assert!(worker_threads().is_err(), "{wrong} is refused, not ignored");
            }
            Ok(())
        });
    }
}
