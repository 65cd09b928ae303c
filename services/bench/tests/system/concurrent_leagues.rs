//! `league-bench --concurrent-leagues`: several leagues, each with bots of its own, started together on
//! one system (one manager, the referees, a player host per league), each played to its end and
//! measured on its own row (issue 42).

/// The per-league table's rows: league id, matches, and the rest of the cells as printed.
fn league_rows(stdout: &str) -> Vec<(String, u32, Vec<String>)> {
    stdout
        .lines()
        .skip_while(|line| !line.starts_with("| league | matches |"))
        .skip(2)
        .take_while(|line| line.starts_with("| "))
        .map(|line| {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect();
            let matches = cells[1].parse().expect("a number of matches");
            (cells[0].clone(), matches, cells[2..].to_vec())
        })
        .collect()
}

#[test]
fn three_leagues_at_once_each_complete_on_a_row_of_their_own() {
    let stdout = crate::league_bench(&[
        "--concurrent-leagues",
        "3",
        "--players",
        "4",
        "--referees",
        "1",
        "--referee-capacity",
        "4",
    ]);
    // Four players: six matches a league, eighteen in all.
    assert!(
        stdout.contains("3 leagues of 4 players at once: 18 matches in "),
        "{stdout}"
    );
    // Postgres broke no deadlock: every transaction takes its locks in one order.
    assert!(
        stdout.contains("\ndeadlocks (Postgres, the run's database): 0\n"),
        "{stdout}"
    );
    // The CPU the three leagues took together, a match.
    crate::cpu_a_match(&stdout, "3 × 4");
    let rows = league_rows(&stdout);
    assert_eq!(rows.len(), 3, "a row per league:\n{stdout}");
    let mut ids: Vec<&str> = rows.iter().map(|(id, _, _)| id.as_str()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3, "three leagues, not one three times:\n{stdout}");
    for (league_id, matches, cells) in &rows {
        assert_eq!(
            *matches, 6,
            "league {league_id} played its six matches:\n{stdout}"
        );
        // Wall, matches a second, gap p50 and p99: numbers, the p99 at least the p50.
        let numbers: Vec<f64> = cells.iter().map(|cell| cell.parse().expect("a number")).collect();
        let [wall, _, p50, p99] = numbers[..] else {
            panic!("a league's row is its wall, rate and gap p50 and p99:\n{stdout}");
        };
        assert!(wall > 0.0 && p99 >= p50, "{stdout}");
    }
    // Each league's round boundaries on a row of its own too.
    for (league_id, _, _) in &rows {
        assert!(stdout.contains(&format!("\n| {league_id} | 2 | ")), "{stdout}");
    }
}
