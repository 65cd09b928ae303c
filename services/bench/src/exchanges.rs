//! The gRPC exchanges the referees had with player endpoints during a bench league (ADR 0058), read
//! from the player hosts' and gateways' `/metrics`: each match call is one sample of
//! `league_rpc_server_duration_seconds{method}` whether it came alone or in a `MatchCalls` exchange, and
//! each exchange one sample of `league_rpc_server_match_calls_per_exchange`, so that
//! exchanges = `MatchCalls` exchanges + (match calls − the calls those carried).

use anyhow::Context;

use league_launcher::run::Finished;
use league_testkit::http::try_get;

/// The paths of the four match calls, as their latency series name them.
const MATCH_CALLS: [&str; 4] = [
    "/league.v2.PlayerService/InviteToMatch",
    "/league.v2.PlayerService/RequestMove",
    "/league.v2.PlayerService/NotifyGameOver",
    "/league.v2.PlayerService/NotifyGameError",
];

/// What the player endpoints answered.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Exchanges {
    /// Match calls, however they came.
    pub(super) calls: u64,
    /// gRPC exchanges: `MatchCalls` ones and unary match calls.
    pub(super) exchanges: u64,
    /// `MatchCalls` exchanges and the calls they carried.
    pub(super) batches: u64,
    pub(super) batched_calls: u64,
    /// The upper bound of the histogram bucket holding the largest batch (batches are counted in
    /// buckets of powers of two).
    pub(super) largest_batch_at_most: f64,
}

impl Exchanges {
    pub(super) fn mean_batch(&self) -> f64 {
        self.batched_calls as f64 / self.batches.max(1) as f64
    }

    fn add(&mut self, other: Exchanges) {
        self.calls += other.calls;
        self.exchanges += other.exchanges;
        self.batches += other.batches;
        self.batched_calls += other.batched_calls;
        self.largest_batch_at_most = self.largest_batch_at_most.max(other.largest_batch_at_most);
    }
}

/// The exchanges of every player host and gateway of `finished`.
pub(super) async fn player_exchanges(finished: &Finished) -> anyhow::Result<Exchanges> {
    let mut total = Exchanges::default();
    let endpoints = finished
        .admin_urls
        .iter()
        .filter(|(name, _)| name.starts_with("players") || name.starts_with("gateway"));
    for (name, admin) in endpoints {
        let url = format!("{admin}/metrics");
        let reply = try_get(&url).await?;
        anyhow::ensure!(reply.status == 200, "{url} answered HTTP {}", reply.status);
        total.add(read(&reply.text()).with_context(|| format!("reading {name}'s metrics"))?);
    }
    Ok(total)
}

/// The exchanges in one server's OpenMetrics text.
fn read(text: &str) -> anyhow::Result<Exchanges> {
    let mut found = Exchanges::default();
    let mut batch_buckets: Vec<(f64, u64)> = Vec::new();
    for line in text.lines() {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let value = || value.parse::<f64>().map(|value| value as u64);
        if let Some(labels) = series.strip_prefix("league_rpc_server_duration_seconds_count{") {
            let method = |path: &str| labels.contains(&format!("method=\"{path}\""));
            if MATCH_CALLS.iter().any(|path| method(path)) {
                found.calls += value()?;
            } else if method("/league.v2.PlayerService/MatchCalls") {
                found.batches += value()?;
            }
        } else if let Some(rest) = series.strip_prefix("league_rpc_server_match_calls_per_exchange_") {
            match rest {
                "sum" => found.batched_calls = value()?,
                bucket => {
                    if let Some(bound) = bucket
                        .strip_prefix("bucket{le=\"")
                        .and_then(|bound| bound.strip_suffix("\"}"))
                    {
                        let bound = if bound == "+Inf" {
                            f64::INFINITY
                        } else {
                            bound.parse()?
                        };
                        batch_buckets.push((bound, value()?));
                    }
                }
            }
        }
    }
    // The smallest bound below which every batch lies.
    batch_buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let batches = batch_buckets.last().map_or(0, |(_, count)| *count);
    found.largest_batch_at_most = batch_buckets
        .iter()
        .find(|(_, count)| *count == batches && batches > 0)
        .map_or(0.0, |(bound, _)| *bound);
    found.exchanges = found.batches + found.calls.saturating_sub(found.batched_calls);
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_are_batches_and_the_calls_that_came_alone() {
        let text = r#"# TYPE league_rpc_server_duration_seconds histogram
league_rpc_server_duration_seconds_count{method="/league.v2.PlayerService/InviteToMatch",code="Ok"} 100
league_rpc_server_duration_seconds_count{method="/league.v2.PlayerService/RequestMove",code="Ok"} 100
league_rpc_server_duration_seconds_count{method="/league.v2.PlayerService/NotifyGameError",code="Ok"} 4
league_rpc_server_duration_seconds_count{method="/league.v2.PlayerService/MatchCalls",code="Ok"} 10
league_rpc_server_duration_seconds_count{method="/league.v2.PlayerService/NotifyLeagueEvents",code="Ok"} 7
league_rpc_server_match_calls_per_exchange_sum 200.0
league_rpc_server_match_calls_per_exchange_count 10
league_rpc_server_match_calls_per_exchange_bucket{le="1.0"} 0
league_rpc_server_match_calls_per_exchange_bucket{le="16.0"} 4
league_rpc_server_match_calls_per_exchange_bucket{le="32.0"} 10
league_rpc_server_match_calls_per_exchange_bucket{le="64.0"} 10
league_rpc_server_match_calls_per_exchange_bucket{le="+Inf"} 10
"#;
        let read = read(text).expect("readable");
        assert_eq!(
            read,
            Exchanges {
                calls: 204,
                exchanges: 14,
                batches: 10,
                batched_calls: 200,
                largest_batch_at_most: 32.0,
            }
        );
        assert_eq!(read.mean_batch(), 20.0);
    }
}
