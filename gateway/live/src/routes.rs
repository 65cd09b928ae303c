//! The live page's HTTP routes, all GET (HEAD too) and all read-only: the page itself, its assets, and a
//! small JSON API — the leagues, a league's snapshot and its event stream, a round's matches, the points
//! after each completed round, a match's transcript, the players registered (the roster) and the
//! agents' compliance warnings. Ids in paths are checked before the manager is
//! asked; every answer is bounded in size and carries the page's security headers.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{Stream, StreamExt};
use league_domain::{LeagueId, MatchId};
use league_proto::v2::{GetStandingsResponse, MatchStatus};
use serde_json::{Value, json};

use super::watch::{Refused, Viewer};
use super::{Live, assets, bounded, view};

/// The largest JSON answer (a 1000-player league's table is about 150 KB).
const MAX_JSON_BYTES: usize = 8 << 20;
/// A comment on idle event streams, so proxies keep them open and a dead viewer is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Cache lifetimes: data that can no longer change (a completed round, a finished match), and the list
/// of leagues.
const FINAL: &str = "public, max-age=86400";
const SHORT: &str = "public, max-age=5";
const REVALIDATE: &str = "no-cache";

pub(crate) fn router(live: Arc<Live>) -> Router {
    Router::new()
        .route("/", get(assets::page))
        .route("/leagues/{league_id}", get(league_page))
        .route("/live/{file}", get(assets::file))
        .route("/api/leagues", get(leagues))
        .route("/api/leagues/{league_id}", get(snapshot))
        .route("/api/leagues/{league_id}/events", get(events))
        .route("/api/leagues/{league_id}/progression", get(progression))
        .route("/api/leagues/{league_id}/rounds/{round_id}", get(round))
        .route("/api/leagues/{league_id}/matches/{match_id}", get(one_match))
        .route("/api/players", get(players))
        .route("/api/warnings", get(warnings))
        .layer(axum::middleware::map_response(assets::security_headers))
        .with_state(live)
}

/// A JSON answer or an error saying what went wrong, as JSON.
type Answer = Result<Response, Refusal>;

/// A request refused, and why: answered as `{"error": "…"}` with its HTTP status.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    message: String,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({"error": self.message});
        (
            self.status,
            [(header::CACHE_CONTROL, REVALIDATE)],
            axum::Json(body),
        )
            .into_response()
    }
}

fn error(status: StatusCode, message: impl Into<String>) -> Refusal {
    Refusal {
        status,
        message: message.into(),
    }
}

fn upstream(status: tonic::Status) -> Refusal {
    match status.code() {
        tonic::Code::NotFound => error(StatusCode::NOT_FOUND, status.message()),
        tonic::Code::InvalidArgument => error(StatusCode::BAD_REQUEST, status.message()),
        tonic::Code::DeadlineExceeded => error(StatusCode::GATEWAY_TIMEOUT, status.message()),
        _ => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the league is unreachable for now; retry",
        ),
    }
}

/// The league's standings (shared through the gateway's cache), bounded in time.
async fn standings(live: &Live, league_id: &LeagueId) -> Result<Arc<GetStandingsResponse>, Refusal> {
    ask(live.standings(league_id)).await
}

/// Bounds a call to the manager in time.
async fn ask<T>(call: impl Future<Output = Result<T, tonic::Status>>) -> Result<T, Refusal> {
    bounded(call).await.map_err(upstream)
}

fn json_answer(body: &Value, cache: &'static str) -> Answer {
    let bytes = body.to_string().into_bytes();
    if bytes.len() > MAX_JSON_BYTES {
        return Err(error(
            StatusCode::INSUFFICIENT_STORAGE,
            "the answer is too large to show",
        ));
    }
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, cache),
        ],
        bytes,
    )
        .into_response())
}

/// The league a path names: no league id (league_domain's grammar) names no league.
fn league_id(league_id: &str) -> Result<LeagueId, Refusal> {
    LeagueId::parse(league_id).map_err(|_| error(StatusCode::NOT_FOUND, "no such league"))
}

async fn league_page(Path(id): Path<String>, headers: HeaderMap) -> Response {
    match league_id(&id) {
        Ok(_) => assets::page(headers).await,
        Err(refused) => refused.into_response(),
    }
}

/// The agents' compliance warnings (crate::warnings).
async fn warnings(State(live): State<Arc<Live>>) -> Answer {
    let body = ask(super::warnings::warnings(&live.manager_link)).await?;
    json_answer(&body, SHORT)
}

/// The players registered on the system (crate::roster).
async fn players(State(live): State<Arc<Live>>) -> Answer {
    let body = ask(live.roster()).await?;
    // Revalidated: the page asks again when a player registers, and must see it.
    json_answer(&body, REVALIDATE)
}

/// The leagues this page can show, the newest first. `latest`: the one `/` shows.
async fn leagues(State(live): State<Arc<Live>>) -> Answer {
    let leagues = ask(view::leagues(&live.manager_link)).await?;
    let body = json!({
        "latest": leagues.first().map(|league| league.league_id.clone()),
        "leagues": leagues.iter().map(view::summary_json).collect::<Vec<_>>(),
    });
    json_answer(&body, SHORT)
}

