//! The `llm` strategy: asks an OpenAI-compatible chat-completions endpoint for even or odd, given the
//! opponent's past choices. Every failure — no answer within the timeout, an HTTP error, a body that is
//! not a chat completion, an answer that is not exactly "even" or "odd" — makes the bot play adaptive
//! instead, so the model can only make the bot better, never make it lose technically.
//!
//! Configured by `LEAGUE_LLM_URL` (the full `…/v1/chat/completions` URL; plain `http://`, e.g. a local
//! model server or a TLS-terminating proxy), `LEAGUE_LLM_MODEL`, `LEAGUE_LLM_API_KEY` (optional) and
//! `LEAGUE_LLM_TIMEOUT` (default 2 s). Without a URL and a model the strategy is unavailable.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
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
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            llm_url: None,
            llm_model: None,
            llm_api_key: None,
            llm_timeout: Duration::from_secs(2),
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
    http: Client<HttpConnector, Full<Bytes>>,
}

impl LlmClient {
    /// The client `config` describes, `None` when it describes none, an error when it is unusable.
    pub fn from_config(config: &LlmConfig) -> anyhow::Result<Option<Self>> {
        let (Some(url), Some(model)) = (&config.llm_url, &config.llm_model) else {
            return Ok(None);
        };
        anyhow::ensure!(
            url.starts_with("http://"),
            "LEAGUE_LLM_URL must be an http:// URL (the player host speaks no TLS; put a local proxy in \
             front of an https endpoint), got {url:?}"
        );
        anyhow::ensure!(
            !config.llm_timeout.is_zero(),
            "LEAGUE_LLM_TIMEOUT must be more than zero"
        );
        Ok(Some(Self {
            url: url.clone(),
            model: model.clone(),
            api_key: config.llm_api_key.clone(),
            timeout: config.llm_timeout,
            http: Client::builder(TokioExecutor::new()).build_http(),
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
                .map_err(|error| LlmError::Request(error.to_string()))?;
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
        let https = LlmConfig {
            llm_url: Some("https://api.example/v1/chat/completions".into()),
            llm_model: Some("m".into()),
            ..LlmConfig::default()
        };
        assert!(LlmClient::from_config(&https).is_err());
    }
}
