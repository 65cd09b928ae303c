//! Every child of `league run` and `league serve` is watched: one that exits while the launcher is not
//! stopping (a crash, a kill -9, the OOM killer) is started again the way it was started the first time,
//! after a pause that doubles from 1 s to 30 s and goes back to 1 s once a start has stayed up for a
//! minute. Nobody else would notice: a dead player host looks to the referees like an outage of the
//! league's own services, so its matches are given back and retried forever, and a dead manager leaves
//! every other service waiting. A referee that exits because the operator revoked it (`REVOKED_EXIT`,
//! ADR 0082) stays down: it would only be refused again.
//!
//! Referees and player hosts come back on new ports (they register their contact endpoint again, under
//! the identities kept in their state directory); the manager and the gateways come back on the address
//! they announced, since the others (and external agents) were given it. Once the launcher stops
//! ([`Stopping`]), nothing is started again: a pause or a start under way is abandoned, and a service
//! that exits stays down.

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};
use league_runtime::revoked::REVOKED_EXIT;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::children::{self, Service};
use crate::orphans::ChildrenFile;
use crate::system::{READY_WITHIN, STOP_GRACE};

/// The first pause before a start again.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause: a service that cannot start is tried twice a minute.
const LONGEST_PAUSE: Duration = Duration::from_secs(30);
/// Up this long, a service is taken to be well again: its next death pauses [`FIRST_PAUSE`] again.
const STEADY: Duration = Duration::from_secs(60);

/// The pauses before a service is started again.
#[derive(Debug)]
pub struct Backoff {
    pauses: ExponentialBackoff,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            pauses: ExponentialBuilder::default()
                .with_min_delay(FIRST_PAUSE)
                .with_max_delay(LONGEST_PAUSE)
                .with_factor(2.0)
                .without_max_times()
                .build(),
        }
    }
}

impl Backoff {
    /// The pause before starting again a service that died after `up_for`: one that had stayed up
    /// [`STEADY`] starts the doubling over.
    pub fn after(&mut self, up_for: Duration) -> Duration {
        if up_for >= STEADY {
            *self = Backoff::default();
        }
        self.pauses.next().unwrap_or(LONGEST_PAUSE)
    }
}

/// Said once, by [`crate::system::Running::stop`], before it stops anything: from then on no service is
/// started again.
#[derive(Debug, Clone)]
pub struct Stopping(watch::Sender<bool>);

impl Default for Stopping {
    fn default() -> Self {
        Self(watch::Sender::new(false))
    }
}

impl Stopping {
    pub fn begin(&self) {
        self.0.send_replace(true);
    }

    fn begun(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once stopping has begun.
    async fn wait(&self) {
        let mut stopping = self.0.subscribe();
        // The sender lives in `self`: the wait ends only with the flag.
        let _ = stopping.wait_for(|begun| *begun).await;
    }
}

/// Where a service answers now: a restarted one replaces what its previous process announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current {
    pub pid: Option<u32>,
    pub url: String,
    pub admin_url: Option<String>,
}

/// A service process as the supervisor sees it: a child ([`Service`]), or a fake in the tests below.
pub trait Process: Send + 'static {
    fn current(&self) -> Current;
    fn exited(&mut self) -> impl Future<Output = std::io::Result<ExitStatus>> + Send;
    fn stop(self) -> impl Future<Output = ()> + Send;
}

impl Process for Service {
    fn current(&self) -> Current {
        Current {
            pid: self.pid(),
            url: self.url.clone(),
            admin_url: self.admin_url.clone(),
        }
    }

    fn exited(&mut self) -> impl Future<Output = std::io::Result<ExitStatus>> + Send {
        Service::exited(self)
    }

    fn stop(self) -> impl Future<Output = ()> + Send {
        Service::stop(self, STOP_GRACE)
    }
}

/// How a service is started, the first time and every time again.
#[derive(Debug, Clone)]
pub struct Recipe {
    pub name: String,
    pub subcommand: String,
    pub env: Vec<(String, String)>,
    /// The variable holding the address the service binds, for a service that must come back on the
    /// address it announced (the manager; the other services' ports are fixed before they start:
    /// crate::own_ports).
    pub same_address: Option<&'static str>,
    /// Where each process started is noted (`league serve`'s, so that the next one stops orphans).
    pub children: Option<ChildrenFile>,
}

