//! `league-bench`'s own tests: it plays whole leagues through the real services (its own child
//! processes) on ports 0 with a fresh database of its own, and its tables add up. Run one with
//! `cargo test -p league-bench --test system <module>::<test>`.

mod concurrent_leagues;
mod external_agents;

/// `league-bench` with `args` (quiet logs), which must succeed: its standard output.
fn league_bench(args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_league-bench"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the league-bench binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "league-bench failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The numbers of the bench's CPU-a-match row labelled `label` (manager, referees, player hosts,
/// gateways, Postgres, all, Postgres backends counted), each checked to be a number; the whole used
/// some CPU and Postgres's backends were found.
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
