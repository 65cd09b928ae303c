//! Who decided an `llm` bot's moves: the model, or its fallback (adaptive) and why. Counted per bot in
//! the host (read by tests and by [`crate::PlayerHost::llm_moves`]) and as the process's metric
//! `league_player_llm_moves_total{player_id,decided_by,reason}`, which `league run` reads from the
//! player host's `/metrics` at the end of a league for its summary and results folder.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use league_runtime::metrics::register;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use crate::llm::LlmError;

/// The metric's name as rendered (counters get `_total`).
pub const METRIC: &str = "league_player_llm_moves_total";

/// Who decided one move of an `llm` bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decider {
    /// The model answered even or odd in time.
    Model,
    /// The model gave no answer within `LEAGUE_LLM_TIMEOUT`.
    Slow,
    /// The endpoint could not be reached or answered an HTTP error.
    Down,
    /// The answer was not a chat completion, or not exactly even or odd.
    Nonsense,
    /// The match is of a game the model is not asked about (only even_odd is).
    OtherGame,
}

impl Decider {
    pub const ALL: [Decider; 5] = [
        Decider::Model,
        Decider::Slow,
        Decider::Down,
        Decider::Nonsense,
        Decider::OtherGame,
    ];

    /// Why the model's answer was not used, as a fallback reason.
    pub fn of(error: &LlmError) -> Decider {
        match error {
            LlmError::Timeout(_) => Decider::Slow,
            LlmError::Request(_) | LlmError::Status(_) => Decider::Down,
            LlmError::Malformed(_) | LlmError::NotAParity(_) => Decider::Nonsense,
        }
    }

    /// The metric's `decided_by` label: `model` or `fallback`.
    pub fn decided_by(self) -> &'static str {
        match self {
            Decider::Model => "model",
            _ => "fallback",
        }
    }

    /// The metric's `reason` label (and the results' column name): `answered`, `slow`, `down`,
    /// `nonsense` or `other_game`.
    pub fn reason(self) -> &'static str {
        match self {
            Decider::Model => "answered",
            Decider::Slow => "slow",
            Decider::Down => "down",
            Decider::Nonsense => "nonsense",
            Decider::OtherGame => "other_game",
        }
    }

    /// The decider named by a metric's labels.
    pub fn from_labels(decided_by: &str, reason: &str) -> Option<Decider> {
        Decider::ALL
            .into_iter()
            .find(|decider| decider.decided_by() == decided_by && decider.reason() == reason)
    }
}

/// One bot's moves by who decided them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmMoves(pub BTreeMap<Decider, u64>);

impl LlmMoves {
    pub fn count(&mut self, decider: Decider) {
        *self.0.entry(decider).or_default() += 1;
    }

    pub fn of(&self, decider: Decider) -> u64 {
        self.0.get(&decider).copied().unwrap_or_default()
    }

    /// Moves the fallback decided, whatever the reason.
    pub fn fallbacks(&self) -> u64 {
        self.0
            .iter()
            .filter(|(decider, _)| **decider != Decider::Model)
            .map(|(_, count)| count)
            .sum()
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Labels {
    player_id: String,
    decided_by: &'static str,
    reason: &'static str,
}

static MOVES: LazyLock<Family<Labels, Counter>> = LazyLock::new(|| {
    let family = Family::default();
    register(
        METRIC.trim_end_matches("_total"),
        "Moves of llm bots, by player, by who decided them (model or fallback) and the fallback's reason (slow, down, nonsense, other_game)",
        family.clone(),
    );
    family
});

/// Counts one move of `player_id` in the process's metric.
pub fn record(player_id: &str, decider: Decider) {
    MOVES
        .get_or_create(&Labels {
            player_id: player_id.to_owned(),
            decided_by: decider.decided_by(),
            reason: decider.reason(),
        })
        .inc();
}

/// Each player's moves read back from `/metrics` text (OpenMetrics): the lines of [`METRIC`].
pub fn parse_metrics(text: &str) -> BTreeMap<String, LlmMoves> {
    let mut all: BTreeMap<String, LlmMoves> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(METRIC).and_then(|rest| rest.strip_prefix('{')) else {
            continue;
        };
        let Some((labels, value)) = rest.split_once("} ") else {
            continue;
        };
        let Ok(value) = value.split_whitespace().next().unwrap_or_default().parse::<u64>() else {
            continue;
        };
        let label = |name: &str| {
            labels.split(',').find_map(|pair| {
                let (key, quoted) = pair.split_once('=')?;
                (key == name).then(|| quoted.trim_matches('"').to_owned())
            })
        };
        let (Some(player_id), Some(decided_by), Some(reason)) =
            (label("player_id"), label("decided_by"), label("reason"))
        else {
            continue;
        };
        if let Some(decider) = Decider::from_labels(&decided_by, &reason) {
            *all.entry(player_id).or_default().0.entry(decider).or_default() += value;
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn each_failure_has_its_reason() {
        assert_eq!(
            Decider::of(&LlmError::Timeout(Duration::from_secs(1))),
            Decider::Slow
        );
        assert_eq!(Decider::of(&LlmError::Status(503)), Decider::Down);
        assert_eq!(Decider::of(&LlmError::Request("refused".into())), Decider::Down);
        assert_eq!(
            Decider::of(&LlmError::Malformed("html".into())),
            Decider::Nonsense
        );
        assert_eq!(
            Decider::of(&LlmError::NotAParity("maybe".into())),
            Decider::Nonsense
        );
    }

    #[test]
    fn counts_read_back_from_the_metrics_text() {
        for decider in Decider::ALL {
            assert_eq!(
                Decider::from_labels(decider.decided_by(), decider.reason()),
                Some(decider)
            );
        }
        let text = "# HELP league_player_llm_moves Moves\n\
            league_player_llm_moves_total{player_id=\"P01\",decided_by=\"model\",reason=\"answered\"} 7\n\
            league_player_llm_moves_total{player_id=\"P01\",decided_by=\"fallback\",reason=\"slow\"} 2\n\
            league_player_llm_moves_total{player_id=\"P03\",decided_by=\"fallback\",reason=\"nonsense\"} 5\n\
            league_player_other_total{player_id=\"P09\"} 1\n# EOF\n";
        let read = parse_metrics(text);
        assert_eq!(read.len(), 2, "{read:?}");
        assert_eq!(read["P01"].of(Decider::Model), 7);
        assert_eq!(read["P01"].fallbacks(), 2);
        assert_eq!(read["P03"].of(Decider::Nonsense), 5);
        assert_eq!(read["P03"].of(Decider::Model), 0);
    }

    #[test]
    fn the_metric_is_rendered_under_its_name() {
        record("P42", Decider::Down);
        let text = league_runtime::metrics::encode().expect("metrics");
        assert_eq!(parse_metrics(&text)["P42"].of(Decider::Down), 1, "{text}");
    }
}
