//! End to end: the real `league` binary runs a whole league as separate processes (manager, two
//! referees, a player host) over real gRPC and a real, freshly created Postgres database, and prints a
//! table that adds up.

use std::process::Command;

/// One row of the printed table: player, played, wins, draws, losses, technical losses, points.
#[derive(Debug)]
struct Row {
    player: String,
    played: u32,
    wins: u32,
    draws: u32,
    losses: u32,
    technical_losses: u32,
    points: u32,
}

fn parse_table(stdout: &str) -> Vec<Row> {
    stdout
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("rank"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let number = |i: usize| fields[fields.len() - i].parse::<u32>().expect("a number");
            Row {
                player: fields[1].to_owned(),
                played: number(6),
                wins: number(5),
                draws: number(4),
                losses: number(3),
                technical_losses: number(2),
                points: number(1),
            }
        })
        .collect()
}

#[test]
fn league_run_plays_a_whole_league_across_processes() {
    // Its own working folder, so the results folder it writes goes with the test.
    let workdir = league_testkit::league_run::WorkDir::create();
    let output = Command::new(env!("CARGO_BIN_EXE_league"))
        .current_dir(&workdir)
        .args([
            "run",
            "--players",
            "5",
            "--referees",
            "2",
            "--quiet",
            "--gateway-addr",
            "127.0.0.1:0",
        ])
        .arg("--cluster-dir")
        .arg(league_testkit::database::cluster_dir())
        .env("RUST_LOG", "warn")
        .output()
        .expect("the league binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "league run failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );

    let rows = parse_table(&stdout);
    assert_eq!(rows.len(), 5, "one row per player:\n{stdout}");
    let mut players: Vec<&str> = rows.iter().map(|row| row.player.as_str()).collect();
    players.sort();
    assert_eq!(players, ["P01", "P02", "P03", "P04", "P05"]);
    for row in &rows {
        // Five players: 5 rounds, each player sits one out and plays the other four once.
        assert_eq!(row.played, 4, "{row:?}");
        assert_eq!(row.wins + row.draws + row.losses, row.played, "{row:?}");
        assert_eq!(row.points, 3 * row.wins + row.draws, "{row:?}");
        assert_eq!(
            row.technical_losses, 0,
            "bots that answer never lose technically: {row:?}"
        );
    }
    let (wins, losses, draws): (u32, u32, u32) = rows.iter().fold((0, 0, 0), |(w, l, d), row| {
        (w + row.wins, l + row.losses, d + row.draws)
    });
    assert_eq!(wins, losses, "every win is someone's loss");
    assert_eq!(wins + draws / 2, 10, "5 players play 10 matches");
    assert!(
        rows.windows(2).all(|pair| pair[0].points >= pair[1].points),
        "ranked by points"
    );
    let champion = stdout
        .lines()
        .find(|line| line.starts_with("Champion: "))
        .expect("a champion line");
    assert!(champion.contains(&rows[0].player), "{champion}");
}