impl Recipe {
    async fn start(&self) -> anyhow::Result<Service> {
        let service = children::start(&self.name, &self.subcommand, &self.env, READY_WITHIN).await?;
        if let Some(children) = &self.children {
            children.note(&service)?;
        }
        Ok(service)
    }
}

/// A service under watch.
#[derive(Debug)]
pub struct Supervised {
    name: String,
    current: watch::Receiver<Current>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Supervised {
    /// Starts `recipe` and watches it from then on. A failed first start is an error (nothing is
    /// watched): the launcher's start fails as it did before.
    pub async fn start(mut recipe: Recipe, stopping: &Stopping) -> anyhow::Result<Supervised> {
        let service = recipe.start().await?;
        if let Some(variable) = recipe.same_address {
            for (name, value) in &mut recipe.env {
                if name == variable {
                    *value = same_address(value, &service.url);
                }
            }
        }
        let name = recipe.name.clone();
        Ok(Self::watch(name, service, stopping, move || {
            let recipe = recipe.clone();
            async move { recipe.start().await }
        }))
    }

    /// Watches `process`, started again by `start` whenever it exits before stopping begins.
    pub fn watch<P, F, S>(name: String, process: P, stopping: &Stopping, start: S) -> Supervised
    where
        P: Process,
        F: Future<Output = anyhow::Result<P>> + Send + 'static,
        S: FnMut() -> F + Send + 'static,
    {
        let (current, watched) = watch::channel(process.current());
        let (stop, stop_asked) = oneshot::channel();
        let task = tokio::spawn(supervise(
            name.clone(),
            process,
            start,
            stopping.clone(),
            current,
            stop_asked,
        ));
        Supervised {
            name,
            current: watched,
            stop,
            task,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn current(&self) -> Current {
        self.current.borrow().clone()
    }

    pub fn url(&self) -> String {
        self.current.borrow().url.clone()
    }

    pub fn admin_url(&self) -> Option<String> {
        self.current.borrow().admin_url.clone()
    }

    /// The most memory the current process has held so far (VmHWM, in KiB; Linux only).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        children::peak_rss_kib(self.current.borrow().pid?)
    }

    /// Stops the service (SIGTERM, then SIGKILL after a grace), whichever process of it runs now, or
    /// abandons its start again, and waits for the watch to end. [`Stopping::begin`] first keeps the
    /// others from being started again meanwhile.
    pub async fn stop(self) {
        // Gone already if the watch ended: the service exited after stopping began.
        let _ = self.stop.send(());
        if let Err(error) = self.task.await {
            tracing::warn!(service = %self.name, %error, "the watch on the service failed");
        }
    }
}

/// The watch on one service: up until it exits or is asked to stop; an exit before stopping begins
/// is said on stderr and followed by a pause and a start again, until one succeeds.
async fn supervise<P, F, S>(
    name: String,
    mut process: P,
    mut start: S,
    stopping: Stopping,
    current: watch::Sender<Current>,
    mut stop_asked: oneshot::Receiver<()>,
) where
    P: Process,
    F: Future<Output = anyhow::Result<P>> + Send + 'static,
    S: FnMut() -> F + Send + 'static,
{
    let mut backoff = Backoff::default();
    let mut restarts = 0_u32;
    let mut up_since = Instant::now();
    loop {
        let exit = tokio::select! {
            exit = process.exited() => exit,
            _ = &mut stop_asked => return process.stop().await,
        };
        if stopping.begun() {
            return;
        }
        if matches!(&exit, Ok(status) if status.code() == Some(i32::from(REVOKED_EXIT))) {
            eprintln!("{name} was revoked by the operator: not started again (`league referees` lists it)");
            return;
        }
        let mut why = format!("exited ({})", exit_status(exit));
        let mut up_for = up_since.elapsed();
        // Until a start succeeds: a service that cannot start is tried again, ever more slowly.
        process = loop {
            restarts += 1;
            eprintln!("{name} {why}; starting it again (restart {restarts})");
            let pause = backoff.after(up_for);
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = stopping.wait() => return,
                _ = &mut stop_asked => return,
            }
            // A start under way is dropped when stopping begins: its process is killed (kill_on_drop).
            let started = tokio::select! {
                started = start() => started,
                () = stopping.wait() => return,
                _ = &mut stop_asked => return,
            };
            match started {
                Ok(process) => break process,
                Err(error) => {
                    why = format!("did not start again ({error:#})");
                    up_for = Duration::ZERO;
                }
            }
        };
        up_since = Instant::now();
        current.send_replace(process.current());
    }
}

/// How a process ended, in words: `signal 9: SIGKILL`, `code 1`.
pub fn exit_status(exit: std::io::Result<ExitStatus>) -> String {
    match exit {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("code {code}"),
            (None, Some(signal)) => match nix::sys::signal::Signal::try_from(signal) {
                Ok(known) => format!("signal {signal}: {}", known.as_str()),
                Err(_) => format!("signal {signal}"),
            },
            (None, None) => status.to_string(),
        },
        Err(error) => format!("its exit could not be read: {error}"),
    }
}

