//! The outbox's delivery: events batched once per host, a call bounded in bytes, and an undecodable
//! or refused event holding back its recipient's later ones.

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::*;
use league_testkit::EventHost;

use super::*;

/// Event `event_id` with a standings table of `rows` rows, for P01 and P02.
fn standings(event_id: i64, rows: usize) -> HostDelivery {
    let row = StandingRow {
        player_id: "P0000".into(),
        display_name: "a player with a long display name".into(),
        ..StandingRow::default()
    };
    HostDelivery {
        event: NotifyLeagueEventRequest {
            league_id: "L1".into(),
            event_id: format!("L1/{event_id}"),
            event: Some(Event::StandingsUpdate(StandingsUpdate {
                round_id: 1,
                standings: vec![row; rows],
            })),
            ..NotifyLeagueEventRequest::default()
        },
        recipients: ["P01", "P02"]
            .map(|player_id| Pending {
                event_id,
                player_id: player_id.into(),
                attempts: 0,
            })
            .into(),
    }
}

#[test]
fn events_go_once_per_host_and_an_undecodable_one_holds_back_its_recipients_later_events() {
    let row = |event_id: i64, payload: Vec<u8>, to: &[(&str, &str)]| QueuedEvent {
        event_id,
        payload,
        players: to.iter().map(|(player, _)| (*player).to_owned()).collect(),
        endpoints: to.iter().map(|(_, host)| (*host).to_owned()).collect(),
        attempts: vec![0; to.len()],
    };
    let event = standings(0, 1).event.encode_to_vec();
    let rows = vec![
        row(1, event.clone(), &[("P01", "h1"), ("P02", "h2"), ("P03", "h1")]),
        row(2, vec![0xff, 0xff], &[("P02", "h2"), ("P03", "h1")]),
        row(3, event, &[("P01", "h1"), ("P02", "h2"), ("P03", "h1")]),
    ];
    let (hosts, undecodable) = by_host(rows);
    let sent = |host: &str| -> Vec<(String, Vec<String>)> {
        (hosts[host].iter())
            .map(|d| {
                let players = d.recipients.iter().map(|p| p.player_id.clone()).collect();
                (d.event.event_id.clone(), players)
            })
            .collect()
    };
    // Event 2 does not decode: P02 and P03 get nothing newer in this batch.
    assert_eq!(
        sent("h1"),
        [
            ("L1/1".to_owned(), vec!["P01".to_owned(), "P03".to_owned()]),
            ("L1/3".to_owned(), vec!["P01".to_owned()])
        ]
    );
    assert_eq!(sent("h2"), [("L1/1".to_owned(), vec!["P02".to_owned()])]);
    let failed: Vec<(i64, &str)> = (undecodable.iter())
        .map(|(pending, _)| (pending.event_id, pending.player_id.as_str()))
        .collect();
    assert_eq!(failed, [(2, "P02"), (2, "P03")]);
}

#[tokio::test]
async fn a_call_holds_at_most_call_bytes_and_a_refused_player_gets_nothing_newer() {
    let (host, endpoint) = EventHost::serve().await;
    host.refuse("P02");
    let channel = league_runtime::grpc::channel(&endpoint).expect("channel");

    // Three tables of about 450 KB, then a small one: two calls, the first with two tables.
    let big = 10_000;
    assert!((2 * CALL_BYTES / 5..CALL_BYTES / 2).contains(&standings(1, big).event.encoded_len()));
    let deliveries = vec![
        standings(1, big),
        standings(2, big),
        standings(3, big),
        standings(4, 1),
    ];
    let (delivered, failed) = deliver_to_host(PlayerServiceClient::new(channel), deliveries).await;

    let calls = host.calls();
    let sizes: Vec<usize> = calls
        .iter()
        .map(|call| {
            call.deliveries
                .iter()
                .map(|d| d.event.as_ref().map_or(0, |e| e.encoded_len()))
                .sum()
        })
        .collect();
    assert_eq!(sizes.len(), 2, "calls of {sizes:?} bytes");
    assert!(
        sizes.iter().all(|size| *size <= CALL_BYTES),
        "calls of {sizes:?} bytes"
    );
    // P02 refused its first event: its later events in the same call are the host's to refuse (it
    // takes nothing newer for P02 either), and none is sent in a later call.
    let recipients: Vec<Vec<Vec<&str>>> = calls
        .iter()
        .map(|call| {
            (call.deliveries.iter())
                .map(|d| d.player_ids.iter().map(String::as_str).collect())
                .collect()
        })
        .collect();
    assert_eq!(
        recipients,
        [
            vec![vec!["P01", "P02"], vec!["P01", "P02"]],
            vec![vec!["P01"], vec!["P01"]]
        ]
    );
    let delivered: Vec<(i64, &str)> = delivered
        .iter()
        .map(|(event, player)| (*event, player.as_str()))
        .collect();
    assert_eq!(delivered, [(1, "P01"), (2, "P01"), (3, "P01"), (4, "P01")]);
    let failed: Vec<(i64, &str)> = failed
        .iter()
        .map(|(pending, _)| (pending.event_id, pending.player_id.as_str()))
        .collect();
    assert_eq!(failed, [(1, "P02")]);
}
