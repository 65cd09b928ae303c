//! An agent's contact endpoint, parsed once where it enters the league, and the policy on where an
//! endpoint may point.
//!
//! [`Endpoint::parse`] accepts an absolute `http`/`https` URL with a host, a port in 1..=65535 and no
//! `user:pass@` or fragment, and writes it in one canonical form: scheme and host in lower case, the
//! scheme's default port dropped, a trailing `/` dropped from the path. That form is what is stored and
//! called (the host as given: TLS needs the name). Whether two endpoints reach one agent is decided by
//! their comparison key instead (crate::league::contact_key): the address the host reaches, the path's
//! case folded, the query left out.
//!
//! [`EndpointPolicy::check`] decides whether the league may call an endpoint; it is applied to the
//! agents the league calls at their contact endpoint (those registered through the gateway, labelled
//! `league.external`). Refused always:
//! unspecified (`0.0.0.0`, `::`), link-local (`169.254.0.0/16` — cloud metadata — and `fe80::/10`),
//! multicast and broadcast addresses, and the league's own service addresses (the manager's gRPC port,
//! its database, and whatever `LEAGUE_ENDPOINT_REFUSED` adds: the gateway's ports in compose and
//! Kubernetes). A service on a loopback address (or on every address, `0.0.0.0`) is refused on every
//! loopback spelling: `127.0.0.1`, any other `127.x.y.z`, `[::1]`, `localhost`, the mapped forms. An IPv6
//! address that carries an IPv4 address is judged as that IPv4 address: IPv4-mapped (`::ffff:a.b.c.d`,
//! also written `::ffff:a9fe:a9fe`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
//! (`::a.b.c.d`), NAT64 (`64:ff9b::/96`), 6to4 (`2002::/16`, the IPv4 address in bits 16–47) and
//! Teredo (`2001::/32`, the client's IPv4 address inverted in the last 32 bits). Loopback is allowed unless `LEAGUE_ENDPOINT_ALLOW_LOOPBACK=false` (local runs play on
//! loopback; the compose and Kubernetes defaults refuse it). With `LEAGUE_ENDPOINT_ALLOWED_NETWORKS`
//! set, every other address must be in one of those networks.
//!
//! A host name is resolved when the agent registers and each of its addresses must pass. It is not
//! pinned: a name that later resolves elsewhere (DNS rebinding) is called where it then points. The
//! registration check stops honest mistakes and the plain attacks (a literal metadata address, the
//! league's own ports); against rebinding the deployment's egress rules are the bound (docs/reliability.md).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use league_proto::ErrorCode;
use url::{Host, Url};

use crate::error::{ManagerResult, reject};

/// The longest a registration waits for a host name to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// A contact endpoint in canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    url: Url,
}

