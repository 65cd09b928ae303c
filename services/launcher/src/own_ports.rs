//! The addresses the system's services listen on under `league run` and `league serve`, picked before
//! anything starts, so that the manager is told every one of them (`LEAGUE_ENDPOINT_REFUSED`) and
//! refuses a contact endpoint naming any, on every loopback spelling (issue 53 item 5): each gateway's
//! public port, bridge and admin (metrics) port, and the manager's admin port. The manager refuses its
//! own gRPC address and its database itself. This is the list's home for the system on one machine, as
//! deploy/endpoint-refused is for compose and Kubernetes.
//!
//! A port is picked by binding it and letting it go just before the service binds it; every port is held
//! until all are picked, so no two services are given one port. It is picked below the kernel's
//! ephemeral range (`ip_local_port_range`), where no `…:0` bind and no outgoing connection is handed a
//! port: between being let go and being bound, a port there is taken only by a program asking for it
//! by number (seen once from the ephemeral range, under the parallel test suite: "Address already in
//! use"). Such a program may still take it: the service's own start then fails, saying so.

use std::net::TcpListener;

use anyhow::Context;

/// Where one gateway listens.
#[derive(Debug, Clone)]
pub struct GatewayAddrs {
    /// `/mcp` and the live page (`LEAGUE_HTTP_ADDR`).
    pub http: String,
    /// The gRPC bridge the referees call external agents through (`LEAGUE_LISTEN_ADDR`).
    pub bridge: String,
    /// Metrics, health and readiness (`LEAGUE_ADMIN_ADDR`).
    pub admin: String,
}

/// Where the system's services listen, the manager's gRPC address aside.
#[derive(Debug, Clone)]
pub struct OwnAddrs {
    /// The manager's metrics, health and readiness (`LEAGUE_ADMIN_ADDR`).
    pub manager_admin: String,
    pub gateways: Vec<GatewayAddrs>,
}

impl OwnAddrs {
    /// Fixed addresses for the manager's admin server and `gateways` gateways, the first of which
    /// serves at `first_http` and bridges at `first_bridge` (either may be `…:0`).
    pub fn pick(gateways: u32, first_http: &str, first_bridge: &str) -> anyhow::Result<OwnAddrs> {
        let mut held = Vec::new();
        let mut free = |addr: &str| free_port(addr, &mut held);
        let manager_admin = free(LOOPBACK)?;
        let gateways = (1..=gateways.max(1))
            .map(|replica| {
                let first = replica == 1;
                Ok(GatewayAddrs {
                    http: free(if first { first_http } else { LOOPBACK })?,
                    bridge: free(if first { first_bridge } else { LOOPBACK })?,
                    admin: free(LOOPBACK)?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(OwnAddrs {
            manager_admin,
            gateways,
        })
    }

    /// The manager's `LEAGUE_ENDPOINT_REFUSED`: what the operator's environment refuses, and every
    /// address here.
    pub fn refused(&self, operators: Option<&str>) -> String {
        let ours = self.gateways.iter().flat_map(|gateway| {
            [
                gateway.http.as_str(),
                gateway.bridge.as_str(),
                gateway.admin.as_str(),
            ]
        });
        operators
            .into_iter()
            .chain([self.manager_admin.as_str()])
            .chain(ours)
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Where a service picks its own port.
const LOOPBACK: &str = "127.0.0.1:0";

/// The lowest port picked: below it are the well-known and commonly configured ones.
const LOWEST: u16 = 10_000;
/// How many ports below the ephemeral range are tried before letting the kernel pick one.
const TRIES: usize = 64;

/// `addr` with a free port in place of a `0`, that port held in `held` until the caller lets it go.
fn free_port(addr: &str, held: &mut Vec<TcpListener>) -> anyhow::Result<String> {
    let Some(host) = addr.strip_suffix(":0") else {
        return Ok(addr.to_owned());
    };
    let below_ephemeral =
        candidates(ephemeral_start()).find_map(|port| TcpListener::bind(format!("{host}:{port}")).ok());
    let listener = match below_ephemeral {
        Some(listener) => listener,
        None => TcpListener::bind(addr).with_context(|| format!("finding a free port at {addr}"))?,
    };
    let free = listener
        .local_addr()
        .with_context(|| format!("reading the free port found at {addr}"))?;
    held.push(listener);
    Ok(free.to_string())
}

/// Where the kernel's ephemeral range starts (Linux's default when it cannot be read).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// Up to [`TRIES`] ports from [`LOWEST`] to just below `ephemeral_start`, from a random one on, so that
/// two launchers at once start apart; none when the range leaves no room.
fn candidates(ephemeral_start: u16) -> impl Iterator<Item = u16> {
    use std::hash::{BuildHasher, Hasher};
    let span = ephemeral_start.saturating_sub(LOWEST);
    // RandomState is seeded from the OS: enough to spread the starts, no secret is made of it.
    let start = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (0..u64::from(span))
        .take(TRIES)
        .map(move |i| LOWEST + (start.wrapping_add(i) % u64::from(span)) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_port_is_fixed_distinct_and_refused() {
        let addrs = OwnAddrs::pick(2, "127.0.0.1:0", "127.0.0.1:0").expect("free ports");
        let refused = addrs.refused(Some(" jaeger:4317 "));
        let entries: Vec<&str> = refused.split(',').collect();
        assert_eq!(entries.len(), 1 + 1 + 2 * 3, "{refused}");
        assert_eq!(entries[0], "jaeger:4317");
        let ports: std::collections::HashSet<&str> = entries[1..]
            .iter()
            .map(|entry| entry.rsplit_once(':').map_or("", |(_, port)| port))
            .collect();
        assert_eq!(ports.len(), 7, "distinct ports: {refused}");
        assert!(!ports.contains("0"), "{refused}");
        let ephemeral = ephemeral_start();
        for port in &ports {
            let port: u16 = port.parse().expect("a port");
            assert!(
                (LOWEST..ephemeral).contains(&port),
                "below the ephemeral range: {refused}"
            );
        }
        let kept = OwnAddrs::pick(1, "127.0.0.1:8000", "127.0.0.1:41234").expect("free ports");
        assert_eq!(kept.gateways[0].http, "127.0.0.1:8000");
        assert_eq!(kept.gateways[0].bridge, "127.0.0.1:41234");
        assert_eq!(kept.refused(None).split(',').count(), 4);
    }

    #[test]
    fn candidates_stay_below_the_ephemeral_range_and_none_are_left_without_room() {
        let ports: Vec<u16> = candidates(32_768).collect();
        assert_eq!(ports.len(), TRIES);
        assert!(
            ports.iter().all(|port| (LOWEST..32_768).contains(port)),
            "{ports:?}"
        );
        assert_eq!(candidates(LOWEST).count(), 0);
        assert_eq!(candidates(1024).count(), 0);
        assert_eq!(candidates(LOWEST + 3).count(), 3);
    }
}
