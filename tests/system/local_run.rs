//! `league run` at its edges, through the real binary: wrong options refused at once with what is wrong,
//! children that die with the launcher whatever kills it, an interrupted run that names its database,
//! a finished run that cleans up after itself unless told to keep, and results folders that are never
//! written over.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use league_testkit::wait_for;

/// Bound on a run getting somewhere: its services started, its launcher or services gone.
const RUN_WITHIN: Duration = Duration::from_secs(60);

fn league(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_league"));
    command.args(args).env("RUST_LOG", "warn");
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn refused(args: &[&str]) -> String {
    let output = league(args).output().expect("the league binary runs");
    assert!(!output.status.success(), "{args:?} was accepted");
    text(&output.stderr)
}

#[test]
fn wrong_options_are_refused_at_once_saying_what_is_wrong() {
    let chess = refused(&["run", "--game", "chess"]);
    assert!(
        chess.contains("unknown game \"chess\": the known games are even_odd, tic_tac_toe"),
        "{chess}"
    );
    let negative = refused(&["run", "--join-timeout", "-1s"]);
    assert!(negative.contains("\"-1s\" is negative"), "{negative}");
    let huge = refused(&["run", "--players", "100000"]);
    assert!(
        huge.contains("100000 players would play 4999950000 matches"),
        "{huge}"
    );
    assert!(huge.len() < 1_000, "one short line: {huge}");
    let clever = refused(&["run", "--strategies", "random,clever"]);
    assert!(clever.contains("unknown behaviour \"clever\""), "{clever}");
    let output = league(&["run", "--strategies", "llm"])
        .env_remove("LEAGUE_LLM_URL")
        .env_remove("LEAGUE_LLM_MODEL")
        .output()
        .expect("the league binary runs");
    let llm = text(&output.stderr);
    assert!(!output.status.success());
    assert!(
        llm.contains("the llm strategy is unavailable: set LEAGUE_LLM_URL"),
        "{llm}"
    );
    assert!(
        !llm.contains("database: "),
        "refused before anything started: {llm}"
    );
    let slow = refused(&["run", "--think-time", "5s", "--move-timeout", "2s"]);
    assert!(
        slow.contains("--think-time 5s is not less than --move-timeout 2s"),
        "{slow}"
    );
}

/// `league run` with `DATABASE_URL` set to `url`: refused before anything starts; its stderr.
fn refused_with_database(url: &str) -> String {
    let output = league(&["run", "--gateway-addr", "127.0.0.1:0"])
        .env("DATABASE_URL", url)
        .output()
        .expect("the league binary runs");
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{url} was accepted: {stderr}");
    assert!(nothing_started(&stderr), "{stderr}");
    stderr
}

/// Whether a run's stderr shows that it never created its database.
fn nothing_started(stderr: &str) -> bool {
    !stderr.lines().any(|line| line.starts_with("database: "))
}

#[test]
fn errors_name_the_setting_to_change_and_the_value_seen() {
    let mysql = refused_with_database("mysql://root:secret@db:3306/league");
    assert_eq!(
        mysql.lines().last(),
        Some("league: DATABASE_URL must be postgres://… (saw mysql://…)"),
        "{mysql}"
    );
    // The manager itself, as compose and Kubernetes run it, says the same.
    let manager = league(&["manager"])
        .env("DATABASE_URL", "mysql://root:secret@db:3306/league")
        .env("LEAGUE_LISTEN_ADDR", "127.0.0.1:0")
        .env("LEAGUE_ADMIN_ADDR", "127.0.0.1:0")
        .output()
        .expect("the league binary runs");
    let stderr = text(&manager.stderr);
    assert!(!manager.status.success(), "{stderr}");
    assert!(
        stderr.contains("DATABASE_URL must be postgres://… (saw mysql://…)") && !stderr.contains("secret"),
        "{stderr}"
    );
    let nobody_there = refused_with_database("postgres://postgres@127.0.0.1:1/league");
    assert!(
        nobody_there.contains("DATABASE_URL: Postgres at 127.0.0.1:1 cannot be reached"),
        "{nobody_there}"
    );
    // A server that answers but refuses the user is not "unreachable", and says so once.
    let server = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| league_manager::postgres::LOCAL_DEFAULT_URL.to_owned());
    let refused_user = refused_with_database(&as_user(&server, "no_such_role_for_league:wrong"));
    assert!(
        refused_user.contains("refused user \"no_such_role_for_league\"")
            && refused_user.contains("an authentication or role error"),
        "{refused_user}"
    );
    assert!(!refused_user.contains("cannot be reached"), "{refused_user}");
    assert_eq!(
        refused_user.matches("no_such_role_for_league").count(),
        2,
        "the user, and the server's words for it, once each: {refused_user}"
    );

    // A taken gateway port: the option and the way out, and no database left behind.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let busy = refused(&["run", "--gateway-addr", &addr]);
    assert!(
        busy.contains(&format!("--gateway-addr {addr} is in use"))
            && busy.contains("--gateway-addr 127.0.0.1:0 for a free one"),
        "{busy}"
    );
    assert!(nothing_started(&busy), "{busy}");

    // A service that cannot start (the gateway refuses its setting): the empty database goes.
    let output = league(&["run", "--players", "2", "--gateway-addr", "127.0.0.1:0"])
        .env("LEAGUE_MAX_CONNECTIONS", "lots")
        .output()
        .expect("the league binary runs");
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let database = named_database(&stderr);
    assert!(
        stderr.contains(&format!(
            "the league did not start (its database {database} is dropped): gateway-1 exited"
        )),
        "{stderr}"
    );
    assert!(!database_exists(&database), "{database} was left behind");
}

