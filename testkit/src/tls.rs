//! TLS for tests: the test CA and the server certificate it signed (testkit/tls/, README there says how
//! they were made), and serving a router over https on a free loopback port with them. A client that
//! trusts [`CA`] (`LEAGUE_EXTRA_ROOTS`, `sslrootcert`) reaches such a server; one that does not meets an
//! untrusted certificate.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use league_runtime::Shutdown;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// The test CA's certificate (PEM): give it as the extra roots to trust the test servers.
pub const CA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tls/ca.pem");
/// The server certificate (PEM) for localhost, 127.0.0.1 and ::1, signed by [`CA`].
pub const SERVER_CERTIFICATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tls/server.pem");
/// The server certificate's private key (PEM, PKCS #8).
pub const SERVER_KEY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tls/server.key");

/// A TLS server configuration presenting the test server certificate, HTTP/1.1.
pub fn server_config() -> rustls::ServerConfig {
    let certificate = CertificateDer::from_pem_file(SERVER_CERTIFICATE).expect("the test certificate");
    let key = PrivateKeyDer::from_pem_file(SERVER_KEY).expect("the test key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![certificate], key)
        .expect("the test certificate and key match");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}

/// Serves `router` over https (the test certificate) on 127.0.0.1:0 until the returned `Shutdown` is
/// triggered; the address it listens on. A client that refuses the certificate ends only its own
/// connection.
pub async fn serve_tls_on_loopback(router: axum::Router) -> (SocketAddr, Shutdown) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let acceptor = TlsAcceptor::from(Arc::new(server_config()));
    let shutdown = Shutdown::new();
    let signal = shutdown.signal();
    tokio::spawn(async move {
        let accepting = async {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, router) = (acceptor.clone(), router.clone());
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let service = TowerToHyperService::new(router);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        };
        tokio::select! {
            () = accepting => {}
            () = signal.wait() => {}
        }
    });
    (addr, shutdown)
}
