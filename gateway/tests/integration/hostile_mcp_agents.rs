//! Hostile MCP servers (issue 53): agents that refuse plain JSON-RPC with 406, so the gateway opens an
//! MCP session, and then never answer `initialize`, or answer it with an event stream that never ends.
//! Hundreds of their registrations, from several addresses, leave the gateway's descriptors and memory
//! where they were once the greeting's deadline has passed, while a well-behaved MCP agent is served.

use crate::mcp_player::{McpPlayer, invitation, register};
use crate::support;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_testkit::observe::observe;
use league_v2::compliance::Mode;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};

/// How a hostile agent treats an MCP request (one accepting `text/event-stream`).
#[derive(Debug, Clone, Copy)]
enum Hostility {
    /// Never answers.
    Silent,
    /// Answers with an event stream that never ends and carries no message.
    EndlessStream,
}

/// A hostile agent at every path of one port; counts the connections it holds open and the
/// `initialize` requests it was sent.
struct HostileAgent {
    address: SocketAddr,
    open: Arc<AtomicUsize>,
    initializes: Arc<AtomicUsize>,
}

impl HostileAgent {
    async fn serve(hostility: Hostility) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let open = Arc::new(AtomicUsize::new(0));
        let initializes = Arc::new(AtomicUsize::new(0));
        let (counted, initialized) = (open.clone(), initializes.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (open, initializes) = (counted.clone(), initialized.clone());
                open.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    hold(stream, hostility, &initializes).await;
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Self {
            address,
            open,
            initializes,
        }
    }

    fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    fn initializes(&self) -> usize {
        self.initializes.load(Ordering::SeqCst)
    }
}