/// The bind address a service is started again with: the one it was given, its port `0` replaced by the
/// port it announced in `url` (the host stays as given: `0.0.0.0` is not narrowed to the loopback the
/// announcement names).
pub fn same_address(given: &str, url: &str) -> String {
    let announced = url.rsplit_once(':').map(|(_, port)| port.trim_end_matches('/'));
    match (given.rsplit_once(':'), announced) {
        (Some((host, "0")), Some(port)) => format!("{host}:{port}"),
        _ => given.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn pauses_double_from_one_second_to_thirty_and_start_over_after_a_minute_up() {
        let mut backoff = Backoff::default();
        let pauses: Vec<u64> = (0..7)
            .map(|_| backoff.after(Duration::from_secs(5)).as_secs())
            .collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(backoff.after(Duration::from_secs(59)), LONGEST_PAUSE);
        assert_eq!(backoff.after(STEADY), FIRST_PAUSE);
        assert_eq!(backoff.after(Duration::ZERO), Duration::from_secs(2));
    }

    #[test]
    fn an_exit_is_said_by_its_signal_or_its_code() {
        assert_eq!(exit_status(Ok(ExitStatus::from_raw(9))), "signal 9: SIGKILL");
        assert_eq!(exit_status(Ok(ExitStatus::from_raw(3 << 8))), "code 3");
        assert_eq!(exit_status(Ok(ExitStatus::from_raw(0))), "code 0");
    }

    #[test]
    fn the_address_of_a_restart_is_the_announced_port_on_the_given_host() {
        assert_eq!(
            same_address("127.0.0.1:0", "http://127.0.0.1:41234"),
            "127.0.0.1:41234"
        );
        assert_eq!(
            same_address("0.0.0.0:0", "http://127.0.0.1:41234"),
            "0.0.0.0:41234"
        );
        assert_eq!(
            same_address("0.0.0.0:8000", "http://127.0.0.1:8000"),
            "0.0.0.0:8000"
        );
        assert_eq!(same_address("[::1]:0", "http://[::1]:5000"), "[::1]:5000");
    }

    /// A process that exits when its test says so (`None`: it was stopped).
    struct Fake {
        number: u32,
        exit: Option<oneshot::Receiver<ExitStatus>>,
        stopped: Arc<Mutex<Vec<u32>>>,
    }

    impl Process for Fake {
        fn current(&self) -> Current {
            Current {
                pid: Some(self.number),
                url: format!("http://127.0.0.1:{}", self.number),
                admin_url: None,
            }
        }

        async fn exited(&mut self) -> std::io::Result<ExitStatus> {
            match self.exit.as_mut() {
                Some(exit) => match exit.await {
                    Ok(status) => Ok(status),
                    Err(_) => std::future::pending().await,
                },
                None => std::future::pending().await,
            }
        }

        async fn stop(self) {
            self.stopped.lock().expect("the list").push(self.number);
        }
    }

    /// Starts fakes, noting when, and hands the test the way to kill each.
    struct Starts {
        at: Arc<Mutex<Vec<Instant>>>,
        kills: tokio::sync::mpsc::UnboundedReceiver<oneshot::Sender<ExitStatus>>,
        stopped: Arc<Mutex<Vec<u32>>>,
    }

    fn supervised(stopping: &Stopping) -> (Supervised, Starts, oneshot::Sender<ExitStatus>) {
        let at = Arc::new(Mutex::new(vec![]));
        let stopped = Arc::new(Mutex::new(vec![]));
        let (kill_tx, kills) = tokio::sync::mpsc::unbounded_channel();
        let (first_kill, first_exit) = oneshot::channel();
        let first = Fake {
            number: 0,
            exit: Some(first_exit),
            stopped: stopped.clone(),
        };
        let (noted, fakes_stopped) = (at.clone(), stopped.clone());
        let start = move || {
            let (kill, exit) = oneshot::channel();
            let mut at = noted.lock().expect("the list");
            at.push(Instant::now());
            let fake = Fake {
                number: u32::try_from(at.len()).expect("a few"),
                exit: Some(exit),
                stopped: fakes_stopped.clone(),
            };
            let _ = kill_tx.send(kill);
            async move { Ok(fake) }
        };
        let service = Supervised::watch("players".to_owned(), first, stopping, start);
        (service, Starts { at, kills, stopped }, first_kill)
    }

    const SIGKILL: i32 = 9;

    #[tokio::test(start_paused = true)]
    async fn a_service_that_keeps_dying_is_started_again_after_growing_pauses() {
        let stopping = Stopping::default();
        let (service, mut starts, first) = supervised(&stopping);
        let mut died_at = vec![Instant::now()];
        first
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        for _ in 0..6 {
            let kill = starts.kills.recv().await.expect("started again");
            died_at.push(Instant::now());
            kill.send(ExitStatus::from_raw(SIGKILL)).expect("the watch waits");
        }
        let pauses: Vec<u64> = starts
            .at
            .lock()
            .expect("the list")
            .iter()
            .zip(&died_at)
            .map(|(started, died)| (*started - *died).as_secs())
            .collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 30]);
        stopping.begin();
        service.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_restart_replaces_the_address_and_a_minute_up_starts_the_pauses_over() {
        let stopping = Stopping::default();
        let (service, mut starts, first) = supervised(&stopping);
        first
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        let second = starts.kills.recv().await.expect("started again");
        let mut current = service.current.clone();
        let replaced = current.wait_for(|now| now.pid == Some(1)).await;
        assert_eq!(replaced.expect("the watch runs").url, "http://127.0.0.1:1");
        assert_eq!(service.url(), "http://127.0.0.1:1");
        second
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        let third = starts.kills.recv().await.expect("started again");
        tokio::time::sleep(STEADY).await;
        let died = Instant::now();
        third
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        starts.kills.recv().await.expect("started again");
        let last = *starts.at.lock().expect("the list").last().expect("starts");
        assert_eq!((last - died).as_secs(), FIRST_PAUSE.as_secs());
        stopping.begin();
        service.stop().await;
        assert_eq!(
            *starts.stopped.lock().expect("the list"),
            [3],
            "the current process is stopped"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn once_stopping_has_begun_a_service_that_exits_stays_down() {
        let stopping = Stopping::default();
        let (service, starts, first) = supervised(&stopping);
        stopping.begin();
        first
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        tokio::time::sleep(LONGEST_PAUSE * 4).await;
        service.stop().await;
        assert!(
            starts.at.lock().expect("the list").is_empty(),
            "never started again"
        );
        assert!(
            starts.stopped.lock().expect("the list").is_empty(),
            "nothing left to stop"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn stopping_during_the_pause_abandons_the_start_again() {
        let stopping = Stopping::default();
        let (service, starts, first) = supervised(&stopping);
        first
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        tokio::time::sleep(FIRST_PAUSE / 2).await;
        stopping.begin();
        tokio::time::sleep(LONGEST_PAUSE * 4).await;
        service.stop().await;
        assert!(
            starts.at.lock().expect("the list").is_empty(),
            "never started again"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_service_stopped_during_its_pause_is_not_started_again() {
        let stopping = Stopping::default();
        let (service, starts, first) = supervised(&stopping);
        first
            .send(ExitStatus::from_raw(SIGKILL))
            .expect("the watch waits");
        tokio::time::sleep(FIRST_PAUSE / 2).await;
        service.stop().await;
        assert!(
            starts.at.lock().expect("the list").is_empty(),
            "never started again"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_revoked_service_is_not_started_again() {
        let stopping = Stopping::default();
        let (service, starts, first) = supervised(&stopping);
        first
            .send(ExitStatus::from_raw(i32::from(REVOKED_EXIT) << 8))
            .expect("the watch waits");
        tokio::time::sleep(LONGEST_PAUSE * 4).await;
        assert!(
            starts.at.lock().expect("the list").is_empty(),
            "never started again"
        );
        service.stop().await;
    }
}
