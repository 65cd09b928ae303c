//! The live league page's HTTP side against a real manager and two real gateway replicas: the page and
//! its headers, the JSON API's refusals, and the event streams' fan-out — however many viewers watch a
//! league, each gateway fetches one snapshot per change, and every viewer (on either replica) gets the
//! same one.

use crate::support;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use league_testkit::observe;
use league_v2::compliance::Mode;
use serde_json::Value;
use support::*;

pub(crate) type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Empty<Bytes>>;

pub(crate) fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

async fn send(
    client: &HttpClient,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
) -> hyper::Response<Incoming> {
    let mut request = hyper::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    client
        .request(request.body(Empty::new()).expect("a request"))
        .await
        .expect("the gateway answers")
}

/// Status, one header, and the body of a GET (or another method).
pub(crate) async fn fetch(
    client: &HttpClient,
    method: &str,
    url: &str,
    header: &str,
) -> (u16, String, String) {
    let response = send(client, method, url, &[]).await;
    let status = response.status().as_u16();
    let value = response
        .headers()
        .get(header)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.into_body().collect().await.expect("a body").to_bytes();
    (status, value, String::from_utf8_lossy(&body).into_owned())
}

/// A viewer's event stream: reads one `event: league` at a time, returning its id and data.
struct Stream {
    body: Incoming,
    buffer: String,
}

impl Stream {
    async fn open(client: &HttpClient, url: &str) -> Stream {
        let response = send(client, "GET", url, &[("accept", "text/event-stream")]).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Stream {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> (u64, Value) {
        let read = async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let block: String = self.buffer.drain(..end + 2).collect();
                    let field = |name: &str| {
                        block
                            .lines()
                            .find_map(|line| line.strip_prefix(name))
                            .map(str::to_owned)
                    };
                    if field("event: ").as_deref() == Some("league") {
                        let id = field("id: ").and_then(|id| id.parse().ok()).expect("an id");
                        let data = serde_json::from_str(&field("data: ").expect("data")).expect("JSON");
                        return (id, data);
                    }
                    continue;
                }
                let frame = self
                    .body
                    .frame()
                    .await
                    .expect("the stream stays open")
                    .expect("a frame");
                if let Ok(data) = frame.into_data() {
                    self.buffer.push_str(&String::from_utf8_lossy(&data));
                }
            }
        };
        tokio::time::timeout(PATIENCE, read)
            .await
            .expect("an event in time")
    }
}