impl Endpoint {
    pub fn parse(field: &str, text: &str) -> ManagerResult<Endpoint> {
        let invalid = |why: &str| {
            reject(
                ErrorCode::InvalidMessageFormat,
                format!("{field} {text:?} is not usable: {why}"),
            )
        };
        // The scheme is read case-insensitively (RFC 3986 §3.1): `Url` writes it in lower case.
        let mut url = Url::parse(text.trim()).map_err(|error| invalid(&error.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("it must be an http(s) URL"));
        }
        if url.host().is_none() {
            return Err(invalid("it has no host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("it must not carry a user name or password"));
        }
        if url.port() == Some(0) {
            return Err(invalid("port 0"));
        }
        if url.fragment().is_some() {
            return Err(invalid("it must not have a fragment"));
        }
        let path = url.path().trim_end_matches('/').to_owned();
        url.set_path(&path);
        Ok(Endpoint { url })
    }

    /// The canonical form.
    pub fn as_str(&self) -> &str {
        let text = self.url.as_str();
        // `Url` writes an empty path as "/"; the canonical form has no trailing slash at all.
        if self.url.path() == "/" && self.url.query().is_none() {
            text.strip_suffix('/').unwrap_or(text)
        } else {
            text
        }
    }

    pub(crate) fn url(&self) -> &Url {
        &self.url
    }

    /// The port, given or the scheme's default.
    pub(crate) fn port(&self) -> u16 {
        self.url.port_or_known_default().unwrap_or(80)
    }

    /// The addresses the endpoint reaches now: its own, or those its host name resolves to (none when
    /// the name does not resolve).
    pub async fn addresses(&self) -> Vec<IpAddr> {
        match self.url.host() {
            Some(Host::Ipv4(ip)) => vec![ip.into()],
            Some(Host::Ipv6(ip)) => vec![ip.into()],
            Some(Host::Domain(name)) => resolve(name, self.port()).await.unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

async fn resolve(name: &str, port: u16) -> Option<Vec<IpAddr>> {
    let lookup = tokio::net::lookup_host((name, port));
    let addresses = tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await.ok()?.ok()?;
    let addresses: Vec<IpAddr> = addresses.map(|address| address.ip()).collect();
    (!addresses.is_empty()).then_some(addresses)
}

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    pub fn parse(text: &str) -> Option<Network> {
        let (address, prefix) = text.trim().split_once('/')?;
        let address: IpAddr = address.parse().ok()?;
        let prefix: u8 = prefix.parse().ok()?;
        let bits = if address.is_ipv4() { 32 } else { 128 };
        (prefix <= bits).then_some(Network { address, prefix })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.address, ip) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
                u32::from(network) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(network), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
                u128::from(network) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// Where contact endpoints may point.
#[derive(Debug, Clone, Default)]
pub struct EndpointPolicy {
    pub allow_loopback: bool,
    /// Empty: any address not refused.
    pub allowed_networks: Vec<Network>,
    /// The league's own services, `host:port` (a name is resolved when an endpoint is checked).
    pub refused: Vec<String>,
}

impl EndpointPolicy {
    /// Whether the league may call `endpoint`, which reaches `addresses` ([`Endpoint::addresses`]).
    pub async fn check(&self, endpoint: &Endpoint, addresses: &[IpAddr]) -> ManagerResult<()> {
        if addresses.is_empty() {
            return Err(reject(
                ErrorCode::InvalidMessageFormat,
                format!("the host of {} does not resolve", endpoint.as_str()),
            ));
        }
        let port = endpoint.port();
        let refused = self.refused_addresses().await;
        for &ip in addresses {
            let ip = canonical(ip);
            let why = if ip.is_unspecified() {
                Some("an unspecified address")
            } else if ip.is_multicast() || ip == IpAddr::from([255, 255, 255, 255]) {
                Some("a multicast or broadcast address")
            } else if is_link_local(ip) {
                Some("a link-local address")
            } else if refused
                .iter()
                .any(|service| service.port() == port && same_host(service.ip(), ip))
            {
                Some("one of the league's own services")
            } else if ip.is_loopback() && !self.allow_loopback {
                Some("a loopback address, which this league does not call")
            } else if !ip.is_loopback()
                && !self.allowed_networks.is_empty()
                && !self.allowed_networks.iter().any(|network| network.contains(ip))
            {
                Some("outside the networks this league calls")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(reject(
                    ErrorCode::PermissionDenied,
                    format!(
                        "contact endpoint {} is not allowed: {ip} is {why}",
                        endpoint.as_str()
                    ),
                ));
            }
        }
        Ok(())
    }

    async fn refused_addresses(&self) -> Vec<SocketAddr> {
        let mut addresses = Vec::new();
        for entry in &self.refused {
            let Some((host, port)) = entry.rsplit_once(':') else {
                continue;
            };
            let Ok(port) = port.parse::<u16>() else {
                continue;
            };
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let ips = match host.parse::<IpAddr>() {
                Ok(ip) if ip.is_unspecified() => {
                    vec![[127, 0, 0, 1].into(), std::net::Ipv6Addr::LOCALHOST.into()]
                }
                Ok(ip) => vec![ip],
                // A name that resolves to nothing (a service not deployed here) refuses no address.
                Err(_) => resolve(host, port).await.unwrap_or_default(),
            };
            addresses.extend(ips.into_iter().map(|ip| SocketAddr::new(canonical(ip), port)));
        }
        addresses
    }
}

/// An IPv6 address carrying an IPv4 address is that IPv4 address (see the module's documentation);
/// any other address is itself.
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    let IpAddr::V6(v6) = ip else {
        return ip;
    };
    let segments = v6.segments();
    let octets = v6.octets();
    let last_four = || IpAddr::from([octets[12], octets[13], octets[14], octets[15]]);
    match segments {
        // IPv4-mapped, ::ffff:a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff, _, _] => last_four(),
        // IPv4-translated (SIIT), ::ffff:0:a.b.c.d.
        [0, 0, 0, 0, 0xffff, 0, _, _] => last_four(),
        // IPv4-compatible, ::a.b.c.d; `::` and `::1` are IPv6's own unspecified and loopback addresses.
        [0, 0, 0, 0, 0, 0, _, _] if u128::from(v6) > 1 => last_four(),
        // NAT64's well-known prefix, 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => last_four(),
        // Teredo, 2001:0000::/32: the client's IPv4 address, each bit inverted, in the last 32 bits.
        [0x2001, 0, .., high, low] => IpAddr::from([
            !(high >> 8) as u8,
            !(high & 0xff) as u8,
            !(low >> 8) as u8,
            !(low & 0xff) as u8,
        ]),
        // 6to4, 2002:AABB:CCDD::/48.
        [0x2002, high, low, ..] => IpAddr::from([
            (high >> 8) as u8,
            (high & 0xff) as u8,
            (low >> 8) as u8,
            (low & 0xff) as u8,
        ]),
        _ => ip,
    }
}

/// Whether an endpoint at `ip` reaches the service listening at `service`: the same address, or any
/// loopback address for a service on loopback or on every address of this host.
fn same_host(service: IpAddr, ip: IpAddr) -> bool {
    service == ip || ((service.is_loopback() || service.is_unspecified()) && ip.is_loopback())
}

fn is_link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical_form(text: &str) -> Option<String> {
        Endpoint::parse("contact_endpoint", text)
            .ok()
            .map(|endpoint| endpoint.as_str().to_owned())
    }

    #[test]
    fn spellings_of_one_endpoint_are_one_endpoint() {
        let canonical = Some("http://localhost:9/x".to_owned());
        assert_eq!(canonical_form("http://localhost:9/x"), canonical);
        assert_eq!(canonical_form("http://localhost:9/x/"), canonical);
        assert_eq!(canonical_form("http://LOCALHOST:9/x"), canonical);
        assert_eq!(canonical_form("HTTP://LocalHost:9/x//"), canonical);
        assert_eq!(canonical_form("http://host:80/"), Some("http://host".to_owned()));
        assert_eq!(
            canonical_form("https://host:443/mcp"),
            Some("https://host/mcp".to_owned())
        );
    }

    #[test]
    fn unusable_endpoints_are_refused() {
        for text in [
            "http://localhost:99999/x",
            "http://user:pass@localhost:9/x",
            "http://user@localhost:9/x",
            "ftp://localhost/x",
            "localhost:9",
            "http://localhost:0/x",
            "http://localhost:9/x#frag",
        ] {
            assert_eq!(canonical_form(text), None, "{text}");
        }
    }

    #[test]
    fn networks_contain_their_addresses() {
        let network = Network::parse("10.0.0.0/8").expect("network");
        assert!(network.contains([10, 1, 2, 3].into()));
        assert!(!network.contains([11, 0, 0, 1].into()));
        assert!(
            Network::parse("0.0.0.0/0")
                .expect("all")
                .contains([8, 8, 8, 8].into())
        );
        assert!(Network::parse("10.0.0.0/33").is_none());
        assert!(
            Network::parse("fd00::/8")
                .expect("v6")
                .contains("fd12::1".parse().expect("ip"))
        );
    }

    #[tokio::test]
    async fn the_policy_refuses_what_the_league_must_not_call() {
        let policy = EndpointPolicy {
            allow_loopback: true,
            allowed_networks: Vec::new(),
            refused: vec!["127.0.0.1:5432".to_owned(), "0.0.0.0:50051".to_owned()],
        };
        let check = |text: &str| {
            let endpoint = Endpoint::parse("contact_endpoint", text).expect("parses");
            let policy = policy.clone();
            async move {
                let addresses = endpoint.addresses().await;
                policy.check(&endpoint, &addresses).await.is_ok()
            }
        };
        assert!(check("http://127.0.0.1:8101/mcp").await);
        assert!(check("http://localhost:8101/mcp").await);
        assert!(
            check("HTTP://127.0.0.1:8101/mcp").await,
            "the scheme's case does not matter"
        );
        assert!(check("http://[::1]:8101/mcp").await);
        assert!(check("http://[2001:db8::1]:8101/mcp").await);
        for refused in [
            "http://169.254.169.254/latest/meta-data",
            "http://[fe80::1]:80/x",
            "http://0.0.0.0:8101/x",
            "http://224.0.0.1:80/x",
            "http://127.0.0.1:5432/x",
            "http://localhost:50051/x",
            "http://[::ffff:169.254.169.254]/x",
            "http://[::169.254.169.254]/x",
            "http://[::ffff:0:a9fe:a9fe]/x",
            "http://[::ffff:a9fe:a9fe]/x",
            "http://[64:ff9b::a9fe:a9fe]/x",
            "http://[2002:a9fe:a9fe::1]/x",
            // Teredo: the client's address inverted (169.254.169.254, 127.0.0.1).
            "http://[2001:0:4136:e378:8000:63bf:5601:5601]/x",
            "http://[2001::80ff:fffe]:5432/x",
            "http://[::1]:5432/x",
            "http://127.0.0.2:5432/x",
            "http://[::ffff:127.0.0.1]:5432/x",
            "http://[::127.0.0.1]:50051/x",
            "http://[::1]:50051/x",
            "HTTP://169.254.169.254/x",
        ] {
            assert!(!check(refused).await, "{refused}");
        }
        let strict = EndpointPolicy {
            allow_loopback: false,
            ..policy.clone()
        };
        let endpoint = Endpoint::parse("contact_endpoint", "http://127.0.0.1:8101/mcp").expect("parses");
        let addresses = endpoint.addresses().await;
        assert!(strict.check(&endpoint, &addresses).await.is_err());
    }
}
