//! Reports recorded together, in one transaction: each is judged on its own and in order, as if
//! recorded alone; a refused report changes nothing and holds back none of the others.

#![allow(clippy::unwrap_used)]

use crate::support;

use league_manager::error::ManagerError;
use league_manager::league::report::{self, Report};
use league_proto::ErrorCode;
use league_proto::v2::*;
use support::*;

#[tokio::test]
async fn a_batch_judges_each_report_as_if_it_came_alone() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    for name in ["a", "b", "c", "d"] {
        register_player(&mut client, name).await;
    }
    let holder = register_referee(&mut client, "holder").await;
    let stranger = register_referee(&mut client, "stranger").await;
    let round = claim_round(&mut client, &holder).await;
    assert_eq!(round.len(), 2);
    let (first, second) = (&round[0], &round[1]);
    let report = |referee: &league_runtime::Credentials, request: ReportMatchResultRequest| {
        Report::new(referee_id(referee), request).unwrap()
    };
    let mut not_its_players = a_wins(second);
    not_its_players.scores[1].player_id = "P99".into();
    // The second match ends by technical loss: its at-fault player is stored with its row, and the
    // first match's row gets none.
    let mut forfeit = a_wins(second);
    forfeit.status = ResultStatus::TechnicalLoss as i32;
    let at_fault = second.r#match.as_ref().unwrap().player_b_id.clone();
    forfeit.at_fault_player_ids = vec![at_fault.clone()];
    let mut unknown = report_of(first, a_wins(first));
    unknown.match_id = "R9M9".into();
    let batch = [
        report(&stranger, report_of(first, a_wins(first))),
        report(&holder, report_of(first, a_wins(first))),
        report(&holder, report_of(first, a_wins(first))),
        report(&holder, report_of(second, not_its_players)),
        report(&holder, report_of(second, forfeit)),
        report(&holder, unknown),
    ];
    let outcomes = report::record(&manager.pool, &Default::default(), &Default::default(), &batch).await;

    let code = |index: usize| match &outcomes[index] {
        Err(ManagerError::Rejected { code, .. }) => Some(*code),
        other => panic!("report {index} was not refused: {other:?}"),
    };
    assert_eq!(code(0), Some(ErrorCode::LeaseNotHeld), "not the holder");
    let recorded = outcomes[1].as_ref().unwrap();
    assert!(!recorded.duplicate);
    let repeat = outcomes[2].as_ref().unwrap();
    assert!(repeat.duplicate, "the holder's repeat in the same batch");
    assert_eq!(repeat.recorded, recorded.recorded);
    assert_eq!(
        code(3),
        Some(ErrorCode::InvalidMessageFormat),
        "scores name a stranger"
    );
    assert!(
        !outcomes[4].as_ref().unwrap().duplicate,
        "a refusal holds back nothing"
    );
    assert_eq!(code(5), Some(ErrorCode::MatchNotFound));
    let completions = outcomes
        .iter()
        .filter(|outcome| outcome.as_ref().is_ok_and(|reported| reported.round_completed))
        .count();
    assert_eq!(completions, 1, "the batch finished round 1 once");

    let stored: Vec<(String, String, Vec<String>)> = sqlx::query_as(
        "select match_id, result_status, at_fault_player_ids from matches
         where status = 'finished' order by match_id",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    let ids = [first, second].map(|assignment| assignment.r#match.as_ref().unwrap().match_id.clone());
    assert_eq!(
        stored,
        [
            (ids[0].clone(), "win".to_owned(), Vec::new()),
            (ids[1].clone(), "technical_loss".to_owned(), vec![at_fault]),
        ]
    );

    // Each player's totals count their one match once.
    let totals: Vec<(String, i32, i32)> =
        sqlx::query_as("select player_id, played, points from standings order by player_id")
            .fetch_all(&manager.pool)
            .await
            .unwrap();
    let winners: Vec<&str> = round
        .iter()
        .map(|assignment| assignment.r#match.as_ref().unwrap().player_a_id.as_str())
        .collect();
    assert_eq!(totals.len(), 4);
    for (player, played, points) in totals {
        assert_eq!(played, 1, "{player}");
        let expected = if winners.contains(&player.as_str()) { 3 } else { 0 };
        assert_eq!(points, expected, "{player}");
    }
    let (round_status,): (String,) = sqlx::query_as("select status from rounds where round_id = 1")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(round_status, "completed");
    assert_eq!(
        claim_round(&mut client, &holder).await.len(),
        2,
        "round 2 is released"
    );
}

/// `ReportMatchResults` over gRPC: each report is answered in its place as `ReportMatchResult` would
/// answer it alone, a refused one holds back none of the others, and a request over the limit is refused
/// whole, taking nothing.
#[tokio::test]
async fn reports_many_to_a_request_are_each_answered_in_their_place() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    for name in ["a", "b", "c", "d"] {
        register_player(&mut client, name).await;
    }
    let holder = register_referee(&mut client, "holder").await;
    let round = claim_round(&mut client, &holder).await;
    assert_eq!(round.len(), 2);
    let (first, second) = (&round[0], &round[1]);
    let reported = |report: ReportMatchResultRequest| ReportedMatch {
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
        tracestate: String::new(),
        report: Some(report),
    };
    let request = |reports: Vec<ReportedMatch>| holder.request(ReportMatchResultsRequest { reports });

    let too_many = (0..=league_runtime::grpc::MAX_REPORTS)
        .map(|_| reported(report_of(first, a_wins(first))))
        .collect();
    let refused = client.report_match_results(request(too_many)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert_eq!(code(&refused), Some(ErrorCode::InvalidMessageFormat.code()));
    let finished = || async {
        let (count,): (i64,) = sqlx::query_as("select count(*) from matches where status = 'finished'")
            .fetch_one(&manager.pool)
            .await
            .unwrap();
        count
    };
    assert_eq!(finished().await, 0, "a refused request takes none of its reports");

    let mut unknown = report_of(first, a_wins(first));
    unknown.match_id = "R9M9".into();
    let answers = client
        .report_match_results(request(vec![
            reported(report_of(first, a_wins(first))),
            reported(unknown),
            reported(report_of(second, a_wins(second))),
            reported(report_of(first, a_wins(first))),
        ]))
        .await
        .unwrap()
        .into_inner()
        .answers;
    let recorded = |index: usize| match &answers[index].answer {
        Some(report_answer::Answer::Recorded(recorded)) => recorded.clone(),
        other => panic!("report {index} was not recorded: {other:?}"),
    };
    assert_eq!(answers.len(), 4);
    assert!(!recorded(0).duplicate);
    assert!(recorded(0).recorded.is_some());
    match &answers[1].answer {
        Some(report_answer::Answer::Failure(failure)) => {
            assert_eq!(failure.error_code, ErrorCode::MatchNotFound.code());
            assert_eq!(failure.code, tonic::Code::NotFound as i32);
        }
        other => panic!("the unknown match's report was not refused: {other:?}"),
    }
    assert!(!recorded(2).duplicate, "a refusal holds back nothing");
    assert!(
        recorded(3).duplicate,
        "the repeat is the result already on record"
    );
    assert_eq!(finished().await, 2);
}
