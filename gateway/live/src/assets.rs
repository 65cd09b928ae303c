//! The page's HTML, JavaScript and CSS, embedded in the binary (nothing to build, nothing on disk), and
//! the headers every live-page response carries. Assets are linked as `/live/<file>?v=<version>`, the
//! version being a hash of their contents: a browser keeps them for a year and still picks up a new
//! release at once, because the page (always revalidated by its ETag) names the new version.

use std::sync::LazyLock;

use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

const PAGE: &str = include_str!("assets/index.html");
const FILES: &[(&str, &str, &str)] = &[
    (
        "live.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/live.js"),
    ),
    (
        "live.css",
        "text/css; charset=utf-8",
        include_str!("assets/live.css"),
    ),
];

/// Scripts, styles and connections only from the gateway itself; no inline script, no frames, no forms.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A hash of every asset: changes whenever one does.
static VERSION: LazyLock<String> = LazyLock::new(|| {
    let mut hash = Sha256::new();
    hash.update(PAGE);
    for (_, _, body) in FILES {
        hash.update(body);
    }
    hex_prefix(&hash.finalize())
});

static PAGE_HTML: LazyLock<String> = LazyLock::new(|| PAGE.replace("{{version}}", &VERSION));

fn hex_prefix(bytes: &[u8]) -> String {
    bytes.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn etag() -> String {
    format!("\"{}\"", *VERSION)
}

fn not_modified(headers: &HeaderMap) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tag| tag.as_bytes() == etag().as_bytes())
}

/// The page (the same document for `/` and `/leagues/<id>`: its script reads the address).
pub(crate) async fn page(headers: HeaderMap) -> Response {
    if not_modified(&headers) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag())]).into_response();
    }
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (header::CACHE_CONTROL, "no-cache".to_owned()),
            (header::ETAG, etag()),
        ],
        PAGE_HTML.as_str(),
    )
        .into_response()
}

/// A script or stylesheet; kept for a year when asked for by its current version.
pub(crate) async fn file(
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let Some((_, content_type, body)) = FILES.iter().find(|(file, _, _)| *file == name) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let current = query.as_deref() == Some(&format!("v={}", *VERSION));
    let cache = if current {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    if not_modified(&headers) {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag())]).into_response();
    }
    (
        [
            (header::CONTENT_TYPE, (*content_type).to_owned()),
            (header::CACHE_CONTROL, cache.to_owned()),
            (header::ETAG, etag()),
        ],
        *body,
    )
        .into_response()
}

/// The headers of every live-page response: the CSP, no MIME sniffing, no referrer, no framing.
pub(crate) async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_links_its_assets_by_version_and_has_no_inline_script() {
        assert!(PAGE_HTML.contains(&format!("/live/live.js?v={}", *VERSION)));
        assert!(PAGE_HTML.contains(&format!("/live/live.css?v={}", *VERSION)));
        assert!(!PAGE_HTML.contains("{{version}}"));
        // The CSP allows no inline script or style: the page must have none.
        assert!(!PAGE_HTML.contains("<script>"), "inline script");
        assert!(!PAGE_HTML.contains("style="), "inline style");
        assert!(!PAGE_HTML.contains("<style"), "inline style");
    }
}
