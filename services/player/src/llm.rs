//! The `llm` strategy: asks an OpenAI-compatible chat-completions endpoint for even or odd, given the
//! opponent's past choices. Every failure — no answer within the timeout, an HTTP error, a body that is
//! not a chat completion, an answer that is not exactly "even" or "odd" — makes the bot play adaptive
//! instead, so the model can only make the bot better, never make it lose technically. Who decided each
//! move, and why the model's answer was not used, is counted ([`crate::llm_moves`]).
//!
//! Configured by `LEAGUE_LLM_URL` (the full `…/v1/chat/completions` URL: `https://` for a hosted model,
//! its certificate verified against the system's roots and `LEAGUE_EXTRA_ROOTS`; `http://` for a local
//! model server), `LEAGUE_LLM_MODEL`, `LEAGUE_LLM_API_KEY` (optional) and `LEAGUE_LLM_TIMEOUT`
//! (default 2 s). Without a URL and a model the strategy is unavailable. The key is a secret: it is sent
//! only over TLS, or to this machine (a loopback address), and a configuration that would send it in
//! the clear across a network is refused.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use league_runtime::tls::{self, TlsConfig};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::parity::Parity;

/// The largest answer read: a chat completion of one word is far smaller.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// `LEAGUE_LLM_*`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
    pub llm_api_key: Option<SecretString>,
    #[serde(with = "humantime_serde")]
    pub llm_timeout: Duration,
    /// `LEAGUE_EXTRA_ROOTS`: CA certificates trusted besides the system's (a model behind a private CA).
    #[serde(flatten)]
    pub tls: TlsConfig,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            llm_url: None,
            llm_model: None,
            llm_api_key: None,
            llm_timeout: Duration::from_secs(2),
            tls: TlsConfig::default(),
        }
    }
}

/// Why the model's answer was not used.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the request failed: {0}")]
    Request(String),
    #[error("the endpoint answered HTTP {0}")]
    Status(u16),
    #[error("the answer is not a chat completion: {0}")]
    Malformed(String),
    #[error("the model answered {0:?}, not even or odd")]
    NotAParity(String),
}

/// A configured chat endpoint.
#[derive(Debug, Clone)]
pub struct LlmClient {
    url: String,
    model: String,
    api_key: Option<SecretString>,
    timeout: Duration,
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl LlmClient {
    /// The client `config` describes, `None` when it describes none, an error when it is unusable.
    pub fn from_config(config: &LlmConfig) -> anyhow::Result<Option<Self>> {
        let (Some(url), Some(model)) = (&config.llm_url, &config.llm_model) else {
            return Ok(None);
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|error| anyhow::anyhow!("LEAGUE_LLM_URL {url:?} is not a URL: {error}"))?;
        let tls_used = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => anyhow::bail!("LEAGUE_LLM_URL must be an https:// or http:// URL, got {url:?}"),
        };
        let host = uri
            .host()
            .ok_or_else(|| anyhow::anyhow!("LEAGUE_LLM_URL {url:?} names no host"))?;
        anyhow::ensure!(
            tls_used || config.llm_api_key.is_none() || is_loopback(host),
            "LEAGUE_LLM_API_KEY would be sent in the clear to {host}: use an https:// LEAGUE_LLM_URL \
             (a plain http:// one only for a model server on this machine: localhost, 127.0.0.1, [::1])"
        );
        anyhow::ensure!(
            !config.llm_timeout.is_zero(),
            "LEAGUE_LLM_TIMEOUT must be more than zero"
        );
        let connector = tls::https_connector(config.tls.client_config()?, HttpConnector::new());
        Ok(Some(Self {
            url: url.clone(),
            model: model.clone(),
            api_key: config.llm_api_key.clone(),
            timeout: config.llm_timeout,
            http: Client::builder(TokioExecutor::new()).build(connector),
        }))
    }

