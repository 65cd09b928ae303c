//! The addresses the system's services listen on under `league run` and `league serve`, picked before
//! anything starts, so that the manager is told every one of them (`LEAGUE_ENDPOINT_REFUSED`) and
//! refuses a contact endpoint naming any, on every loopback spelling (issue 53 item 5): each gateway's
//! public port, bridge and admin (metrics) port, and the manager's admin port. The manager refuses its
//! own gRPC address and its database itself. This is the list's home for the system on one machine, as
//! deploy/endpoint-refused is for compose and Kubernetes.
//!
//! A port is picked by binding it (`…:0` becomes a free port) and letting it go just before the service
//! binds it; every port is held until all are picked, so no two services are given one port. Another
//! program may still take a port in between: the service's own start then fails, saying so.

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

/// `addr` with a free port in place of a `0`, that port held in `held` until the caller lets it go.
fn free_port(addr: &str, held: &mut Vec<TcpListener>) -> anyhow::Result<String> {
    if !addr.ends_with(":0") {
        return Ok(addr.to_owned());
    }
    let listener = TcpListener::bind(addr).with_context(|| format!("finding a free port at {addr}"))?;
    let free = listener
        .local_addr()
        .with_context(|| format!("reading the free port found at {addr}"))?;
    held.push(listener);
    Ok(free.to_string())
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
        let kept = OwnAddrs::pick(1, "127.0.0.1:8000", "127.0.0.1:41234").expect("free ports");
        assert_eq!(kept.gateways[0].http, "127.0.0.1:8000");
        assert_eq!(kept.gateways[0].bridge, "127.0.0.1:41234");
        assert_eq!(kept.refused(None).split(',').count(), 4);
    }
}
