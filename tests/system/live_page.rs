//! The live league page in a real browser: the real `league` binary runs a manager, a gateway, two
//! referees and a host of bots as separate processes (ports 0, a fresh database), and headless Chromium,
//! driven by tests/browser/live_page.mjs through playwright-core, watches the league on the gateway's
//! page from before the first player registers to the champion: the table fills in, the round counter
//! advances, the champion appears (the one the manager declares), a click on a match opens its
//! transcript. Screenshots land in `target/tmp/live-page/<test>/`.
//!
//! Needs Node.js, Debian's `chromium` and the script's npm packages; without them the test fails and says
//! how to install them (`scripts/browser-env` does; see docs/operations.md, "The live league page").

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::browser::{BROWSER_DIR, ONE_BROWSER, require_browser};
use league_launcher::children::{self, Service};
use league_proto::v2::GetLeagueStatusRequest;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_testkit::TestDatabase;
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const OUTPUT_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/live-page");
const OPERATOR_TOKEN: &str = "operator-token-for-the-live-page-test";
const REFEREE_REGISTRATION_TOKEN: &str = "referee-registration-token-for-the-live-page-test";
/// Bounds that only turn a hang into a failure.
const READY_WITHIN: Duration = Duration::from_secs(60);
const BROWSER_WITHIN: Duration = Duration::from_secs(300);

fn var(key: &str, value: impl Into<String>) -> (String, String) {
    (key.to_owned(), value.into())
}

async fn start(name: &str, subcommand: &str, env: &[(String, String)]) -> Service {
    let program = Path::new(env!("CARGO_BIN_EXE_league"));
    children::start_program(program, name, subcommand, env, READY_WITHIN, Stdio::inherit())
        .await
        .unwrap_or_else(|error| panic!("{name} did not start: {error:#}"))
}

/// The champion the manager declared, as `P01 · display name`.
async fn champion(manager: &Service, league_id: &str) -> String {
    let channel = league_runtime::grpc::channel(&manager.url).expect("a manager channel");
    let status = ManagerServiceClient::new(channel)
        .get_league_status(league_runtime::credentials::operator_request(
            &SecretString::from(OPERATOR_TOKEN.to_owned()),
            GetLeagueStatusRequest {
                league_id: league_id.to_owned(),
            },
        ))
        .await
        .expect("the league's status")
        .into_inner();
    let champion = status.champion.expect("a completed league has a champion");
    format!("{} · {}", champion.player_id, champion.display_name)
}

