//! The bench's tables, in Markdown: a row per league, the CPU a match, the round boundaries, and with
//! external players the gateway's overhead and its wrk throughput; or leagues played at once.

use std::time::Duration;

use crate::args::BenchArgs;
use crate::measure::Measured;
use crate::{concurrent, cpu, floor, rounds};

/// Leagues played one after another: a row per league, then each one's CPU, rounds, overhead and
/// throughput.
pub fn render(results: &[Measured], args: &BenchArgs) -> String {
    let mut out = format!(
        "referees: {} × capacity {}\n\n| players | matches | wall (s) | matches/s | match p50 (ms) | match p99 (ms) | player RPCs/match | player exchanges/match | calls/exchange (mean, max ≤) | notifications/match | peak RSS (MB) |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        args.referees, args.referee_capacity
    );
    for m in results {
        let rss: Vec<String> = m
            .peak_rss_kib
            .iter()
            .map(|(name, kib)| format!("{name} {:.1}", *kib as f64 / 1024.0))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {:.2} | {:.0} | {:.2} | {:.2} | {:.1} | {:.3} | {:.1}, {} | {:.2} | {} |\n",
            m.players,
            m.matches,
            m.wall.as_secs_f64(),
            f64::from(m.matches) / m.wall.as_secs_f64().max(1e-9),
            m.match_p50.as_secs_f64() * 1e3,
            m.match_p99.as_secs_f64() * 1e3,
            m.player_calls_per_match,
            m.exchanges.exchanges as f64 / f64::from(m.matches.max(1)),
            m.exchanges.mean_batch(),
            m.exchanges.largest_batch_at_most,
            m.notifications_per_match,
            rss.join(", ")
        ));
    }
    out.push_str(&cpu::header("players"));
    for m in results {
        out.push_str(&cpu::row(&m.players.to_string(), &m.cpu, u64::from(m.matches)));
    }
    let boundaries: Vec<_> = results
        .iter()
        .map(|m| (m.players.to_string(), &m.rounds))
        .collect();
    out.push_str(&rounds::render("players", &boundaries));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for m in results {
        if let Some(overhead) = &m.overhead {
            out.push_str(&format!(
                "\ngateway overhead, {} external players (time inside the bridge minus the agent's):\n\n| what | count | mean (ms) | p50 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n",
                m.players
            ));
            let rows = std::iter::once(("per match".to_owned(), overhead.per_match)).chain(
                overhead
                    .per_call
                    .iter()
                    .map(|(kind, spread)| (format!("per {kind}"), *spread)),
            );
            for (what, s) in rows {
                out.push_str(&format!(
                    "| {what} | {} | {:.3} | {:.3} | {:.3} |\n",
                    s.count,
                    ms(s.mean),
                    ms(s.p50),
                    ms(s.p99)
                ));
            }
        }
        if !m.throughput.is_empty() {
            out.push_str(&format!(
                "\ngateway queries, {} players, wrk -t{} -c{} -d{}:\n\n| call | result | load average before |\n|---|---|---|\n",
                m.players,
                args.wrk_threads,
                args.wrk_connections,
                args.wrk.as_deref().unwrap_or_default()
            ));
            for t in &m.throughput {
                out.push_str(&format!("| {} | {} | {} |\n", t.call, t.line, t.load_average));
            }
            let ping = m.throughput.iter().find(|t| t.call == "ping");
            if let (Some(_), Some(per_exchange)) = (&m.overhead, ping.and_then(|t| t.per_exchange)) {
                let gateway: Duration = m
                    .cpu
                    .by
                    .iter()
                    .filter(|(name, _)| name.starts_with("gateway"))
                    .map(|(_, t)| *t)
                    .sum();
                out.push_str(&floor::render(gateway / m.matches.max(1), per_exchange));
            }
        }
    }
    out
}

/// Leagues played at once: the whole and a row per league, the processes' peak memory (one system for
/// all), and each league's round boundaries.
pub fn render_together(players: u32, measured: &[Measured], deadlocks: i64, args: &BenchArgs) -> String {
    let leagues: Vec<concurrent::League> = measured
        .iter()
        .map(|m| concurrent::League {
            league_id: m.league_id.clone(),
            matches: m.matches,
            started_ms: m.started_ms,
            completed_ms: m.completed_ms,
            gap: m.rounds.gap,
        })
        .collect();
    let rss: Vec<String> = measured
        .first()
        .map(|m| m.peak_rss_kib.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|(name, kib)| format!("{name} {:.1}", *kib as f64 / 1024.0))
        .collect();
    let boundaries: Vec<_> = measured
        .iter()
        .map(|m| (m.league_id.clone(), &m.rounds))
        .collect();
    let cpu = measured.first().map(|m| {
        let matches = measured.iter().map(|m| u64::from(m.matches)).sum();
        format!(
            "{}{}",
            cpu::header("leagues"),
            cpu::row(&format!("{} × {players}", measured.len()), &m.cpu, matches)
        )
    });
    format!(
        "referees: {} × capacity {}\n{}{}\npeak RSS (MB): {}\n{}{}",
        args.referees,
        args.referee_capacity,
        concurrent::render(players, &leagues),
        concurrent::render_deadlocks(deadlocks),
        rss.join(", "),
        cpu.unwrap_or_default(),
        rounds::render("league", &boundaries)
    )
}