/// `url` with `user` (and password) instead of its own.
fn as_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let host = match rest[..authority_end].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    format!("{scheme}://{user}@{host}")
}

/// Where the test binary's runs write their results (tests run in the package's folder).
fn results(league: &str) -> std::path::PathBuf {
    std::path::Path::new("results").join(league)
}

#[test]
fn every_run_has_a_results_folder_of_its_own_and_none_is_written_over() {
    let league = format!("local-run-{}", std::process::id());
    let _ = std::fs::remove_dir_all(results(&league));
    let output = league_with(&["run", "--players", "2", "--quiet", "--league", &league]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let index = results(&league).join("index.html");
    let written = std::fs::read(&index).expect("the results are written");
    assert!(text(&output.stdout).contains(&format!("Results: results/{league}/index.html")));

    // The same id again: refused before anything starts, naming the option; the folder untouched.
    let again = league_with(&["run", "--players", "2", "--quiet", "--league", &league]);
    let stderr = text(&again.stderr);
    assert!(!again.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "results/{league} already holds the results of a league {league}: choose another id with --league"
        )),
        "{stderr}"
    );
    assert!(nothing_started(&stderr), "{stderr}");
    assert_eq!(std::fs::read(&index).expect("still there"), written);
    std::fs::remove_dir_all(results(&league)).expect("removed");

    // By default: the game and the time, a folder of its own.
    let output = league_with(&["run", "--players", "2", "--game", "tic_tac_toe"]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let id = stdout
        .lines()
        .find_map(|line| line.strip_prefix("Final standings of "))
        .expect("the league is named")
        .to_owned();
    let (game, time) = id.split_at("tic_tac_toe-".len());
    assert_eq!(game, "tic_tac_toe-");
    let digits: Vec<&str> = time.split('-').collect();
    assert!(
        digits.len() >= 2 && digits[0].len() == 8 && digits[1].len() == 4,
        "game-YYYYMMDD-HHMM[-n]: {id}"
    );
    assert!(results(&id).join("index.html").is_file(), "{stdout}");
    std::fs::remove_dir_all(results(&id)).expect("removed");
}

