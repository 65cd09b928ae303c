//! The gateway's own overhead during a bench league, read from the histograms on its admin server's
//! `/metrics` (OpenMetrics text): per match and per call to an agent.

use std::time::Duration;

use anyhow::Context;
use league_domain::MessageType;

use league_launcher::run::Finished;
use league_testkit::http::try_get;

/// A histogram's reading: how many, and percentiles (interpolated within buckets).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Spread {
    pub(super) count: u64,
    pub(super) mean: Duration,
    pub(super) p50: Duration,
    pub(super) p99: Duration,
}

/// The gateway's overhead, from its `/metrics`.
#[derive(Debug, Default)]
pub(super) struct Overhead {
    pub(super) per_match: Spread,
    pub(super) per_call: Vec<(String, Spread)>,
}

/// The gateway's overhead histograms (crate league_gateway::bridge::overhead), read from its admin
/// server's `/metrics`.
pub(super) async fn gateway_overhead(finished: &Finished) -> anyhow::Result<Overhead> {
    let (_, admin) = finished
        .admin_urls
        .iter()
        .find(|(name, _)| name.starts_with("gateway"))
        .context("the gateway announced no admin server")?;
    let url = format!("{admin}/metrics");
    let reply = try_get(&url).await?;
    anyhow::ensure!(reply.status == 200, "{url} answered HTTP {}", reply.status);
    let text = reply.text();
    let per_match = spread(&text, "league_gateway_match_overhead_seconds", "")
        .context("no league_gateway_match_overhead_seconds in the gateway's metrics")?;
    let per_call = [
        MessageType::GameInvitation,
        MessageType::ChooseParityCall,
        MessageType::GameOver,
    ]
    .map(MessageType::as_str)
    .into_iter()
    .filter_map(|kind| {
        let labels = format!("message_type=\"{kind}\"");
        Some((
            kind.to_owned(),
            spread(&text, "league_gateway_bridge_overhead_seconds", &labels)?,
        ))
    })
    .collect();
    Ok(Overhead { per_match, per_call })
}

/// Reads the histogram `name` (the series whose labels, apart from `le`, are `labels`, e.g.
/// `message_type="GAME_OVER"`, or none) from OpenMetrics text.
pub(super) fn spread(text: &str, name: &str, labels: &str) -> Option<Spread> {
    let mut buckets: Vec<(f64, u64)> = Vec::new();
    let mut sum = 0.0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name).and_then(|rest| rest.strip_prefix('_')) else {
            continue;
        };
        let (series, value) = match rest.split_once(' ') {
            Some((series, value)) => (series, value.split_whitespace().next().unwrap_or_default()),
            None => continue,
        };
        let (suffix, label_text) = match series.split_once('{') {
            Some((suffix, label_text)) => (suffix, label_text.trim_end_matches('}')),
            None => (series, ""),
        };
        let mut le = None;
        let mut others = Vec::new();
        for label in label_text.split(',').filter(|label| !label.is_empty()) {
            match label.strip_prefix("le=") {
                Some(bound) => le = Some(bound.trim_matches('"')),
                None => others.push(label),
            }
        }
        if others.join(",") != labels {
            continue;
        }
        match (suffix, le) {
            ("bucket", Some(bound)) => {
                let bound = if bound == "+Inf" {
                    f64::INFINITY
                } else {
                    bound.parse().ok()?
                };
                buckets.push((bound, value.parse().ok()?));
            }
            ("sum", None) => sum = value.parse().unwrap_or(0.0),
            _ => {}
        }
    }
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = buckets.last()?.1;
    let quantile = |q: f64| {
        let rank = q * total as f64;
        let mut below = (0.0, 0u64);
        for &(bound, count) in &buckets {
            if count as f64 >= rank && count > below.1 {
                if bound.is_infinite() {
                    return below.0;
                }
                let share = (rank - below.1 as f64) / (count - below.1) as f64;
                return below.0 + (bound - below.0) * share.clamp(0.0, 1.0);
            }
            below = (bound, count);
        }
        below.0
    };
    Some(Spread {
        count: total,
        mean: Duration::from_secs_f64(sum / total.max(1) as f64),
        p50: Duration::from_secs_f64(quantile(0.50)),
        p99: Duration::from_secs_f64(quantile(0.99)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_from_a_histogram_in_openmetrics_text() {
        let text = "# HELP x_seconds something\n\
            # TYPE x_seconds histogram\n\
            x_seconds_sum{message_type=\"GAME_OVER\"} 0.25\n\
            x_seconds_count{message_type=\"GAME_OVER\"} 100\n\
            x_seconds_bucket{le=\"0.001\",message_type=\"GAME_OVER\"} 0\n\
            x_seconds_bucket{le=\"0.002\",message_type=\"GAME_OVER\"} 50\n\
            x_seconds_bucket{le=\"0.004\",message_type=\"GAME_OVER\"} 98\n\
            x_seconds_bucket{le=\"0.008\",message_type=\"GAME_OVER\"} 100\n\
            x_seconds_bucket{le=\"+Inf\",message_type=\"GAME_OVER\"} 100\n\
            x_seconds_bucket{le=\"0.001\",message_type=\"GAME_INVITATION\"} 7\n\
            x_seconds_bucket{le=\"+Inf\",message_type=\"GAME_INVITATION\"} 7\n";
        let s = spread(text, "x_seconds", "message_type=\"GAME_OVER\"").expect("found");
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        assert_eq!(s.count, 100);
        assert_eq!(ms(s.mean), 2.5);
        // The 50th of 100 is the top of the (1 ms, 2 ms] bucket; the 99th halfway into (4 ms, 8 ms].
        assert_eq!(ms(s.p50), 2.0);
        assert_eq!(ms(s.p99), 6.0);
        assert!(spread(text, "x_seconds", "").is_none());
        assert_eq!(
            spread(text, "x_seconds", "message_type=\"GAME_INVITATION\"").map(|s| s.count),
            Some(7)
        );
    }
}