/// Serves one connection until the gateway closes it: 406 to plain JSON-RPC, `hostility` to MCP; counts
/// the `initialize` requests on `initializes`.
async fn hold(mut stream: TcpStream, hostility: Hostility, initializes: &AtomicUsize) {
    loop {
        let Some((head, body)) = read_request(&mut stream).await else {
            return;
        };
        let mcp = head.to_ascii_lowercase().contains("text/event-stream");
        let initialize =
            serde_json::from_slice::<Value>(&body).is_ok_and(|request| request["method"] == "initialize");
        if mcp && initialize {
            initializes.fetch_add(1, Ordering::SeqCst);
        }
        if !mcp {
            let refusal = "HTTP/1.1 406 Not Acceptable\r\ncontent-length: 0\r\n\r\n";
            if stream.write_all(refusal.as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        if let Hostility::EndlessStream = hostility {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                        transfer-encoding: chunked\r\nmcp-session-id: s1\r\n\r\n";
            let comment = ": still here\n\n";
            let chunk = format!("{:x}\r\n{comment}\r\n", comment.len());
            if stream
                .write_all(format!("{head}{chunk}").as_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
        // Nothing more, ever: hold the connection until the gateway lets it go.
        let mut rest = [0u8; 1024];
        while matches!(stream.read(&mut rest).await, Ok(read) if read > 0) {}
        return;
    }
}

/// Reads one request (head and a `content-length` body); its head and body, or `None` once the peer
/// closed.
async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).into_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0usize);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.ok()?;
    Some((head, body))
}

/// Registers `name` at `endpoint` from the loopback address `from`; the answer.
async fn register_from(gateway: SocketAddr, from: Ipv4Addr, name: &str, endpoint: &str) -> Value {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::new(IpAddr::V4(from), 0))
        .expect("bind a loopback address");
    let stream = socket.connect(gateway).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    let body = json!({"jsonrpc": "2.0", "method": "register_player", "id": 1,
        "params": player_registration(name, endpoint)});
    let request = http::Request::post("/mcp")
        .header(http::header::HOST, gateway.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let response = sender.send_request(request).await.expect("answered");
    let body = response.into_body().collect().await.expect("body").to_bytes();
    serde_json::from_slice(&body).expect("JSON")
}

/// What this process holds: its open descriptors, its heap (every allocation counted by the test
/// binary's allocator, `hostile_agents.rs`) and its resident size, both in kB.
#[derive(Clone, Copy)]
struct Held {
    descriptors: usize,
    heap: u64,
    resident: u64,
}

impl Held {
    fn now() -> Self {
        let descriptors = std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count();
        let stats = stats_alloc::INSTRUMENTED_SYSTEM.stats();
        let heap = (stats.bytes_allocated.saturating_sub(stats.bytes_deallocated) / 1024) as u64;
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        let resident = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        Self {
            descriptors,
            heap,
            resident,
        }
    }
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            descriptors,
            heap,
            resident,
        } = self;
        write!(
            f,
            "descriptors {descriptors}, heap {heap} kB, resident {resident} kB"
        )
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// 200 registrations at each of `agents`, from 8 addresses of their own (50 each: within the 60 a minute
/// one address may make), all at once, each at a path of its own; every one accepted.
async fn flood(gateway: SocketAddr, agents: [&HostileAgent; 2], round: u16) {
    let mut registrations = tokio::task::JoinSet::new();
    for n in 0..400u16 {
        let agent = agents[usize::from(n % 2)];
        let endpoint = format!("http://{}/{round}/{n}/mcp", agent.address);
        let from = Ipv4Addr::new(127, 0, 0, (1 + round * 8 + n % 8) as u8);
        registrations.spawn(async move {
            register_from(gateway, from, &format!("hostile-{round}-{n}"), &endpoint).await
        });
    }
    while let Some(registered) = registrations.join_next().await {
        let answer = registered.expect("a registration");
        assert!(answer["result"]["player_id"].is_string(), "{answer}");
    }
}

/// The floods before the measured one, each only waited out.
const WARMING_FLOODS: u16 = 4;

/// How many times the most a warming flood left on the heap the measured one may leave.
const HEAP_GROWTH_ALLOWED: u64 = 2;

fn within_a_tenth(now: u64, before: u64) -> bool {
    now * 10 <= before * 11
}

/// Floods the gateway (`flood`) while the good agent is invited, one invitation after another until
/// the flood's registrations are all answered; each invitation's outcome.
async fn flood_inviting<J, F>(
    gateway: SocketAddr,
    agents: [&HostileAgent; 2],
    round: u16,
    join: J,
) -> Vec<Result<bool, tonic::Status>>
where
    J: Fn(Duration) -> F + Send + 'static,
    F: Future<Output = Result<bool, tonic::Status>> + Send,
{
    let flooding = Arc::new(AtomicBool::new(true));
    let invited = tokio::spawn({
        let flooding = flooding.clone();
        async move {
            let mut joins = Vec::new();
            while flooding.load(Ordering::SeqCst) {
                joins.push(join(Duration::from_secs(5)).await);
            }
            joins
        }
    });
    flood(gateway, agents, round).await;
    flooding.store(false, Ordering::SeqCst);
    invited.await.expect("the invitations")
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_mcp_servers_leave_nothing_held_and_a_good_one_is_served() {
    // Room for the 2,001 players: the good one and five floods of 400.
    let manager = spawn_manager_with(|config| config.registration.max_players = 2100).await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let good = McpPlayer::default();
    let good_id = register(&gateway, &good.serve().await).await;
    let join = {
        let players = gateway.players();
        let good_id = good_id.clone();
        move |within| {
            let mut players = players.clone();
            let invitation = invitation(&good_id, within);
            async move {
                players
                    .invite_to_match(invitation)
                    .await
                    .map(|joined| joined.into_inner().accept)
            }
        }
    };
    assert!(join(Duration::from_secs(5)).await.expect("joined"));
    let silent = HostileAgent::serve(Hostility::Silent).await;
    let endless = HostileAgent::serve(Hostility::EndlessStream).await;
    let released = async || (silent.open() == 0 && endless.open() == 0).then_some(());

    // Four first floods, each the measured one's twin, bring the process to its working size (pools,
    // caches) and show what a flood leaves by right: the 400 players it registered and the good agent's
    // record of its invitations (this process holds the manager and that agent too), about 1 MB of heap
    // a flood. The measured flood may leave at most twice the most a warming flood left, and no more
    // descriptors than a tenth over the most they left.
    // Memory is the heap this process holds, every allocation counted; its resident size, printed, is no
    // measure of what is held: it counts what the allocator has yet to give back. With glibc's malloc it
    // only grew (133.5 MB after the fourth warming flood, 148.1 MB after the measured one, which failed a
    // sound run in CI) and with mimalloc it varied by a tenth either way after the same flood, so that a
    // 20 MB leak added on purpose passed unseen against the most a warming flood left, while the heap
    // held 3 to 8 MB.
    // Four floods leave a margin for a loaded machine, where a flood's greetings time out in other
    // proportions (each warming flood's figures are printed). The deadline under test is the measured
    // flood's; a warming flood is only waited out (on a 2-core machine loaded by other builds, the first
    // one's 400 greetings once took longer than 12 s to end).
    let mut working: Option<Held> = None;
    let (mut descriptors, mut left_by_a_flood) = (0, 0);
    for warming in 0..WARMING_FLOODS {
        let joins = flood_inviting(gateway.http, [&silent, &endless], warming, join.clone()).await;
        let flooded = tokio::time::Instant::now();
        observe(
            "a warming flood's connections closed",
            Duration::from_secs(60),
            released,
        )
        .await;
        let held = Held::now();
        eprintln!(
            "after warming flood {warming} ({} invitations): released {:?} after it, {held}",
            joins.len(),
            flooded.elapsed()
        );
        descriptors = descriptors.max(held.descriptors);
        // The first flood's growth includes what is made once (pools, caches): it is not counted.
        if let Some(before) = working {
            left_by_a_flood = left_by_a_flood.max(held.heap.saturating_sub(before.heap));
        }
        working = Some(held);
    }
    let working = working.expect("a warming flood");
    // A heap of nothing would pass every bound: it is counted only where the test binary's allocator is
    // stats_alloc's (hostile_agents.rs).
    assert!(working.heap > 0, "the heap is not counted: {working}");
    let initialized = silent.initializes() + endless.initializes();

    // The good agent is invited throughout the measured flood, and joins every time.
    let joins = flood_inviting(gateway.http, [&silent, &endless], WARMING_FLOODS, join.clone()).await;
    let flooded = tokio::time::Instant::now();
    assert!(!joins.is_empty());
    assert!(joins.iter().all(|joined| matches!(joined, Ok(true))), "{joins:?}");

    // Within the greeting's deadline (2 s) plus 10 s of the flood's end, every connection is let go and
    // the process is back where it was: the sessions' own connections when their exchanges end, and the
    // connections the plain calls left idle in the outbound pool once its idle timeout has passed
    // (4 to 8 s: bridge::client::IDLE_CONNECTION, ADR 0090).
    let allowed = working.heap + HEAP_GROWTH_ALLOWED * left_by_a_flood;
    // What was last seen, for the failure's message.
    let last = std::sync::Mutex::new(None);
    let within = Duration::from_secs(12).saturating_sub(flooded.elapsed());
    let settled = tokio::time::timeout(
        within,
        // The timeout bounds the wait; observe's own bound is only past it.
        observe(
            "the hostile agents' connections closed, descriptors and heap back",
            within + Duration::from_secs(60),
            async || {
                let held = Held::now();
                let open = (silent.open(), endless.open());
                *last.lock().expect("the last look") = Some((open, held));
                (released().await.is_some()
                    && within_a_tenth(held.descriptors as u64, descriptors as u64)
                    && held.heap <= allowed)
                    .then_some(held)
            },
        ),
    )
    .await;
    let Ok(after) = settled else {
        let last = last.lock().expect("the last look").take();
        panic!(
            "not back within {within:?} of the flood's end; last seen: connections held by the silent \
             and the endless agent, and what the process held {last:?}; allowed: descriptors \
             {descriptors} and a tenth, heap {allowed} kB ({working} after the last warming flood; one \
             left at most {left_by_a_flood} kB)"
        );
    };
    let initializes = silent.initializes() + endless.initializes() - initialized;
    eprintln!(
        "{working} -> {after} ({} invitations), heap allowed {allowed} kB, {initializes} initialize \
         requests, released {:?} after the flood",
        joins.len(),
        flooded.elapsed()
    );
    // The gateway did open sessions with the hostile agents: nothing was let go because nothing was
    // held. Not all 400: a session waits for one of the gateway's 256 places only within its call's
    // deadline (bridge::mcp_agent::limits), and a greeting whose table came late has less of it left.
    assert!(initializes >= 200, "{initializes} initialize requests of 400");
    assert!(join(Duration::from_secs(5)).await.expect("joined after"));
}