fn metric(name: &str) -> f64 {
    let text = league_runtime::metrics::encode().expect("metrics");
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn every_viewer_shares_one_snapshot_per_change_on_each_replica() {
    let manager = spawn_manager().await;
    let first = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let second = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let client = client();
    let events = |gateway: &TestGateway| format!("http://{}/api/leagues/{LEAGUE_ID}/events", gateway.http);

    let snapshots_before = metric("league_gateway_live_snapshots_total");
    let mut viewers = Vec::new();
    for _ in 0..3 {
        viewers.push(Stream::open(&client, &events(&first)).await);
    }
    viewers.push(Stream::open(&client, &events(&second)).await);
    let mut seen = Vec::new();
    for viewer in &mut viewers {
        seen.push(viewer.next().await);
    }
    for (id, snapshot) in &seen {
        assert_eq!(*id, 1, "{snapshot}");
        assert_eq!(
            snapshot, &seen[0].1,
            "every viewer, on either replica, sees the same league"
        );
    }
    assert_eq!(seen[0].1["status"]["status"], "REGISTERING");
    assert_eq!(seen[0].1["status"]["registered_players"], 0);
    assert_eq!(metric("league_gateway_live_viewers"), 4.0);

    // A change reaches every viewer, fetched once by each replica.
    register(
        &first,
        "register_player",
        player_registration("alpha", "http://127.0.0.1:9/mcp"),
    )
    .await;
    for viewer in &mut viewers {
        let (id, snapshot) = viewer.next().await;
        assert_eq!(id, 2);
        assert_eq!(snapshot["status"]["registered_players"], 1, "{snapshot}");
        assert_eq!(snapshot["standings"][0]["display_name"], "alpha");
        assert!(!snapshot.to_string().contains("auth_token"), "{snapshot}");
    }
    // Watch a few more status checks go by without a change: they fetch nothing.
    let polls = metric("league_gateway_live_polls_total");
    observe("the watchers checking four more times", PATIENCE, async || {
        (metric("league_gateway_live_polls_total") >= polls + 4.0).then_some(())
    })
    .await;
    assert_eq!(
        metric("league_gateway_live_snapshots_total") - snapshots_before,
        4.0,
        "two changes, two replicas: four fetches for four viewers"
    );

    // Viewers that leave free their seats, and their league's watcher stops.
    drop(viewers);
    observe("no viewers counted after they left", PATIENCE, async || {
        (metric("league_gateway_live_viewers") <= 0.0).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_page_and_its_api_are_read_only_and_bounded() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let client = client();
    let url = |path: &str| format!("http://{}{path}", gateway.http);

    let page = send(&client, "GET", &url("/"), &[]).await;
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["cache-control"], "no-cache");
    let csp = headers["content-security-policy"].to_str().expect("a CSP");
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let etag = headers["etag"].to_str().expect("an ETag").to_owned();
    let again = send(&client, "GET", &url("/"), &[("if-none-match", &etag)]).await;
    assert_eq!(again.status(), 304, "an unchanged page is not sent again");
    let html = page.into_body().collect().await.expect("the page").to_bytes();
    let html = String::from_utf8_lossy(&html);
    let script = html
        .split('"')
        .find(|part| part.starts_with("/live/live.js?v="))
        .expect("the page links its script by version");
    let (status, cache, body) = fetch(&client, "GET", &url(script), "cache-control").await;
    assert_eq!(
        (status, cache.as_str()),
        (200, "public, max-age=31536000, immutable")
    );
    assert!(body.contains("EventSource"));
    assert!(!html.contains(OPERATOR_TOKEN) && !body.contains(OPERATOR_TOKEN));

    let (status, _, body) = fetch(&client, "GET", &url("/api/leagues"), "").await;
    assert_eq!(status, 200, "{body}");
    let leagues: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(leagues["latest"], LEAGUE_ID);
    let (status, _, body) = fetch(&client, "GET", &url(&format!("/api/leagues/{LEAGUE_ID}")), "").await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.contains(OPERATOR_TOKEN));

    // Refusals: each says what is wrong, and none acts on the league.
    let cases = [
        ("GET", "/api/leagues/no_such_league".to_owned(), 404),
        ("GET", "/api/leagues/no_such_league/events".to_owned(), 404),
        ("GET", "/api/leagues/%3Cscript%3E".to_owned(), 404),
        ("GET", format!("/api/leagues/{}", "x".repeat(65)), 404),
        ("GET", format!("/api/leagues/{LEAGUE_ID}/rounds/zero"), 400),
        ("GET", format!("/api/leagues/{LEAGUE_ID}/rounds/0"), 400),
        ("GET", format!("/api/leagues/{LEAGUE_ID}/rounds/1"), 404),
        ("GET", format!("/api/leagues/{LEAGUE_ID}/matches/R1M1"), 404),
        (
            "GET",
            format!("/api/leagues/{LEAGUE_ID}/matches/..%2F..%2Fetc"),
            404,
        ),
        ("GET", "/leagues/%3Cscript%3E".to_owned(), 404),
        ("GET", "/live/other.js".to_owned(), 404),
        ("POST", format!("/api/leagues/{LEAGUE_ID}"), 405),
        ("DELETE", format!("/api/leagues/{LEAGUE_ID}/events"), 405),
        ("POST", "/".to_owned(), 405),
    ];
    let before = snapshot(&manager.pool).await;
    for (method, path, expected) in cases {
        let (status, _, body) = fetch(&client, method, &url(&path), "").await;
        assert_eq!(status, expected, "{method} {path}: {body}");
        if expected != 405 {
            let answer: Value = serde_json::from_str(&body).unwrap_or_default();
            assert!(
                answer["error"].is_string() || path.starts_with("/live/"),
                "{path}: {body}"
            );
        }
    }
    assert_eq!(snapshot(&manager.pool).await, before, "nothing changed");
}

/// The league's snapshot from the JSON API once `done` holds of it, asked again while it does not
/// (snapshots are cached for a watch interval), for at most [`PATIENCE`].
async fn snapshot_once(client: &HttpClient, gateway: &TestGateway, done: impl Fn(&Value) -> bool) -> Value {
    let url = format!("http://{}/api/leagues/{LEAGUE_ID}", gateway.http);
    observe("the snapshot awaited", PATIENCE, async || {
        let (status, _, body) = fetch(client, "GET", &url, "etag").await;
        assert_eq!(status, 200, "{body}");
        let snapshot: Value = serde_json::from_str(&body).expect("JSON");
        done(&snapshot).then_some(snapshot)
    })
    .await
}

#[tokio::test]
async fn the_page_says_why_a_league_is_stalled() {
    use league_proto::v2::{PauseLeagueRequest, ResumeLeagueRequest};

    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let client = client();
    for name in ["alice", "bob"] {
        register(
            &gateway,
            "register_player",
            player_registration(name, &format!("http://127.0.0.1:9/{name}")),
        )
        .await;
    }
    start_league(&gateway).await;
    let moving = snapshot_once(&client, &gateway, |s| s["status"]["status"] == "RUNNING").await;
    assert!(moving["status"]["stall"].is_null(), "{moving}");

    // Paused by the operator: said, with the match that waits.
    manager
        .client()
        .pause_league(manager.operator(PauseLeagueRequest {
            league_id: LEAGUE_ID.into(),
        }))
        .await
        .expect("paused");
    let paused = snapshot_once(&client, &gateway, |s| !s["status"]["stall"].is_null()).await;
    assert_eq!(paused["status"]["status"], "PAUSED", "{paused}");
    let stall = &paused["status"]["stall"];
    assert_eq!(stall["reason"], "PAUSED", "{paused}");
    assert_eq!(stall["waiting_matches"], 1);
    assert!(stall["since"].is_string(), "{paused}");
    assert!(
        stall["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Paused by the operator"),
        "{paused}"
    );

    // Resumed, the match waits for a referee, and none is registered: once no claim or result has come
    // for the manager's threshold (the round's release moved back past it rather than waited for),
    // the page says so.
    manager
        .client()
        .resume_league(manager.operator(ResumeLeagueRequest {
            league_id: LEAGUE_ID.into(),
        }))
        .await
        .expect("resumed");
    let resumed = snapshot_once(&client, &gateway, |s| s["status"]["status"] == "RUNNING").await;
    assert!(resumed["status"]["stall"].is_null(), "{resumed}");
    sqlx::query("update rounds set released_at = released_at - interval '1 minute' where league_id = $1")
        .bind(LEAGUE_ID)
        .execute(&manager.pool)
        .await
        .expect("the release moved back");
    let waiting = snapshot_once(&client, &gateway, |s| !s["status"]["stall"].is_null()).await;
    let stall = &waiting["status"]["stall"];
    assert_eq!(stall["reason"], "NO_REFEREE", "{waiting}");
    assert!(
        stall["message"]
            .as_str()
            .unwrap_or_default()
            .contains("none is registered"),
        "{waiting}"
    );
}
