//! `league run` with `llm` bots whose model misbehaves, through the real binary: a fake chat endpoint on
//! port 0 answers nonsense to every other request and holds the rest past the timeout, so every move
//! falls back to adaptive — and the run says so, per bot and per reason, in its summary, in
//! `llm_moves.csv` and on the results page, instead of silently crediting "llm" — and it warns before
//! the league starts, having asked the model one move that it did not give.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A chat endpoint that answers "maybe" to odd-numbered requests and nothing to the others (the
/// connection stays open until the client gives up); its URL.
fn misbehaving_model() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().expect("an address")
    );
    let served = Arc::new(AtomicU64::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let number = served.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                let _ = stream.read(&mut buffer);
                if number % 2 == 1 {
                    // Slow: read until the client hangs up.
                    while matches!(stream.read(&mut buffer), Ok(read) if read > 0) {}
                    return;
                }
                let body = r#"{"choices":[{"message":{"role":"assistant","content":"maybe"}}]}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    url
}

#[test]
fn a_run_counts_the_moves_its_llm_bots_fell_back_on_and_why() {
    let dir = std::env::temp_dir().join(format!("league-llm-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let output = Command::new(env!("CARGO_BIN_EXE_league"))
        .args([
            "run",
            "--players",
            "4",
            "--strategies",
            "llm,adaptive",
            "--gateway-addr",
            "127.0.0.1:0",
        ])
        .current_dir(&dir)
        .env("RUST_LOG", "error")
        .env("LEAGUE_LLM_URL", misbehaving_model())
        .env("LEAGUE_LLM_MODEL", "fake")
        .env("LEAGUE_LLM_TIMEOUT", "300ms")
        .output()
        .expect("the league binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // The model was asked before the league started, and the run said what its failure means.
    assert!(
        stderr.contains("warning: the llm strategy's model at http://127.0.0.1:")
            && stderr.contains("did not give a move when asked before the league")
            && stderr.contains("its bots will play the fallback's (adaptive's) moves"),
        "{stderr}"
    );
    // 4 players: 6 matches, each llm bot (P01 and P03: behaviours in turn) in 3 of them, one move each.
    let line = stdout
        .lines()
        .find(|line| line.starts_with("LLM moves of 2 bots: 0 by the model, 6 by the fallback (adaptive): "))
        .unwrap_or_else(|| panic!("no LLM line:\n{stdout}"));
    assert!(line.contains("slow ") && line.contains("nonsense "), "{line}");
    let results = std::fs::read_dir(dir.join("results"))
        .expect("a results folder")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .next()
        .expect("the league's folder");
    let csv = std::fs::read_to_string(results.join("llm_moves.csv")).expect("llm_moves.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "player_id,display_name,moves,model,slow,down,nonsense,other_game"
    );
    assert_eq!(lines.len(), 3, "{csv}");
    let mut slow_and_nonsense = 0;
    for row in &lines[1..] {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[1], "bot-llm", "{csv}");
        assert_eq!(
            (cells[2], cells[3], cells[5], cells[7]),
            ("3", "0", "0", "0"),
            "{csv}"
        );
        slow_and_nonsense +=
            cells[4].parse::<u32>().expect("slow") + cells[6].parse::<u32>().expect("nonsense");
    }
    assert_eq!(slow_and_nonsense, 6, "{csv}");
    let page = std::fs::read_to_string(results.join("index.html")).expect("index.html");
    assert!(
        page.contains("Results credited to llm include the fallback") && page.contains("llm_moves.csv"),
        "the page says it"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn llm_bots_are_refused_in_a_game_the_model_does_not_play_and_help_lists_every_behaviour() {
    let output = Command::new(env!("CARGO_BIN_EXE_league"))
        .args(["run", "--game", "tic_tac_toe", "--strategies", "llm,adaptive"])
        .env("LEAGUE_LLM_URL", "http://127.0.0.1:9/v1/chat/completions")
        .env("LEAGUE_LLM_MODEL", "fake")
        .output()
        .expect("the league binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("the llm strategy plays only even_odd") && !stderr.contains("database: "),
        "refused before anything started: {stderr}"
    );
    for command in ["run", "serve"] {
        let help = Command::new(env!("CARGO_BIN_EXE_league"))
            .args([command, "--help"])
            .output()
            .expect("the league binary runs");
        let help = String::from_utf8_lossy(&help.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for name in league_player::behaviour::names() {
            assert!(
                help.contains(name),
                "`league {command} --help` lacks {name}: {help}"
            );
        }
    }
}
