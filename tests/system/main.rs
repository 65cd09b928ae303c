//! The whole-system tests, one binary (one link instead of one per file): each module runs a league,
//! or a command of the `league` binary, through the real binary and real services on ports 0 with a
//! fresh database of its own, so the modules' tests run side by side like any others. Run one with
//! `cargo test -p league-launcher --features league-launcher/bench --test system <module>::<test>`.
//!
//! The reliability scenarios are a binary of their own (tests/reliability): they kill and restart
//! services and race real processes, so they run one at a time with nothing else on the machine —
//! which a binary of their own gives them, as cargo runs test binaries one after another.

mod browser;

mod concurrent_leagues;
mod end_to_end;
mod external_agents;
mod external_referee_archive;
mod league;
mod live_page;
mod llm_run;
mod local_run;
mod mcp_agents;
mod migrate;
mod observability;
mod operator_cli;
mod operator_details;
mod operator_week;
mod own_ports;
mod probe;
mod report;
mod results_archive;
mod revoked_referees;
mod strict_agents;
mod strict_referees;

/// `league bench` with `args` (quiet logs), which must succeed: its standard output. (`league bench` is
/// built with the launcher's `bench` feature, as scripts/test does.)
#[cfg(feature = "bench")]
fn league_bench(args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_league"))
        .arg("bench")
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the league binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "league bench failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The numbers of the bench's CPU-a-match row labelled `label` (manager, referees, player hosts,
/// gateways, Postgres, all, Postgres backends counted), each checked to be a number; the whole used
/// some CPU and Postgres's backends were found.
#[cfg(feature = "bench")]
fn cpu_a_match(stdout: &str, label: &str) -> Vec<f64> {
    let row = stdout
        .lines()
        .skip_while(|line| !line.starts_with("CPU a match (ms"))
        .find(|line| line.starts_with(&format!("| {label} | ")))
        .unwrap_or_else(|| panic!("a CPU-a-match row for {label}:\n{stdout}"));
    let cells: Vec<f64> = row
        .trim_matches('|')
        .split('|')
        .skip(1)
        .map(|cell| {
            cell.trim()
                .parse()
                .unwrap_or_else(|_| panic!("a number: {cell:?} in {row}"))
        })
        .collect();
    let [.., all, backends] = cells[..] else {
        panic!("seven cells: {row}");
    };
    assert_eq!(cells.len(), 7, "{row}");
    assert!(all > 0.0, "the league used CPU: {row}");
    assert!(backends >= 1.0, "Postgres's backends were found: {row}");
    cells
}