/// Runs a league of `players` bots (behaviours `strategies`) with the page open from the start; returns
/// what the browser reported and the champion the manager declared.
async fn watch_a_league(test: &str, game: &str, players: u32, strategies: &str) -> (Value, String) {
    require_browser("the live-page browser test");
    let _one_browser = ONE_BROWSER.lock().await;
    let out_dir = PathBuf::from(OUTPUT_DIR).join(test);
    std::fs::create_dir_all(&out_dir).expect("the screenshot directory");
    // Dropped when the test is done (kept, and named, when it fails).
    let database = TestDatabase::create("league_live_page").await;
    let league_id = format!("live_{test}");
    let common = [
        var("RUST_LOG", "warn"),
        var("LEAGUE_LISTEN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ADMIN_ADDR", "127.0.0.1:0"),
        var("LEAGUE_ID", league_id.as_str()),
        // Closed, as a deployment is: the manager admits only referees presenting this token.
        var("LEAGUE_REFEREE_REGISTRATION_TOKEN", REFEREE_REGISTRATION_TOKEN),
    ];
    let mut env = common.to_vec();
    env.extend([
        var("DATABASE_URL", database.url().expose_secret()),
        var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
        var("LEAGUE_GAME_TYPE", game),
        var("LEAGUE_AUTO_START_PLAYERS", players.to_string()),
        var("LEAGUE_MOVE_TIMEOUT", "5s"),
    ]);
    let manager = start("manager", "manager", &env).await;
    let mut env = common.to_vec();
    env.extend([
        var("LEAGUE_MANAGER_URL", manager.url.as_str()),
        var("LEAGUE_HTTP_ADDR", "127.0.0.1:0"),
        var("LEAGUE_OPERATOR_TOKEN", OPERATOR_TOKEN),
    ]);
    let gateway = start("gateway", "gateway", &env).await;
    let mut referees = Vec::new();
    for i in 1..=2 {
        let mut env = common.to_vec();
        env.extend([
            var("LEAGUE_MANAGER_URL", manager.url.as_str()),
            var("LEAGUE_REFEREE_NAME", format!("referee-{i}")),
        ]);
        referees.push(start(&format!("referee-{i}"), "referee", &env).await);
    }

    let mut browser = Command::new("node")
        .arg(Path::new(BROWSER_DIR).join("live_page.mjs"))
        .args([
            gateway.url.as_str(),
            &out_dir.to_string_lossy(),
            &players.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs the browser script");
    let mut lines = BufReader::new(browser.stdout.take().expect("stdout")).lines();
    let report = tokio::time::timeout(BROWSER_WITHIN, async {
        let mut players_host = None;
        let mut report = None;
        while let Some(line) = lines.next_line().await.expect("the script's output") {
            if line == "READY" {
                // The page shows the league waiting: now the players register and it starts.
                let mut env = common.to_vec();
                env.extend([
                    var("LEAGUE_MANAGER_URL", manager.url.as_str()),
                    var("LEAGUE_PLAYERS", players.to_string()),
                    var("LEAGUE_STRATEGIES", strategies),
                ]);
                players_host = Some(start("players", "player-host", &env).await);
            } else if line.starts_with('{') {
                report = Some(serde_json::from_str::<Value>(&line).expect("the script's report"));
            }
        }
        let status = browser.wait().await.expect("the script exits");
        assert!(
            status.success(),
            "the browser script failed (screenshots in {})",
            out_dir.display()
        );
        drop(players_host);
        report.expect("the script reported what the page showed")
    })
    .await
    .expect("the browser script finished in time");
    let champion = champion(&manager, &league_id).await;
    for service in referees.into_iter().chain([gateway, manager]) {
        service.stop(Duration::from_secs(10)).await;
    }
    (report, champion)
}

/// What every run checks: no browser error, the page's headers, the champion, the table, the chart, the
/// transcript drawn in the game's own words, and the JSON API's answers and refusals.
fn check(report: &Value, game: &str, champion: &str, players: usize) {
    let shown = &report["shown"];
    assert_eq!(report["errors"], serde_json::json!([]), "browser errors");
    let csp = report["headers"]["content-security-policy"]
        .as_str()
        .unwrap_or_default();
    assert!(csp.contains("script-src 'self'"), "CSP: {csp:?}");
    assert_eq!(report["headers"]["x-content-type-options"], "nosniff");

    assert_eq!(
        report["championBeforeTheStart"], false,
        "no champion while registering"
    );
    // One line of the game's rules, and the players' names on the match cards.
    let rule = shown["gameRule"].as_str().unwrap_or_default();
    let rule_words = if game == "even_odd" {
        "the same choice — a draw"
    } else {
        "three in a row wins"
    };
    assert!(rule.contains(rule_words), "{rule:?}");
    let cards = shown["matchCardPlayers"].as_array().expect("match cards");
    assert!(!cards.is_empty());
    // The bots' names are `bot-<n>-<strategy>`: each card names both players.
    assert!(
        cards
            .iter()
            .filter_map(Value::as_str)
            .all(|card| card.contains(" vs ") && card.matches(" bot-").count() == 2),
        "{cards:?}"
    );
    // The leaders' colours are told apart: no two close in RGB.
    let colors: Vec<[f64; 3]> = shown["leaderColors"]
        .as_array()
        .expect("leader colours")
        .iter()
        .filter_map(Value::as_str)
        .map(|css| {
            let numbers: Vec<f64> = css
                .trim_start_matches("rgb(")
                .trim_end_matches(')')
                .split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect();
            [numbers[0], numbers[1], numbers[2]]
        })
        .collect();
    assert_eq!(colors.len(), players.min(8), "{:?}", shown["leaderColors"]);
    for (i, a) in colors.iter().enumerate() {
        for b in &colors[i + 1..] {
            let distance = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
            assert!(distance >= 70.0, "{a:?} and {b:?} are {distance:.0} apart");
        }
    }
    // While it waits, the page says for how many and where they register.
    let waiting = report["waitingText"].as_str().unwrap_or_default();
    let agents = if players == 1 { "agent" } else { "agents" };
    let expected = format!("0 of {players} registered — waiting for {players} more {agents} at http://");
    assert!(
        waiting.starts_with(&expected) && waiting.ends_with("/mcp"),
        "{waiting:?}"
    );
    assert_eq!(
        shown["champion"], champion,
        "the page's champion is the manager's"
    );
    let rows = shown["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), players);
    assert!(
        rows[0][1]
            .as_str()
            .unwrap_or_default()
            .starts_with(champion.split(' ').next().unwrap_or("-"))
    );
    let total_rounds = shown["totalRounds"].as_u64().expect("total rounds");
    let expected_rounds = if players.is_multiple_of(2) {
        players - 1
    } else {
        players
    } as u64;
    assert_eq!(total_rounds, expected_rounds, "round-robin rounds");
    assert_eq!(shown["roundCounter"], format!("All {total_rounds} rounds played"));
    // The counter only moves forward: from waiting for players to every round played.
    let history = shown["history"].as_array().expect("history");
    let rounds: Vec<u64> = history.iter().map(|h| h["round"].as_u64().unwrap_or(0)).collect();
    assert!(rounds.windows(2).all(|pair| pair[0] <= pair[1]), "{rounds:?}");
    assert_eq!(
        history.first().map(|h| &h["status"]),
        Some(&Value::from("REGISTERING"))
    );
    assert_eq!(
        history.last().map(|h| &h["status"]),
        Some(&Value::from("COMPLETED"))
    );
    eprintln!("rounds the page showed: {rounds:?}");
    let size = |name: &str| report["api"][name]["body"].as_str().map_or(0, str::len);
    eprintln!(
        "{players} players: snapshot {} bytes, progression {} bytes, a round {} bytes, a transcript {} bytes",
        size("snapshot"),
        size("progression"),
        size("round"),
        size("transcript")
    );
    assert_eq!(
        shown["chartLines"].as_u64(),
        Some(players as u64),
        "a line per player"
    );
    assert_eq!(
        shown["chartPoints"].as_u64(),
        Some(total_rounds + 1),
        "a point per round"
    );
    let types: Vec<&str> = shown["transcriptTypes"]
        .as_array()
        .expect("transcript")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let (moves, states): (&[&str], &[&str]) = match game {
        "even_odd" => (
            &["CHOOSE_PARITY_CALL", "CHOOSE_PARITY_RESPONSE"],
            &["collecting both choices", "drawing the number"],
        ),
        _ => (&["GAME_MOVE_CALL", "GAME_MOVE_RESPONSE"], &["taking turns"]),
    };
    for expected in ["GAME_INVITATION", "GAME_OVER"].iter().chain(moves) {
        assert!(
            types.iter().any(|t| t.ends_with(expected)),
            "{expected} in {types:?}"
        );
    }
    // The game's own words: its states, and its moves in words rather than JSON.
    let words = |key: &str| -> Vec<&str> {
        shown[key]
            .as_array()
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let (shown_states, move_words) = (words("transcriptStates"), words("transcriptWords"));
    for expected in states {
        assert!(shown_states.contains(expected), "{expected} in {shown_states:?}");
    }
    assert!(
        !shown_states.iter().any(|s| s.contains('_')),
        "no raw state names: {shown_states:?}"
    );
    if game == "even_odd" {
        assert!(
            move_words.iter().any(|w| *w == "chose even" || *w == "chose odd"),
            "{move_words:?}"
        );
        let cards = words("evenOddCards");
        assert_eq!(cards.len(), 3, "both choices and the number: {cards:?}");
    } else {
        assert!(
            !shown_states.contains(&"collecting both choices"),
            "{shown_states:?}"
        );
        assert!(
            move_words.iter().any(|w| w.starts_with("played cell ")),
            "{move_words:?}"
        );
        let cells = words("boardCells");
        assert_eq!(cells.len(), 9, "a 3 × 3 board: {cells:?}");
        let marked = cells.iter().filter(|c| !c.is_empty()).count();
        assert!(marked >= 5, "a finished game: {cells:?}");
        // Every mark numbered by when it was played: 1, 2, 3… once each.
        let mut numbers: Vec<u64> = shown["moveNumbers"]
            .as_array()
            .map(|n| n.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        numbers.sort_unstable();
        assert_eq!(numbers, (1..=marked as u64).collect::<Vec<_>>(), "{cells:?}");
    }
    // Numbers with their nouns: "1 loss", never "1 losses".
    let detail = shown["championDetail"].as_str().unwrap_or_default();
    for wrong in ["1 points", "1 wins", "1 draws", "1 losses"] {
        assert!(
            !detail.split(['·', ',']).any(|part| part.trim() == wrong),
            "{detail}"
        );
    }

    check_roster(report, players);

    let api = &report["api"];
    for name in ["snapshot", "progression", "round", "transcript", "players"] {
        assert_eq!(api[name]["status"], 200, "{name}: {}", api[name]);
        let body = api[name]["body"].as_str().unwrap_or_default();
        assert!(!body.contains(OPERATOR_TOKEN), "{name} leaks the operator token");
        assert!(!body.contains("auth_token"), "{name} carries a token field");
    }
    assert_eq!(
        api["round"]["cache"], "public, max-age=86400",
        "a completed round is final"
    );
    assert_eq!(api["unknownLeague"]["status"], 404, "{}", api["unknownLeague"]);
    assert_eq!(api["badLeagueId"]["status"], 404, "{}", api["badLeagueId"]);
    assert_eq!(api["badRound"]["status"], 400, "{}", api["badRound"]);
    assert_eq!(api["post"]["status"], 405, "read-only: {}", api["post"]);
}

/// The roster on the page: every player of the league with its name, strategy and leagues, as `league
/// players` lists them — and, the page being anonymous, nothing of where an agent is reached.
fn check_roster(report: &Value, players: usize) {
    let shown = &report["shown"];
    let league_id = shown["leagueId"].as_str().unwrap_or_default();
    let roster = shown["roster"].as_array().expect("the roster's rows");
    assert_eq!(roster.len(), players, "{roster:?}");
    for row in roster {
        let cells: Vec<&str> = row
            .as_array()
            .map(|cells| cells.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // `P01bot-late:300`, `late`, the league: a bot's strategy is its name's behaviour.
        let [player, strategy, leagues] = cells[..] else {
            panic!("a roster row is player, strategy, leagues: {row}")
        };
        assert!(player.starts_with('P') && player.contains("bot-"), "{row}");
        let behaviour = player.split("bot-").nth(1).unwrap_or_default();
        assert_eq!(strategy, behaviour.split(':').next().unwrap_or_default(), "{row}");
        assert_eq!(leagues, league_id, "{row}");
    }
    let answer = &report["api"]["players"];
    assert_eq!(answer["status"], 200, "{answer}");
    let body = answer["body"].as_str().unwrap_or_default();
    let listed: Value = serde_json::from_str(body).expect("the roster is JSON");
    assert_eq!(listed["total"], players, "{body}");
    // How far behind its request the shared answer may be: the page asks again that long after a change.
    assert!(listed["lag_ms"].as_u64().is_some_and(|lag| lag > 0), "{body}");
    for never in ["endpoint", "127.0.0.1", "localhost", "token", "http"] {
        assert!(
            !body.contains(never),
            "the public roster carries {never:?}: {body}"
        );
    }
}

#[tokio::test]
async fn live_page_in_chromium_follows_a_league_to_its_champion() {
    // Bots that take their time, so the league runs long enough to be watched round by round.
    let (report, champion) = watch_a_league(
        "six_players",
        "even_odd",
        6,
        "late:300,random,late:300,adaptive,late:300,always_even",
    )
    .await;
    check(&report, "even_odd", &champion, 6);
}

#[tokio::test]
async fn live_page_in_chromium_fits_fifty_players() {
    let (report, champion) =
        watch_a_league("fifty_players", "even_odd", 50, "random,adaptive,alternating").await;
    check(&report, "even_odd", &champion, 50);
}

#[tokio::test]
async fn live_page_in_chromium_draws_a_tic_tac_toe_board() {
    let (report, champion) = watch_a_league("tic_tac_toe", "tic_tac_toe", 4, "random,adaptive").await;
    check(&report, "tic_tac_toe", &champion, 4);
}

/// `league run --keep-page`: once the league is over its page stays up, showing the champion with live
/// updates still connected, until Ctrl-C ends the run as a finished one.
#[tokio::test]
async fn live_page_in_chromium_outlives_a_league_run_with_keep_page() {
    require_browser("the live-page browser test");
    let _one_browser = ONE_BROWSER.lock().await;
    let out_dir = PathBuf::from(OUTPUT_DIR).join("keep_page");
    std::fs::create_dir_all(&out_dir).expect("the screenshot directory");
    let league_id = format!("live-kept-{}", std::process::id());
    let results = Path::new("results").join(&league_id);
    let _ = std::fs::remove_dir_all(&results);
    let mut run = Command::new(env!("CARGO_BIN_EXE_league"))
        .args([
            "run",
            "--players",
            "4",
            "--think-time",
            "50ms",
            "--keep-page",
            "--gateway-addr",
            "127.0.0.1:0",
            "--league",
            &league_id,
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("league run starts");
    let mut lines = BufReader::new(run.stdout.take().expect("stdout")).lines();
    let (page, champion) = tokio::time::timeout(BROWSER_WITHIN, async {
        let (mut page, mut champion) = (None, None);
        while let Some(line) = lines.next_line().await.expect("the run's output") {
            if let Some(rest) = line.strip_prefix("live page: ") {
                page = rest.split_whitespace().next().map(str::to_owned);
            } else if let Some(rest) = line.strip_prefix("Champion: ") {
                // `P03 (bot-random) with 4 points`, as the page writes it: `P03 · bot-random`.
                let (id, rest) = rest.split_once(" (").expect("the champion's id and name");
                let name = rest.split_once(") with").expect("the champion's name").0;
                champion = Some(format!("{id} · {name}"));
            } else if line.ends_with("stays up until Ctrl-C (--keep-page)") {
                break;
            }
        }
        (
            page.expect("the run names its page"),
            champion.expect("the run names its champion"),
        )
    })
    .await
    .expect("the league ended in time");

    let output = tokio::time::timeout(
        BROWSER_WITHIN,
        Command::new("node")
            .arg(Path::new(BROWSER_DIR).join("kept_page.mjs"))
            .args([page.trim_end_matches('/'), &out_dir.to_string_lossy()])
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the browser script finished in time")
    .expect("node runs the browser script");
    assert!(
        output.status.success(),
        "the page did not show the ended league (screenshots in {})",
        out_dir.display()
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("the script's report");
    let shown = &report["shown"];
    assert_eq!(report["errors"], serde_json::json!([]), "browser errors");
    assert_eq!(shown["leagueId"], league_id.as_str());
    assert_eq!(shown["champion"], champion.as_str(), "the run's champion");
    assert_eq!(shown["status"], "COMPLETED");
    assert_eq!(shown["roundCounter"], "All 3 rounds played");
    assert_eq!(shown["connectionLive"], true, "live updates still connected");
    // Thinking is no behaviour: the bots are named by their strategies alone.
    let players: Vec<&str> = shown["players"]
        .as_array()
        .expect("the table's players")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(players.len(), 4, "{players:?}");
    for strategy in ["random", "adaptive", "alternating", "always_even"] {
        let name = format!("bot-{strategy}");
        assert!(
            players.iter().any(|player| player.ends_with(&name)),
            "{name} in {players:?}"
        );
    }

    // Ctrl-C ends it as a finished run: everything stops, exit 0.
    let pid = run.id().expect("the run is still up");
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exited = tokio::time::timeout(READY_WITHIN, async {
        let mut rest = vec![];
        while let Some(line) = lines.next_line().await.expect("the run's output") {
            rest.push(line);
        }
        (run.wait().await.expect("its status"), rest)
    })
    .await
    .expect("the run stops");
    assert!(exited.0.success(), "{exited:?}");
    assert!(
        exited.1.iter().any(|line| line.starts_with("6 matches in ")),
        "{exited:?}"
    );
    std::fs::remove_dir_all(&results).expect("the run wrote its results");
    // `results/` too, unless another test's run has a folder in it (see local_run::remove_results).
    let _ = std::fs::remove_dir("results");
}
