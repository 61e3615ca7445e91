//! Who may talk to `dynaslice serve`. A web page on another origin, or a
//! page whose DNS name was rebound to 127.0.0.1, is an attacker: every
//! request must name an allowed `Host` (421 otherwise, the answer the best
//! local dev servers give a rebound name), every API call must come from
//! the page's own origin and carry the per-launch token in a header a
//! simple cross-site request cannot set, and every answer carries headers
//! that keep other origins from reading, framing or sniffing it.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use dynaslice_core::Code;
use sha2::Digest as _;

use super::ApiError;
use crate::error::HostError;

/// The header carrying the per-launch token on every API call.
pub const TOKEN_HEADER: &str = "x-dynaslice-token";

/// The checks of one server: its hosts, origins, token and page policy.
#[derive(Clone, Debug)]
pub(super) struct Guard {
    hosts: BTreeSet<String>,
    origins: BTreeSet<String>,
    token: String,
    csp: HeaderValue,
}

impl Guard {
    /// The guard of a server listening on `addr`, also answering to the
    /// names in `extra_hosts` (`name` for any port, or `name:port`), with
    /// `token` as its secret and `index_html` the page it serves (its inline
    /// import map is allowed by hash, nothing else inline).
    pub(super) fn new(
        addr: SocketAddr,
        extra_hosts: &[String],
        token: String,
        index_html: &str,
        connect: &[String],
    ) -> Result<Self, HostError> {
        if token.len() < MIN_TOKEN_LEN
            || !token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(HostError::Input(format!(
                "the token must be at least {MIN_TOKEN_LEN} characters of A-Z, a-z, 0-9, - and _ \
                 (it travels in a URL)"
            )));
        }
        let hosts = hosts(addr, extra_hosts);
        let origins = origins(&hosts);
        let csp = content_security_policy(index_html, connect);
        Ok(Self {
            hosts,
            origins,
            token,
            csp: HeaderValue::from_str(&csp)
                .map_err(|e| HostError::Internal(format!("content security policy: {e}")))?,
        })
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| self.hosts.contains(&h.to_ascii_lowercase()))
    }

    /// Refuses a request another site made or could read the answer of.
    fn same_origin(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let refused = |why: &str| {
            Err(ApiError::new(
                Code::CrossOriginRefused,
                format!("{why}; the API answers only its own page"),
            ))
        };
        if let Some(site) = headers.get("sec-fetch-site")
            && !matches!(site.to_str(), Ok("same-origin" | "none"))
        {
            return refused("the request came from another site");
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let allowed = origin
                .to_str()
                .is_ok_and(|o| self.origins.contains(&o.to_ascii_lowercase()));
            if !allowed {
                return refused("the request came from another origin");
            }
        }
        Ok(())
    }

    fn token_given(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(given) = headers.get(TOKEN_HEADER) else {
            return Err(ApiError::new(
                Code::TokenRequired,
                "the API needs this launch's token: open the link dynaslice serve printed",
            ));
        };
        if !constant_time_eq(given.as_bytes(), self.token.as_bytes()) {
            return Err(ApiError::new(
                Code::TokenInvalid,
                "the token is not this launch's: open the link dynaslice serve printed",
            ));
        }
        Ok(())
    }
}

/// Tokens shorter than this are refused: 16 characters of base64url are
/// 96 bits, beyond guessing through a browser.
const MIN_TOKEN_LEN: usize = 16;

/// The `Host` values the server answers: its listen address and loopback
/// names on its port, and `extra_hosts` (`name:port` as given, a bare name
/// or `[v6]` on its port).
fn hosts(addr: SocketAddr, extra_hosts: &[String]) -> BTreeSet<String> {
    let port = addr.port();
    let mut hosts: BTreeSet<String> = [
        addr.to_string(),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ]
    .into();
    for name in extra_hosts {
        let name = name.to_ascii_lowercase();
        let has_port = name.rsplit_once(':').is_some_and(|(host, p)| {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !host.ends_with(':')
        }) && (!name.starts_with('[') || name.contains("]:"));
        if has_port {
            hosts.insert(name);
        } else {
            hosts.insert(format!("{name}:{port}"));
        }
    }
    hosts
}

fn origins(hosts: &BTreeSet<String>) -> BTreeSet<String> {
    hosts.iter().map(|h| format!("http://{h}")).collect()
}

/// The origins the page is served from (`http://` and each `Host` value
/// the server answers).
#[cfg(feature = "embedded")]
pub(super) fn page_origins(addr: SocketAddr, extra_hosts: &[String]) -> BTreeSet<String> {
    origins(&hosts(addr, extra_hosts))
}

