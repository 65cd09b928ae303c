//! The league's one TLS client (docs/adr/0043-one-tls-stack.md): rustls on ring, trusting the system's
//! roots and, for operators with a private CA, the extra roots of `LEAGUE_EXTRA_ROOTS`. The gateway's
//! calls to agents and the `llm` strategy's calls to its model go through it.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};
use serde::Deserialize;

/// `LEAGUE_EXTRA_ROOTS`, read by every service that calls out over https.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TlsConfig {
    /// `LEAGUE_EXTRA_ROOTS`: a PEM file of CA certificates trusted besides the system's.
    pub extra_roots: Option<PathBuf>,
}

impl TlsConfig {
    /// The client configuration: the system's roots and the extra ones. An extra-roots file that cannot
    /// be read, or holds no certificate rustls takes, is an error: the operator meant to trust something.
    pub fn client_config(&self) -> anyhow::Result<ClientConfig> {
        let mut roots = RootCertStore::empty();
        let system = rustls_native_certs::load_native_certs();
        for error in &system.errors {
            tracing::warn!(%error, "a system root certificate could not be loaded");
        }
        let (_, unusable) = roots.add_parsable_certificates(system.certs);
        if unusable > 0 {
            tracing::warn!(
                unusable,
                "system root certificates rustls cannot use were left out"
            );
        }
        if let Some(path) = &self.extra_roots {
            let certificates = CertificateDer::pem_file_iter(path)
                .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
                .with_context(|| format!("LEAGUE_EXTRA_ROOTS: reading {}", path.display()))?;
            anyhow::ensure!(
                !certificates.is_empty(),
                "LEAGUE_EXTRA_ROOTS: {} holds no PEM certificate",
                path.display()
            );
            for certificate in certificates {
                roots
                    .add(certificate)
                    .with_context(|| format!("LEAGUE_EXTRA_ROOTS: a certificate in {}", path.display()))?;
            }
        }
        if roots.is_empty() {
            tracing::warn!(
                "no root certificates: no https endpoint can be verified (install the system's CA \
                 certificates, or set LEAGUE_EXTRA_ROOTS)"
            );
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("the TLS protocol versions")?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(config)
    }
}

/// `http` (its settings: Nagle, connect timeout) for `http://` URLs, and TLS over it with `tls` for
/// `https://` URLs; HTTP/1.1 both ways.
pub fn https_connector(tls: ClientConfig, mut http: HttpConnector) -> HttpsConnector<HttpConnector> {
    // The connector takes the TLS layer's URLs as well as plain ones.
    http.enforce_http(false);
    HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http)
}

/// What an error's chain says about TLS, in words an operator acts on: a certificate that is not trusted
/// (and how to trust a private CA), or another TLS failure; `None` when TLS is not what failed.
pub fn failure(error: &(dyn std::error::Error + 'static)) -> Option<TlsFailure> {
    rustls_error(error).map(|tls| match tls {
        rustls::Error::InvalidCertificate(_) => TlsFailure::UntrustedCertificate(format!(
            "its TLS certificate is not trusted ({tls}); a certificate from a private CA is trusted \
             by adding that CA to LEAGUE_EXTRA_ROOTS"
        )),
        other => TlsFailure::Other(format!("TLS failed: {other}")),
    })
}

/// The TLS layer's own error somewhere in an error's chain: `None` when TLS is not what failed. For
/// callers whose remedy is not `LEAGUE_EXTRA_ROOTS` (Postgres names its CA in `DATABASE_URL`).
pub fn rustls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        // An I/O error hides the error it carries from `source()` (it answers with that error's
        // source): go into it instead. The TLS layer's errors come as I/O errors inside I/O errors.
        let inner = error
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        next = inner.or_else(|| error.source());
    }
    None
}

/// Why TLS failed, said for an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsFailure {
    /// The peer's certificate does not verify against the roots: unknown issuer, expired, another name.
    UntrustedCertificate(String),
    /// Any other TLS failure (no protocol version in common, a broken handshake).
    Other(String),
}

impl std::fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UntrustedCertificate(text) | Self::Other(text) => f.write_str(text),
        }
    }
}

/// An error and every error under it, joined: hyper's own words ("client error (Connect)") say nothing
/// until its sources do.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(error) = next {
        let said = error.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        next = error.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_roots_that_say_nothing_are_refused_with_the_file_named() {
        let dir = std::env::temp_dir().join(format!("league-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("written");
        for (path, says) in [
            (empty.clone(), "holds no PEM certificate"),
            (dir.join("missing.pem"), "reading"),
        ] {
            let refused = TlsConfig {
                extra_roots: Some(path.clone()),
            }
            .client_config()
            .expect_err("refused");
            let text = format!("{refused:#}");
            assert!(
                text.contains("LEAGUE_EXTRA_ROOTS") && text.contains(says),
                "{text}"
            );
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_certificate_error_inside_an_io_error_is_found() {
        let certificate = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::other(std::io::Error::new(std::io::ErrorKind::InvalidData, certificate));
        let found = failure(&io).expect("a TLS failure");
        assert!(matches!(found, TlsFailure::UntrustedCertificate(_)), "{found}");
        assert!(found.to_string().contains("LEAGUE_EXTRA_ROOTS"), "{found}");
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(failure(&refused), None);
    }
}
