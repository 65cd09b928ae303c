//! No contact endpoint may name a port `league serve` itself listens on (issue 53 item 5): every TCP
//! port its manager and gateway processes listen on — found from outside, in /proc, not from what
//! `serve` says — and the database's, each in every loopback spelling, is refused E020 when a player
//! registers there through the gateway, and nothing is registered; an endpoint elsewhere still is.

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;

use league_testkit::fake_agent::player_registration;
use league_testkit::http::{post_to, socket_addr};
use serde_json::{Value, json};

use crate::operator_cli::Place;

/// The ports the process `pid` listens on (TCP, IPv4 and IPv6): its sockets' inodes, found in the
/// kernel's tables.
fn listening_ports(pid: &str) -> HashSet<u16> {
    let inodes: HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the process's descriptors")
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| {
            let link = link.to_string_lossy().into_owned();
            Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let mut ports = HashSet::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is HEXIP:HEXPORT; state 0A is LISTEN; field 9 is the inode.
            let (Some(local), Some(&"0A"), Some(inode)) = (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let port = local
                .rsplit_once(':')
                .and_then(|(_, port)| u16::from_str_radix(port, 16).ok());
            if let (Some(port), true) = (port, inodes.contains(*inode)) {
                ports.insert(port);
            }
        }
    }
    ports
}

/// The pids of `serve`'s children called `names`, from the children file in its state directory.
fn children(state_dir: &Path, names: &[&str]) -> Vec<String> {
    let noted = std::fs::read_to_string(state_dir.join("children")).expect("serve's children file");
    noted
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.len() >= 3 && names.contains(&fields[2])).then(|| fields[0].to_owned())
        })
        .collect()
}

/// The port of the database server `serve` uses, when it is reached over TCP.
async fn database_port() -> Option<u16> {
    let server = league_manager::postgres::resolve(&league_testkit::database::cluster_dir())
        .await
        .expect("a database server");
    let url = secrecy::ExposeSecret::expose_secret(&server.url).to_owned();
    let options = sqlx::postgres::PgConnectOptions::from_str(&url).expect("a database URL");
    (!options.get_host().starts_with('/')).then(|| options.get_port())
}

async fn register(gateway: &str, name: &str, endpoint: &str) -> Value {
    let call = json!({
        "jsonrpc": "2.0",
        "method": "register_player",
        "params": player_registration(name, endpoint),
        "id": 1,
    });
    let reply = post_to(
        socket_addr(gateway).expect("the gateway's address"),
        call.to_string(),
        &[],
    )
    .await;
    assert_eq!(reply.status, 200, "{endpoint}: {}", reply.text());
    reply.json()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_port_serve_listens_on_is_refused_as_a_contact_endpoint_in_every_spelling() {
    let place = Place::new("own-ports");
    let state_dir = place.dir.join("serve-state");
    let state_dir_arg = state_dir.display().to_string();
    let (_served, state) = place.serve(&["--referees", "1", "--state-dir", &state_dir_arg], |_| {});
    let gateway = state["gateway_url"].as_str().expect("a gateway URL").to_owned();
    let pids = children(&state_dir, &["manager", "gateway-1"]);
    assert_eq!(pids.len(), 2, "the manager and the gateway: {pids:?}");
    let mut ports: Vec<u16> = pids.iter().flat_map(|pid| listening_ports(pid)).collect();
    // The manager's gRPC and admin ports, the gateway's public, bridge and admin ports.
    assert!(ports.len() >= 5, "{ports:?}");
    ports.extend(database_port().await);
    ports.sort_unstable();
    ports.dedup();

    let spellings = [
        "127.0.0.1",
        "localhost",
        "[::ffff:127.0.0.1]",
        "127.0.0.2",
        "[::1]",
    ];
    let mut accepted = vec![];
    for port in &ports {
        for (n, host) in spellings.iter().enumerate() {
            let endpoint = format!("http://{host}:{port}/mcp");
            let answer = register(&gateway, &format!("own{port}x{n}"), &endpoint).await;
            if answer["result"]["error_code"] != "E020" {
                accepted.push(format!("{endpoint}: {answer}"));
            }
        }
    }
    assert!(accepted.is_empty(), "not refused:\n{}", accepted.join("\n"));
    let answer = register(&gateway, "elsewhere", "http://127.0.0.1:9/mcp").await;
    assert_eq!(answer["result"]["status"], "ACCEPTED", "{answer}");
}