/// A fresh per-launch token: 32 random bytes from the operating system,
/// base64url (43 characters).
pub fn fresh_token() -> Result<String, HostError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| HostError::Internal(format!("no randomness for the token: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The page's policy: its own scripts and WebAssembly, its inline import
/// map by hash, nothing from elsewhere (but the origins in `connect`, the S3
/// endpoints it uploads straight to), never framed.
fn content_security_policy(index_html: &str, connect: &[String]) -> String {
    let connect: String = connect.iter().map(|origin| format!(" {origin}")).collect();
    let scripts: String = inline_scripts(index_html)
        .map(|text| {
            let digest = sha2::Sha256::digest(text.as_bytes());
            let hash = base64::engine::general_purpose::STANDARD.encode(digest);
            format!(" 'sha256-{hash}'")
        })
        .collect();
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{scripts}; \
         style-src 'self'; img-src 'self' data: blob:; connect-src 'self'{connect}; \
         worker-src 'self'; object-src 'none'; base-uri 'none'; \
         frame-ancestors 'none'; form-action 'none'"
    )
}

/// The text of each inline `<script>` of the page (those without `src`).
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    html.split("<script").skip(1).filter_map(|rest| {
        let (tag, body) = rest.split_once('>')?;
        let (text, _) = body.split_once("</script>")?;
        (!tag.contains("src=")).then_some(text)
    })
}

/// The middleware: checks the request, then stamps the answer.
pub(super) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let mut response = if !guard.host_allowed(headers) {
        ApiError::new(
            Code::HostNotAllowed,
            "this server does not answer to that host name",
        )
        .into_response()
    } else if request.uri().path().starts_with("/api/") {
        match guard
            .same_origin(headers)
            .and_then(|()| guard.token_given(headers))
        {
            Ok(()) => next.run(request).await,
            Err(refused) => refused.into_response(),
        }
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    let stamp = |headers: &mut HeaderMap, name: &'static str, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    stamp(headers, "x-content-type-options", "nosniff");
    stamp(headers, "cross-origin-resource-policy", "same-origin");
    stamp(headers, "referrer-policy", "no-referrer");
    stamp(headers, "x-frame-options", "DENY");
    headers.insert("content-security-policy", guard.csp.clone());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_import_map_is_hashed_and_external_scripts_are_not() {
        let html = r#"<script type="importmap">{"a":1}</script><script type="module" src="/x.js"></script>"#;
        let scripts: Vec<&str> = inline_scripts(html).collect();
        assert_eq!(scripts, [r#"{"a":1}"#]);
        // sha256 of {"a":1}, by `printf '{"a":1}' | openssl dgst -sha256 -binary | base64`.
        assert!(
            content_security_policy(html, &[])
                .contains("'sha256-AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI='")
        );
    }

    #[test]
    fn the_page_may_connect_to_its_own_origin_and_the_s3_endpoints_only() {
        let origins = ["http://127.0.0.1:8333".to_string()];
        let csp = content_security_policy("", &origins);
        assert!(
            csp.contains("connect-src 'self' http://127.0.0.1:8333;"),
            "{csp}"
        );
        assert!(content_security_policy("", &[]).contains("connect-src 'self';"));
    }

    #[test]
    fn hosts_are_the_listen_address_loopback_names_and_those_allowed() {
        let addr = "127.0.0.1:7878".parse().unwrap();
        let extra = ["box.local", "Proxy:9000", "[fd00::1]", "[fd00::2]:81"].map(String::from);
        let guard = Guard::new(addr, &extra, "a".repeat(20), "", &[]).unwrap();
        let hosts: Vec<&str> = guard.hosts.iter().map(String::as_str).collect();
        let expected = [
            "127.0.0.1:7878",
            "[::1]:7878",
            "[fd00::1]:7878",
            "[fd00::2]:81",
            "box.local:7878",
            "localhost:7878",
            "proxy:9000",
        ];
        assert_eq!(hosts, expected);
        assert!(Guard::new(addr, &[], "short".into(), "", &[]).is_err());
        assert!(Guard::new(addr, &[], "a+b/c=".repeat(4), "", &[]).is_err());
        assert!(Guard::new(addr, &[], fresh_token().unwrap(), "", &[]).is_ok());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abcdef", b"abcdef"));
        assert!(!constant_time_eq(b"abcdef", b"abcdeg"));
        assert!(!constant_time_eq(b"abcdef", b"abcde"));
    }
}