/// What the event stream sends, once: the league now. Shared by the requests of the same half second
/// (single flight), so scripts polling it cost the manager no more than a watcher does.
async fn snapshot(State(live): State<Arc<Live>>, Path(id): Path<String>) -> Answer {
    let id = league_id(&id)?;
    let fetch = {
        let (live, id) = (live.clone(), id.clone());
        || async move {
            let status = bounded(view::status(&live.manager_link, &id)).await?;
            Ok(Arc::new(bounded(live.snapshot(status)).await?))
        }
    };
    let body = live.snapshots.get(Some(&id), fetch).await.map_err(upstream)?;
    json_answer(&body, REVALIDATE)
}

/// The league's snapshot each time it changes, as server-sent events (`event: league`), from the one
/// watcher of the league in this gateway.
async fn events(
    State(live): State<Arc<Live>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(id): Path<String>,
) -> Answer {
    let id = league_id(&id)?;
    // Only leagues that exist are watched (an unknown id gets 404, and EventSource stops retrying).
    ask(view::status(&live.manager_link, &id)).await?;
    let viewer = live.watch(&id, peer.ip()).map_err(|refused| match refused {
        Refused::TooManyViewers => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many viewers on this gateway, or from this address; retry later",
        ),
        Refused::TooManyLeagues => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many leagues watched on this gateway; retry later",
        ),
    })?;
    // The stream ends when the gateway stops, or when its place went to a viewer elsewhere.
    let evicted = viewer.seat.share.evicted();
    let stream = updates(viewer)
        .take_until(live.shutdown.clone().wait())
        .take_until(evicted);
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Each snapshot the viewer has not sent yet, the current one first.
fn updates(viewer: Viewer) -> impl Stream<Item = Result<Event, Infallible>> {
    let Viewer { mut updates, seat } = viewer;
    updates.mark_changed();
    futures::stream::unfold((updates, seat), |(mut updates, seat)| async move {
        loop {
            updates.changed().await.ok()?;
            let update = updates.borrow_and_update().clone();
            if let Some(update) = update {
                let data = String::from_utf8_lossy(&update.json).into_owned();
                let event = Event::default()
                    .event("league")
                    .id(update.id.to_string())
                    .retry(Duration::from_secs(2))
                    .data(data);
                return Some((Ok(event), (updates, seat)));
            }
        }
    })
}

/// The points of every player after each completed round (the progression chart). Revalidated by its
/// ETag, which names the rounds it covers.
async fn progression(State(live): State<Arc<Live>>, Path(id): Path<String>, headers: HeaderMap) -> Answer {
    let id = league_id(&id)?;
    let standings = standings(&live, &id).await?;
    let completed = standings.round_id;
    let etag = format!("\"{}-{completed}-{}\"", id, standings.standings.len());
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tag| tag.as_bytes() == etag.as_bytes())
    {
        return Ok(StatusCode::NOT_MODIFIED.into_response());
    }
    let points = ask(live.rounds.points(&live.manager_link, &id, completed)).await?;
    let mut answer = json_answer(&view::progression_json(&standings.standings, &points), REVALIDATE)?;
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        answer.headers_mut().insert(header::ETAG, etag);
    }
    Ok(answer)
}

/// A round's matches with each outcome so far; cached for long once the round is completed.
async fn round(State(live): State<Arc<Live>>, Path((id, round_id)): Path<(String, String)>) -> Answer {
    let id = league_id(&id)?;
    let round_id: u32 = round_id
        .parse()
        .ok()
        .filter(|round| *round >= 1)
        .ok_or_else(|| error(StatusCode::BAD_REQUEST, "a round is a number from 1"))?;
    let standings = standings(&live, &id).await?;
    let completed = round_id <= standings.round_id;
    let found = if completed {
        ask(live.rounds.matches(&live.manager_link, &id, round_id))
            .await?
            .map(|round| view::round_json(&round))
    } else {
        ask(view::round(&live.manager_link, &id, round_id))
            .await?
            .map(|round| view::round_json(&round))
    };
    let body = found.ok_or_else(|| error(StatusCode::NOT_FOUND, format!("no round {round_id}")))?;
    json_answer(&body, if completed { FINAL } else { REVALIDATE })
}

/// A match with its result and full transcript; cached for long once it is finished.
async fn one_match(State(live): State<Arc<Live>>, Path((id, match_id)): Path<(String, String)>) -> Answer {
    let id = league_id(&id)?;
    let match_id = MatchId::parse(&match_id).map_err(|_| error(StatusCode::NOT_FOUND, "no such match"))?;
    let answer = ask(view::one_match(&live.manager_link, &id, match_id)).await?;
    let finished = answer
        .r#match
        .as_ref()
        .is_some_and(|m| m.status == MatchStatus::Finished as i32);
    json_answer(
        &view::transcript_json(&answer),
        if finished { FINAL } else { REVALIDATE },
    )
}