/// Removes the results folder a finished run named (`Results: results/<league>/index.html`): each run
/// writes a folder of its own, and the tests' would pile up.
fn remove_results(stdout: &str) {
    let folder = stdout
        .lines()
        .find_map(|line| line.strip_prefix("Results: "))
        .and_then(|index| std::path::Path::new(index).parent())
        .expect("the run names its results");
    std::fs::remove_dir_all(folder).expect("the results folder is there");
    remove_results_dir_if_empty(&folder.to_string_lossy());
}

fn league_with(args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend(["--gateway-addr", "127.0.0.1:0"]);
    league(&all).output().expect("the league binary runs")
}

#[test]
fn a_manager_refuses_an_unknown_game_and_warns_of_unknown_variables() {
    let output = league(&["manager"])
        .env("DATABASE_URL", "postgres://postgres@127.0.0.1:1/none")
        .env("LEAGUE_GAME_TYPE", "chess")
        .env("LEAGUE_MOVE_TIMOUT", "1s")
        .env("LEAGUE_ADMIN_ADDR", "127.0.0.1:0")
        .env("LEAGUE_LISTEN_ADDR", "127.0.0.1:0")
        .output()
        .expect("the league binary runs");
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("LEAGUE_MOVE_TIMOUT is not a league setting (did you mean LEAGUE_MOVE_TIMEOUT?)"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("LEAGUE_GAME_TYPE: unknown game \"chess\": the known games are even_odd, tic_tac_toe"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour codes into a pipe: {stderr}"
    );
}

/// A run whose league cannot start (it waits for an external agent that never comes), with every one of
/// its services up; lines of its stderr arrive on the channel.
struct Waiting {
    launcher: Child,
    services: Vec<u32>,
    database: String,
    /// The results folder it claimed (`league id: <id> (results in <folder>)`).
    results: String,
    stderr: mpsc::Receiver<String>,
}

fn start_waiting_run() -> Waiting {
    let mut launcher = league(&[
        "run",
        "--players",
        "2",
        "--referees",
        "2",
        "--external-players",
        "1",
        "--gateway-addr",
        "127.0.0.1:0",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("the league binary starts");
    let (lines, stderr) = mpsc::channel();
    let pipe = launcher.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let stdout = launcher.stdout.take().expect("stdout");
    std::thread::spawn(move || for _ in BufReader::new(stdout).lines().map_while(Result::ok) {});
    let mut results = None;
    let database = loop {
        let line = stderr
            .recv_timeout(Duration::from_secs(120))
            .expect("the run names its database");
        if let Some((_, folder)) = line.split_once(" (results in ") {
            results = folder.strip_suffix(')').map(str::to_owned);
        }
        if let Some(name) = line.strip_prefix("database: ") {
            break name.to_owned();
        }
    };
    let results = results.expect("the run names its league and results folder first");
    // Manager, gateway, two referees, the player host.
    let services = wait_for("five services start", RUN_WITHIN, || {
        Some(children_of(launcher.id())).filter(|pids| pids.len() == 5)
    });
    Waiting {
        launcher,
        services,
        database,
        results,
        stderr,
    }
}

#[test]
fn sigterm_stops_every_service_and_names_the_database() {
    let mut run = start_waiting_run();
    signal("TERM", run.launcher.id());
    let status = wait_for("the launcher exits", RUN_WITHIN, || {
        run.launcher.try_wait().expect("wait")
    });
    let stderr: Vec<String> = run.stderr.try_iter().collect();
    assert_eq!(status.code(), Some(143), "{stderr:#?}");
    let expected = format!("interrupted; the league so far is in database {}", run.database);
    assert!(
        stderr.iter().any(|line| line.starts_with(&expected)),
        "{stderr:#?}"
    );
    // The launcher waited for them: nothing is left once it has exited.
    let alive: Vec<u32> = run.services.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(alive.is_empty(), "services outlived the launcher: {alive:?}");
    // The database was kept, and `league clean` drops it.
    let cleaned = league(&["clean", &run.database])
        .output()
        .expect("league clean runs");
    assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    assert_eq!(
        text(&cleaned.stdout).trim(),
        format!("dropped database {}", run.database)
    );
    // The results folder it claimed, empty, went with it.
    assert!(!std::path::Path::new(&run.results).exists(), "{}", run.results);
    remove_results_dir_if_empty(&run.results);
}

#[test]
fn services_die_with_a_killed_launcher() {
    let mut run = start_waiting_run();
    signal("KILL", run.launcher.id());
    run.launcher.wait().expect("the launcher is reaped");
    wait_for(
        &format!("the services {:?} die with the killed launcher", run.services),
        RUN_WITHIN,
        || run.services.iter().all(|&pid| !alive(pid)).then_some(()),
    );
    let _ = league(&["clean", &run.database]).output();
    // A killed launcher cannot give its empty results folder up.
    std::fs::remove_dir(&run.results).expect("the empty folder it claimed");
    remove_results_dir_if_empty(&run.results);
}

/// Removes `results/`, the parent of a run's folder `folder`, unless another test's run has a folder in
/// it: left behind, it is newer than the binary, and scripts/league used to take it for a changed source.
fn remove_results_dir_if_empty(folder: &str) {
    if let Some(parent) = std::path::Path::new(folder).parent() {
        let _ = std::fs::remove_dir(parent);
    }
}

#[test]
fn a_finished_run_drops_its_database_unless_kept() {
    let output = league(&["run", "--players", "3", "--gateway-addr", "127.0.0.1:0"])
        .output()
        .expect("the league binary runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    remove_results(&stdout);
    let database = named_database(&stderr);
    assert!(
        stderr.contains(&format!("dropped database {database} (--keep keeps it")),
        "{stderr}"
    );
    assert!(!database_exists(&database), "{database} is still there");
    // Piped: plain progress lines, no bar, no colour codes.
    assert!(stderr.contains(" matches\n"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stdout.contains('\u{1b}'),
        "{stderr}"
    );
    assert!(stdout.contains("3 matches in "), "{stdout}");
    // Bots are told apart by their ids; their names say their behaviour.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.len() == 9 && fields[0].parse::<u32>().is_ok())
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    for row in rows {
        let name = row[2];
        assert!(
            ["bot-random", "bot-adaptive", "bot-alternating"].contains(&name),
            "{row:?}"
        );
    }

    let kept: Output = league(&[
        "run",
        "--players",
        "2",
        "--keep",
        "--quiet",
        "--gateway-addr",
        "127.0.0.1:0",
    ])
    .output()
    .expect("the league binary runs");
    let stderr = text(&kept.stderr);
    assert!(kept.status.success(), "{stderr}");
    remove_results(&text(&kept.stdout));
    let database = stderr
        .lines()
        .find_map(|line| line.strip_prefix("kept database "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the kept database is named")
        .to_owned();
    assert!(database_exists(&database), "{database} was not kept");
    let cleaned = league(&["clean", &database]).output().expect("league clean runs");
    assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    assert!(!database_exists(&database), "{database} was not dropped");
    let refused = refused(&["clean", "postgres"]);
    assert!(refused.contains("is not a database of `league run`"), "{refused}");
}

/// `league clean` alone drops the databases this user's runs kept (noted in the user's state
/// directory, here a temporary `XDG_STATE_HOME`) and nobody else's, even on a shared server.
#[test]
fn bare_clean_drops_what_this_users_runs_kept_and_nothing_else() {
    let home = std::env::temp_dir().join(format!("league-clean-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let as_this_user = |args: &[&str]| {
        let mut command = league(args);
        command
            .env("XDG_STATE_HOME", &home)
            .env_remove("LEAGUE_STATE_FILE");
        command.output().expect("the league binary runs")
    };
    let output = as_this_user(&[
        "run",
        "--keep",
        "--quiet",
        "--players",
        "2",
        "--gateway-addr",
        "127.0.0.1:0",
    ]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    remove_results(&text(&output.stdout));
    let mine = stderr
        .lines()
        .find_map(|line| line.strip_prefix("kept database "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the kept database is named")
        .to_owned();
    // Another user's kept run, on the same server.
    let theirs = kept_run(&["--players", "2"]);

    let cleaned = as_this_user(&["clean"]);
    let stdout = text(&cleaned.stdout);
    assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    assert!(stdout.contains(&format!("dropped database {mine}\n")), "{stdout}");
    assert!(!stdout.contains(&theirs), "{stdout}");
    assert!(!database_exists(&mine), "{mine} is still there");
    assert!(database_exists(&theirs), "{theirs} was dropped");
    // Nothing left to clean for this user.
    let again = text(&as_this_user(&["clean"]).stdout);
    assert!(again.contains("no database kept by your runs"), "{again}");

    let cleaned = league(&["clean", &theirs]).output().expect("league clean runs");
    assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    std::fs::remove_dir_all(&home).expect("removed");
}

/// Runs a kept league and returns its database.
fn kept_run(args: &[&str]) -> String {
    let mut all = vec!["run", "--keep", "--quiet", "--gateway-addr", "127.0.0.1:0"];
    all.extend(args);
    let output = league(&all).output().expect("the league binary runs");
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    remove_results(&text(&output.stdout));
    stderr
        .lines()
        .find_map(|line| line.strip_prefix("kept database "))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the kept database is named")
        .to_owned()
}

#[test]
fn a_seeded_double_round_robin_plays_every_pairing_twice_the_same_way() {
    let args = [
        "--players",
        "3",
        "--cycles",
        "2",
        "--seed",
        "42",
        "--strategies",
        "random",
    ];
    let first = kept_run(&args);
    let second = kept_run(&args);
    let read = |database: &str| {
        query(
            database,
            "select match_id || ' ' || player_a_id || '-' || player_b_id || ' '
                    || coalesce((result_json->'game_metadata'->'choices')::text, '')
             from matches order by round_id, match_number",
        )
    };
    let (one, two) = (read(&first), read(&second));
    // Three players, twice: six matches, each ordered pair (seat A, seat B) once.
    assert_eq!(one.len(), 6, "{one:#?}");
    let mut seats: Vec<&str> = one.iter().filter_map(|row| row.split(' ').nth(1)).collect();
    seats.sort();
    seats.dedup();
    assert_eq!(seats.len(), 6, "{one:#?}");
    assert!(
        one.iter().all(|row| row.contains("even") || row.contains("odd")),
        "{one:#?}"
    );
    // The same seed, the same choices (only the referee's draw differs).
    assert_eq!(one, two);
    for database in [first, second] {
        let cleaned = league(&["clean", &database]).output().expect("league clean runs");
        assert!(cleaned.status.success(), "{}", text(&cleaned.stderr));
    }
}

/// The rows of a one-column text query on the database `name` of the server `league run` uses.
fn query(name: &str, sql: &str) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let url = std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| league_manager::postgres::LOCAL_DEFAULT_URL.to_owned());
        let url = league_manager::postgres::with_database(&url, name);
        let pool = sqlx::PgPool::connect(&url).await.expect("the run's database");
        let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&pool).await.expect("the query");
        pool.close().await;
        rows.into_iter().map(|(row,)| row).collect()
    })
}

fn named_database(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|line| line.strip_prefix("database: "))
        .expect("the run names its database")
        .to_owned()
}

/// Whether the Postgres server `league run` uses has a database `name`.
pub(super) fn database_exists(name: &str) -> bool {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let url = std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| league_manager::postgres::LOCAL_DEFAULT_URL.to_owned());
        let url = league_manager::postgres::with_database(&url, "postgres");
        let pool = sqlx::PgPool::connect(&url).await.expect("the local Postgres");
        let found: Option<(i32,)> = sqlx::query_as("select 1 from pg_database where datname = $1")
            .bind(name)
            .fetch_optional(&pool)
            .await
            .expect("pg_database");
        pool.close().await;
        found.is_some()
    })
}

fn signal(name: &str, pid: u32) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|(_, ppid)| ppid == parent))
        .collect()
}

/// A process that exists and is not a zombie.
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
}

/// State and parent of `pid`, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}
