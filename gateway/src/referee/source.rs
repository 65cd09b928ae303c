//! Where a request comes from, for the one caller known by its address: a referee that pulls its matches
//! without a token, whose registered contact endpoint must be at the address it calls from
//! ([`super::pull`]). The address is kept for the request's task by a layer on the public router.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;

tokio::task_local! {
    static SOURCE: IpAddr;
}

/// The layer: every request on the public port is handled knowing its source address.
pub async fn remember(ConnectInfo(peer): ConnectInfo<SocketAddr>, request: Request, next: Next) -> Response {
    SOURCE.scope(peer.ip().to_canonical(), next.run(request)).await
}

/// The address the request being handled comes from (unknown outside a request's task).
pub fn current() -> Option<IpAddr> {
    SOURCE.try_with(|source| *source).ok()
}
