//! `league-bench --external`: the bench's fake external agents play through the real gateway.

use league_testkit::league_run::checked_table;

/// `league-bench --external`: fake external agents (one HTTP server, one path per player) register
/// through the real gateway and play a whole league; the bench checks they saw every call of every
/// match and reads the gateway's overhead per match; `--against-bots 1` plays a bots league before it and
/// compares the two.
#[test]
fn league_bench_plays_fake_external_agents_through_the_gateway() {
    let stdout = crate::league_bench(&[
        "--players",
        "4",
        "--external",
        "--referees",
        "1",
        "--referee-capacity",
        "4",
        "--against-bots",
        "1",
    ]);
    // Four players: six matches, each six calls to players, all measured by the gateway.
    assert!(stdout.contains("\n| 4 | 6 | "), "a row for the league:\n{stdout}");
    assert!(
        stdout.contains("| per match | 6 | "),
        "six matches measured:\n{stdout}"
    );
    assert!(stdout.contains("| per GAME_INVITATION | 12 | "), "{stdout}");
    // The CPU a match of the external league: its gateway worked for it.
    let cpu = crate::cpu_a_match(&stdout, "4");
    assert!(cpu[3] > 0.0, "the gateway's CPU a match: {cpu:?}\n{stdout}");
    // The pair: both walls, and their ratio.
    let pair: Vec<f64> = stdout
        .lines()
        .find(|line| line.starts_with("| 1 | "))
        .expect("the pair's row")
        .split('|')
        .filter_map(|cell| cell.trim().parse().ok())
        .collect();
    let [_, bots, external, ratio] = pair[..] else {
        panic!("a pair's row is its number, two walls and a ratio:\n{stdout}");
    };
    assert!(bots > 0.0 && external > 0.0, "{stdout}");
    // Each is printed to two decimals: the ratio lies within what the walls' rounding allows.
    let (low, high) = (
        (external - 0.005) / (bots + 0.005),
        (external + 0.005) / (bots - 0.005).max(1e-3),
    );
    assert!(low - 0.005 <= ratio && ratio <= high + 0.005, "{stdout}");
    assert!(stdout.contains("\n| median | "), "{stdout}");
    // The league's table: a row per player, three matches each, none lost technically.
    checked_table(&stdout, 4, 3, &[]);
}
