//! `league-bench --wrk`: JSON-RPC queries per second against a finished league's gateway, measured
//! with wrk.

use anyhow::Context;
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use crate::args::BenchArgs;
use crate::floor::{self, Ends};
use league_launcher::run::Finished;
use league_testkit::Registered;
use league_testkit::http::{socket_addr, try_post_to};

/// The wrk script every query measurement uses (also in scripts/wrk/).
const WRK_SCRIPT: &str = include_str!("../../../scripts/wrk/jsonrpc.lua");

/// One wrk run.
#[derive(Debug)]
pub(super) struct Throughput {
    pub(super) call: String,
    pub(super) line: String,
    pub(super) load_average: String,
    /// The CPU one request took, both ends (the gateway and wrk): the floor an exchange costs.
    pub(super) per_exchange: Option<std::time::Duration>,
}

/// wrk against the finished league's gateway: each call checked once by hand (a JSON-RPC error comes
/// back under HTTP 200, which wrk would count as a success), then measured.
pub(super) async fn queries(
    finished: &Finished,
    agent: Option<&Registered>,
    duration: &str,
    args: &BenchArgs,
) -> anyhow::Result<Vec<Throughput>> {
    let url = finished.gateway_urls.first().context("no gateway")?;
    let script = std::env::temp_dir().join(format!("league-bench-{}.lua", std::process::id()));
    std::fs::write(&script, WRK_SCRIPT).context("writing the wrk script")?;
    let cases = cases(finished, agent);
    let mut measured = Vec::new();
    for (call, method, token, params) in cases {
        answered_once(url, &call, method, token.as_deref(), &params).await?;
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let mut wrk = tokio::process::Command::new("wrk");
        wrk.args([
            &format!("-t{}", args.wrk_threads),
            &format!("-c{}", args.wrk_connections),
            &format!("-d{duration}"),
            "-s",
        ])
        .arg(&script)
        .arg(url)
        .env("BENCH_METHOD", method)
        .env("BENCH_PARAMS", params.to_string())
        .env_remove("BENCH_TOKEN");
        if let Some(token) = &token {
            wrk.env("BENCH_TOKEN", token);
        }
        eprintln!("bench: wrk {call} (load average {load_average})");
        let before = Ends::now(finished);
        let output = wrk.output().await.context("running wrk (apt-get install wrk)")?;
        let after = Ends::now(finished);
        let stdout = String::from_utf8_lossy(&output.stdout);
        anyhow::ensure!(
            output.status.success(),
            "wrk failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{method}:")))
            .with_context(|| format!("wrk printed no {method} line: {stdout}"))?
            .trim_start()
            .to_owned();
        let per_exchange = match (before, after, floor::requests(&line)) {
            (Some(before), Some(after), Some(requests)) => before.per_exchange(after, requests),
            _ => None,
        };
        measured.push(Throughput {
            call,
            line,
            load_average,
            per_exchange,
        });
    }
    std::fs::remove_file(&script).ok();
    Ok(measured)
}

/// One call measured: what the report calls it, its JSON-RPC method, the operator's bearer token if
/// it is sent with one, and its params.
type Case = (String, &'static str, Option<String>, Value);

/// The calls measured: a ping, the operator's standings both ways, and an agent's query when there is
/// an agent.
fn cases(finished: &Finished, agent: Option<&Registered>) -> Vec<Case> {
    let operator = finished.operator_token.expose_secret().to_owned();
    let mut cases: Vec<Case> = vec![
        ("ping".into(), "ping", None, json!({})),
        (
            "get_standings (operator)".into(),
            "get_standings",
            Some(operator.clone()),
            json!({}),
        ),
        (
            "league_query GET_STANDINGS (operator)".into(),
            "league_query",
            Some(operator.clone()),
            json!({"query_type": "GET_STANDINGS"}),
        ),
    ];
    if let Some(agent) = agent {
        // An agent's full envelope with its token: the gateway's credential cache on every request.
        cases.push((
            "league_query GET_STANDINGS (agent)".into(),
            "league_query",
            None,
            json!({
                "protocol": "league.v2",
                "message_type": "LEAGUE_QUERY",
                "sender": format!("player:{}", agent.id),
                "timestamp": league_v2::timestamp::now(),
                "conversation_id": "bench-query",
                "auth_token": agent.token,
                "query_type": "GET_STANDINGS",
            }),
        ));
    }
    cases
}

/// Sends the call once and refuses to measure it unless it is answered with a result: wrk counts
/// refusals as throughput too.
async fn answered_once(
    url: &str,
    call: &str,
    method: &str,
    token: Option<&str>,
    params: &Value,
) -> anyhow::Result<()> {
    let request = json!({"jsonrpc": "2.0", "method": method, "params": params, "id": 1});
    let bearer = token.map(|token| format!("Bearer {token}"));
    let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
    let reply = try_post_to(socket_addr(url)?, request.to_string(), &headers).await?;
    let answer: serde_json::Value = serde_json::from_slice(&reply.body)
        .with_context(|| format!("{call}: HTTP {} {}", reply.status, reply.text()))?;
    anyhow::ensure!(
        answer.get("result").is_some_and(|r| !r.is_null()) && answer["result"]["success"] != false,
        "{call} is refused: {answer}"
    );
    Ok(())
}
