//! A revoked referee stays out (issue 53, ADR 0082), through the real binary: `league revoke-referee`
//! rotates the referee registration token, so the token the referee knew registers nobody any more;
//! `league serve`'s own revoked referee stops at its next claim — no warning every second — and is not
//! started again, neither then nor when `serve` starts again (it would have come back as a new
//! referee); `league referee-token --rotate` gives a new token, and refuses with a clear message when
//! the token is the operator's own setting, which `revoke-referee` then says it left alone.

use std::path::Path;
use std::process::Stdio;

use league_proto::v2::RegisterRefereeRequest;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_runtime::credentials::operator_request;
use league_testkit::wait_for;
use secrecy::SecretString;

use super::operator_cli::{Place, SERVE_WITHIN, interrupt, ok, refused};

/// What `league serve` printed on stderr so far (its children's logs and its own words).
fn printed(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// Waits until `league serve` said that `referee` was revoked and is not started again.
fn wait_until_left_down(log: &Path, referee: &str) {
    let said = format!("{referee} was revoked by the operator: not started again");
    wait_for(&said, SERVE_WITHIN, || printed(log).contains(&said).then_some(()));
}

/// The referees `league referees` lists, as `<id>,<status>`.
fn referees(state_file: &Path) -> Vec<String> {
    ok(state_file, &["referees", "--output", "csv"])
        .lines()
        .skip(1)
        .filter_map(|row| {
            let cells: Vec<&str> = row.split(',').collect();
            Some(format!("{},{}", cells.first()?, cells.get(5)?))
        })
        .collect()
}

/// The name `league referees` gives `referee_id` (serve's `referee-N`: which of them registered first,
/// and so is REF01, is a race).
fn name_of(state_file: &Path, referee_id: &str) -> String {
    ok(state_file, &["referees", "--output", "csv"])
        .lines()
        .skip(1)
        .find_map(|row| {
            let cells: Vec<&str> = row.split(',').collect();
            (cells.first() == Some(&referee_id)).then(|| cells.get(1).map(|name| (*name).to_owned()))?
        })
        .unwrap_or_else(|| panic!("{referee_id} is listed"))
}

/// Whether the manager at `url` registers a referee presenting `token` (E020 otherwise).
async fn registers_with(url: &str, token: &str) -> bool {
    let mut manager =
        ManagerServiceClient::new(league_runtime::grpc::channel(url).expect("the manager's URL"));
    let request = RegisterRefereeRequest {
        meta: Some(league_proto::v2::AgentMeta {
            display_name: "outsider".into(),
            version: "1.0.0".into(),
            game_types: vec!["even_odd".into()],
            contact_endpoint: "http://127.0.0.1:9/outsider".into(),
            service_endpoint: "http://127.0.0.1:9".into(),
            protocol_version: "2.1.0".into(),
            ..Default::default()
        }),
        max_concurrent_matches: 1,
    };
    match manager
        .register_referee(operator_request(&SecretString::from(token.to_owned()), request))
        .await
    {
        Ok(_) => true,
        Err(status) => {
            assert_eq!(
                league_proto::error_code::code_of(&status),
                Some(league_proto::ErrorCode::PermissionDenied),
                "{status:?}"
            );
            false
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_referee_stays_out_and_its_token_is_rotated() {
    let place = Place::new("revoked");
    let state_file = place.state_file.clone();
    let first_log = place.dir.join("serve-1.log");
    let serve = |log: &Path| {
        let log = std::fs::File::create(log).expect("a log file");
        place.serve(&["--players", "0", "--referees", "2"], |command| {
            command.stderr(Stdio::from(log));
        })
    };
    let (mut served, state) = serve(&first_log);
    let manager_url = state["manager_url"].as_str().expect("a URL").to_owned();
    wait_for("serve's two referees register", SERVE_WITHIN, || {
        (referees(&state_file).len() == 2).then_some(())
    });
    let before = ok(&state_file, &["referee-token"]).trim().to_owned();
    let revoked_name = name_of(&state_file, "REF02");

    let revoked = ok(&state_file, &["revoke-referee", "REF02"]);
    assert!(revoked.contains("REF02 revoked"), "{revoked}");
    assert!(revoked.contains("token was rotated"), "{revoked}");
    let after = ok(&state_file, &["referee-token"]).trim().to_owned();
    assert_ne!(after, before, "revoking rotates the referee registration token");
    let kept = std::fs::read_to_string(state_file.with_file_name("referee-token")).expect("kept");
    assert_eq!(
        kept.trim(),
        after,
        "the rotation is kept where serve's referees read it"
    );
    assert!(
        !registers_with(&manager_url, &before).await,
        "the token the revoked referee knew registers nobody"
    );

    // serve's own revoked referee stops at its next claim and stays down: no warning loop.
    wait_until_left_down(&first_log, &revoked_name);
    assert!(
        !printed(&first_log).contains("claiming matches failed"),
        "{}",
        printed(&first_log)
    );

    // serve started again: the revoked referee is refused its identity and does not register anew.
    interrupt(&mut served);
    let second_log = place.dir.join("serve-2.log");
    let (_served_again, state) = serve(&second_log);
    let manager_url = state["manager_url"].as_str().expect("a URL").to_owned();
    wait_until_left_down(&second_log, &revoked_name);
    wait_for("REF01 resumes", SERVE_WITHIN, || {
        (referees(&state_file) == ["REF01,active", "REF02,revoked"]).then_some(())
    });

    // Rotated on the operator's word alone; the new token registers, the old one no longer does.
    let rotated = ok(&state_file, &["referee-token", "--rotate"]).trim().to_owned();
    assert_ne!(rotated, after);
    assert_eq!(ok(&state_file, &["referee-token"]).trim(), rotated);
    assert!(!registers_with(&manager_url, &after).await);
    assert!(registers_with(&manager_url, &rotated).await);
    assert_eq!(referees(&state_file).len(), 3, "the outsider, and nobody else");
}

#[test]
fn the_operators_own_token_is_not_rotated_and_revoking_says_so() {
    let place = Place::new("operators-token");
    let state_file = place.state_file.clone();
    let (_served, _) = place.serve(&["--players", "0", "--referees", "1"], |command| {
        command.env("LEAGUE_REFEREE_REGISTRATION_TOKEN", "the-operators-own-token");
    });
    wait_for("serve's referee registers", SERVE_WITHIN, || {
        (referees(&state_file).len() == 1).then_some(())
    });
    let refusal = refused(&state_file, &["referee-token", "--rotate"]);
    assert!(
        refusal.contains("is the operator's (LEAGUE_REFEREE_REGISTRATION_TOKEN)"),
        "{refusal}"
    );
    assert_eq!(
        ok(&state_file, &["referee-token"]).trim(),
        "the-operators-own-token"
    );
    let output = super::operator_cli::league(&state_file, &["revoke-referee", "REF01"])
        .output()
        .expect("the league binary runs");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("REF01 revoked"));
    let warning = String::from_utf8_lossy(&output.stderr);
    assert!(
        warning.contains("the referee registration token was not rotated")
            && warning.contains("LEAGUE_REFEREE_REGISTRATION_TOKEN"),
        "{warning}"
    );
}