    /// The model's parity against `opponent_id`, whose past choices (oldest first) are `history`.
    pub async fn choose(&self, opponent_id: &str, history: &[Parity]) -> Result<Parity, LlmError> {
        let past = if history.is_empty() {
            "none yet".to_owned()
        } else {
            history
                .iter()
                .map(|parity| parity.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "max_tokens": 5,
            "messages": [
                {"role": "system", "content": "You play Even/Odd. A number from 1 to 10 is drawn; you win \
                    if you guessed its parity. Answer with exactly one word: even or odd."},
                {"role": "user", "content": format!(
                    "Your opponent {opponent_id} chose, oldest first: {past}. Your choice?"
                )},
            ],
        });
        let mut request =
            http::Request::post(&self.url).header(http::header::CONTENT_TYPE, "application/json");
        if let Some(key) = &self.api_key {
            request = request.header(
                http::header::AUTHORIZATION,
                format!("Bearer {}", key.expose_secret()),
            );
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|error| LlmError::Request(error.to_string()))?;
        let exchange = async {
            let response = self
                .http
                .request(request)
                .await
                .map_err(|error| match tls::failure(&error) {
                    Some(failure) => LlmError::Request(failure.to_string()),
                    None => LlmError::Request(tls::chain(&error)),
                })?;
            let status = response.status();
            let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|error| LlmError::Request(error.to_string()))?
                .to_bytes();
            Ok::<_, LlmError>((status, body))
        };
        let (status, body) = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| LlmError::Timeout(self.timeout))??;
        if !status.is_success() {
            return Err(LlmError::Status(status.as_u16()));
        }
        parse_answer(&body)
    }
}

/// Whether `host` (a URL's host: brackets around an IPv6 address) is this machine.
fn is_loopback(host: &str) -> bool {
    let address = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || address
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

/// The parity in a chat completion's first choice: "even" or "odd", case and surrounding punctuation
/// aside, and nothing else.
pub fn parse_answer(body: &[u8]) -> Result<Parity, LlmError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|error| LlmError::Malformed(error.to_string()))?;
    let content = value
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| LlmError::Malformed("no choices[0].message.content".to_owned()))?;
    let word = content
        .trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    match word.as_str() {
        "even" => Ok(Parity::Even),
        "odd" => Ok(Parity::Odd),
        _ => Err(LlmError::NotAParity(content.chars().take(80).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(content: &str) -> Vec<u8> {
        json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn only_a_clear_even_or_odd_is_taken() {
        assert_eq!(parse_answer(&completion("Odd.")).ok(), Some(Parity::Odd));
        assert_eq!(parse_answer(&completion(" even\n")).ok(), Some(Parity::Even));
        assert!(matches!(
            parse_answer(&completion("maybe even")),
            Err(LlmError::NotAParity(_))
        ));
        assert!(matches!(parse_answer(b"not json"), Err(LlmError::Malformed(_))));
        assert!(matches!(
            parse_answer(br#"{"choices": []}"#),
            Err(LlmError::Malformed(_))
        ));
    }

    #[test]
    fn without_a_url_and_a_model_there_is_no_client() {
        assert!(LlmClient::from_config(&LlmConfig::default()).is_ok_and(|client| client.is_none()));
    }

    fn configured(url: &str, key: Option<&str>) -> anyhow::Result<Option<LlmClient>> {
        LlmClient::from_config(&LlmConfig {
            llm_url: Some(url.into()),
            llm_model: Some("m".into()),
            llm_api_key: key.map(|key| SecretString::from(key.to_owned())),
            ..LlmConfig::default()
        })
    }

    #[test]
    fn the_key_goes_only_over_tls_or_to_this_machine() {
        for url in [
            "https://api.example/v1/chat/completions",
            "http://127.0.0.1:8080/v1/chat/completions",
            "http://127.1.2.3/v1/chat/completions",
            "http://localhost:8080/v1/chat/completions",
            "http://[::1]:8080/v1/chat/completions",
        ] {
            assert!(
                configured(url, Some("k")).is_ok_and(|client| client.is_some()),
                "{url}"
            );
        }
        // Without a key nothing secret travels: a plain model server elsewhere on the network is fine.
        assert!(configured("http://models.internal:8080/v1/chat/completions", None).is_ok());
        for url in [
            "http://models.internal:8080/v1/chat/completions",
            "http://10.0.0.5/v1/chat/completions",
            "http://localhost.example/v1/chat/completions",
        ] {
            let refused = configured(url, Some("k")).err().map(|error| error.to_string());
            let refused = refused.unwrap_or_else(|| panic!("{url} accepted"));
            assert!(
                refused.contains("in the clear") && refused.contains("https://"),
                "{refused}"
            );
        }
        for url in ["ftp://host/x", "api.example/v1", "not a url"] {
            assert!(configured(url, None).is_err(), "{url}");
        }
    }
}
