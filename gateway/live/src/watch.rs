//! The fan-out behind the page's server-sent events: one watcher per league per gateway, alive only while
//! someone watches. It asks the manager for the league's status (a few counts) every
//! [`WATCH_INTERVAL`]; when those counts move (a result arrived, a round completed, a player joined), it
//! fetches the league's snapshot once, serializes it once, and every viewer's stream sends those same
//! bytes. A thousand viewers cost the manager what one does.
//!
//! Nothing here is state a replica could lack: a snapshot is whole (never a diff against what this
//! gateway sent before), so a viewer whose connection moves to another replica gets the same page.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use league_domain::LeagueId;
use league_proto::v2::{GetLeagueStatusResponse, LeagueStatus};
use league_v2::convert;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::metrics::{POLLS, SNAPSHOTS, Seat};
use super::{Live, bounded, view};

/// How often a watched league's status is asked for.
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_millis(500);
/// How often a completed league is looked at (it only changes if the id is reused).
const COMPLETED_INTERVAL: Duration = Duration::from_secs(10);
/// Leagues watched at once by one gateway.
pub(crate) const MAX_WATCHED_LEAGUES: usize = 32;

/// What a change sends every viewer: the snapshot's id and its JSON, serialized once.
#[derive(Debug)]
pub(crate) struct Update {
    pub(crate) id: u64,
    pub(crate) json: Bytes,
}

pub(crate) type Updates = watch::Receiver<Option<Arc<Update>>>;

/// A stall as the page tells it: its reason, the matches waiting and its cause.
type StallKey = (i32, u32, String);

/// The counts whose movement means the page must change, and whether (and why) the league is stalled.
fn change_key(status: &GetLeagueStatusResponse) -> (i32, u32, u32, u32, u32, Option<StallKey>) {
    (
        status.status,
        status.current_round_id,
        status.finished_matches,
        status.registered_players,
        status.total_matches,
        status
            .stall
            .as_ref()
            .map(|stall| (stall.reason, stall.waiting_matches, stall.cause.clone())),
    )
}

/// A viewer of one league: its updates, and its place among the gateway's viewers.
#[derive(Debug)]
pub(crate) struct Viewer {
    pub(crate) updates: Updates,
    /// Held for as long as the viewer's stream lives.
    pub(crate) seat: Seat,
}

/// Why a viewer was turned away.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    TooManyViewers,
    TooManyLeagues,
}

impl Live {
    /// Joins the viewers of `league_id` as a viewer at `ip`, starting its watcher if nobody watched it
    /// yet.
    pub(crate) fn watch(self: &Arc<Self>, league_id: &LeagueId, ip: IpAddr) -> Result<Viewer, Refused> {
        let seat = Seat::new(self.viewers.take(ip).ok_or(Refused::TooManyViewers)?);
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(sender) = watched.get(league_id) {
            return Ok(Viewer {
                updates: sender.subscribe(),
                seat,
            });
        }
        if watched.len() >= MAX_WATCHED_LEAGUES {
            return Err(Refused::TooManyLeagues);
        }
        let (sender, updates) = watch::channel(None);
        watched.insert(league_id.clone(), sender.clone());
        tokio::spawn(self.clone().follow(league_id.clone(), sender));
        Ok(Viewer { updates, seat })
    }

    /// The watcher of one league: publishes a snapshot whenever the status counts move, until its last
    /// viewer has gone or the gateway stops.
    async fn follow(self: Arc<Self>, league_id: LeagueId, sender: watch::Sender<Option<Arc<Update>>>) {
        // The counts of the last snapshot sent, and whether the last thing sent was a failure (said once).
        let mut last_key = None;
        let mut failing = false;
        let mut id = 0u64;
        loop {
            {
                // Under the map's lock, so no viewer can join a watcher that is about to end.
                let mut watched = self
                    .watched
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                if sender.receiver_count() == 0 || self.shutdown.is_triggered() {
                    watched.remove(&league_id);
                    return;
                }
            }
            POLLS.inc();
            let mut interval = WATCH_INTERVAL;
            let fetched = match bounded(view::status(&self.manager_link, &league_id)).await {
                Ok(status) if last_key == Some(change_key(&status)) => {
                    if status.status == LeagueStatus::Completed as i32
                        || status.status == LeagueStatus::Cancelled as i32
                    {
                        interval = COMPLETED_INTERVAL;
                    }
                    None
                }
                Ok(status) => {
                    SNAPSHOTS.inc();
                    let key = change_key(&status);
                    Some(
                        bounded(self.snapshot(status))
                            .await
                            .map(|snapshot| (key, snapshot)),
                    )
                }
                Err(error) => Some(Err(error)),
            };
            let publish = match fetched {
                None => None,
                Some(Ok((key, snapshot))) => {
                    last_key = Some(key);
                    failing = false;
                    Some(snapshot)
                }
                Some(Err(error)) => {
                    // The next answer is sent in full, whatever it is.
                    last_key = None;
                    (!std::mem::replace(&mut failing, true)).then(|| unavailable(&error))
                }
            };
            if let Some(snapshot) = publish {
                id += 1;
                sender.send_replace(Some(Arc::new(Update {
                    id,
                    json: Bytes::from(snapshot.to_string()),
                })));
            }
            let shutdown = self.shutdown.clone();
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                () = sender.closed() => {}
                () = shutdown.wait() => {}
            }
        }
    }

    /// Everything the page shows of a league at this moment, whole: its status, the table, the round
    /// being played with each match's outcome so far, and the points after the last completed round.
    pub(crate) async fn snapshot(&self, status: GetLeagueStatusResponse) -> Result<Value, tonic::Status> {
        // Parsed where it enters: the manager names its leagues under the grammar.
        let league_id = LeagueId::parse(&status.league_id)
            .map_err(|error| tonic::Status::internal(format!("the manager answered league_id {error}")))?;
        let standings = self.standings(&league_id).await?;
        let completed = standings.round_id;
        let rows = &standings.standings;
        let round = if status.current_round_id == 0 {
            Value::Null
        } else {
            view::round(&self.manager_link, &league_id, status.current_round_id)
                .await?
                .map_or(Value::Null, |round| view::round_json(&round))
        };
        let last_round = match self
            .rounds
            .points(&self.manager_link, &league_id, completed)
            .await?
            .last()
        {
            Some(points) => json!({"round_id": completed, "points": points.as_ref()}),
            None => Value::Null,
        };
        Ok(json!({
            "status": view::status_json(&status, completed),
            "standings": convert::standings(rows),
            "round": round,
            "last_round": last_round,
        }))
    }
}

/// What viewers are sent while the manager cannot be asked (or does not know the league).
fn unavailable(status: &tonic::Status) -> Value {
    let message = if status.code() == tonic::Code::NotFound {
        status.message().to_owned()
    } else {
        "the league is unreachable for now; the page updates when it answers again".to_owned()
    };
    json!({"error": message})
}

/// The watchers of one gateway, by league id.
pub(crate) type Watched = std::sync::Mutex<HashMap<LeagueId, watch::Sender<Option<Arc<Update>>>>>;

#[cfg(test)]
mod tests {
    use league_manager_link::ManagerLink;
    use league_proto::v2::LeagueStall;
    use league_runtime::Shutdown;

    use super::*;

    /// The page's state with a manager that is never reached (its channel connects only when called).
    fn live(shutdown: &Shutdown) -> Arc<Live> {
        let channel = league_runtime::grpc::channel("http://manager.invalid:50051").expect("a lazy channel");
        Live::new(
            ManagerLink::new(channel, "operator".to_owned().into()),
            shutdown.signal(),
        )
    }

    fn league(id: &str) -> LeagueId {
        LeagueId::parse(id).expect("a league id")
    }

    fn watched(live: &Live) -> usize {
        live.watched.lock().map_or(0, |watched| watched.len())
    }

    #[tokio::test]
    async fn viewers_of_a_league_share_its_watcher_and_watched_leagues_are_bounded() {
        let shutdown = Shutdown::new();
        let live = live(&shutdown);
        let ip = IpAddr::from([127, 0, 0, 1]);
        let viewers: Vec<Viewer> = (0..MAX_WATCHED_LEAGUES)
            .map(|n| live.watch(&league(&format!("league-{n}")), ip).expect("a seat"))
            .collect();
        assert_eq!(watched(&live), MAX_WATCHED_LEAGUES);
        assert_eq!(
            live.watch(&league("one-more"), ip).err(),
            Some(Refused::TooManyLeagues)
        );
        // A league already watched takes another viewer, on the same watcher.
        let again = live.watch(&league("league-0"), ip).expect("a seat");
        assert_eq!(watched(&live), MAX_WATCHED_LEAGUES);
        assert_eq!(viewers.len() + 1, live.viewers.taken());
        drop(again);
        shutdown.trigger();
    }

    #[tokio::test]
    async fn one_address_holds_its_share_of_viewers_and_no_more() {
        let shutdown = Shutdown::new();
        let live = live(&shutdown);
        let (crowd, other) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let mut viewers: Vec<Viewer> = (0..crate::MAX_VIEWERS_PER_ADDRESS)
            .map(|_| live.watch(&league("l1"), crowd).expect("a seat"))
            .collect();
        assert_eq!(
            live.watch(&league("l1"), crowd).err(),
            Some(Refused::TooManyViewers)
        );
        assert!(
            live.watch(&league("l1"), other).is_ok(),
            "another address still gets a seat"
        );
        // A viewer that leaves gives its seat back.
        viewers.pop();
        assert!(live.watch(&league("l1"), crowd).is_ok());
        shutdown.trigger();
    }

    #[test]
    fn viewers_hear_why_the_league_is_unavailable_only_when_it_is_theirs_to_know() {
        let not_found = tonic::Status::not_found("no league l9");
        assert_eq!(unavailable(&not_found), json!({"error": "no league l9"}));
        // Anything else is the league's own trouble: its details stay out of a public page.
        let internal = tonic::Status::internal("pool timed out connecting to 10.0.0.7:5432");
        let told = unavailable(&internal).to_string();
        assert!(
            told.contains("unreachable") && !told.contains("10.0.0.7"),
            "{told}"
        );
    }

    #[test]
    fn a_new_result_or_a_stall_changing_its_cause_is_a_change_and_nothing_else_is() {
        let status = GetLeagueStatusResponse {
            finished_matches: 3,
            stall: Some(LeagueStall {
                waiting_matches: 2,
                cause: "no referee".to_owned(),
                ..LeagueStall::default()
            }),
            ..GetLeagueStatusResponse::default()
        };
        let key = change_key(&status);
        let unchanged = GetLeagueStatusResponse {
            game_type: "even_odd".to_owned(),
            ..status.clone()
        };
        assert_eq!(change_key(&unchanged), key, "not what the page shows changing");
        let result = GetLeagueStatusResponse {
            finished_matches: 4,
            ..status.clone()
        };
        assert_ne!(change_key(&result), key);
        let mut cause = status.clone();
        if let Some(stall) = cause.stall.as_mut() {
            stall.cause = "a referee gave its match back".to_owned();
        }
        assert_ne!(change_key(&cause), key);
    }
}
