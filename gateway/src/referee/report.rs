//! MATCH_RESULT_REPORT from an external referee, through any gateway replica: read in the spellings real
//! referees use, and reported to the manager with the referee's own credentials. The report names no
//! lease; the manager accepts it from the referee holding the match's lease, records it once, and a
//! repeated report is a no-op that answers with the result on record.

use league_proto::ErrorCode;
use league_proto::v2::{AgentKind, ReportMatchResultRequest};
use league_runtime::credentials::Credentials;
use serde_json::{Map, Value, json};

use crate::compliance::Checker;
use crate::inbound::{Handled, HttpContext, Inbound};
use crate::league_error::{LeagueError, LeagueResult};
use crate::wire::envelope::required_id;
use crate::wire::{self, convert, result};

pub async fn report(
    inbound: &Inbound,
    message: &Map<String, Value>,
    checker: &mut Checker,
    http: &HttpContext,
) -> LeagueResult<Handled> {
    let (referee, envelope) = inbound.authenticated(message, checker, http).await?;
    if referee.kind != AgentKind::Referee {
        return Err(LeagueError::new(
            ErrorCode::PermissionDenied,
            "only a referee reports a match result",
        ));
    }
    let league_id = required_id(message, "league_id")?;
    let match_id = required_id(message, "match_id")?;
    let reported = message
        .get("result")
        .or_else(|| message.get("game_result"))
        .and_then(Value::as_object)
        .ok_or_else(|| LeagueError::new(ErrorCode::MissingRequiredField, "result is required"))?;
    let found = inbound.referees.refereed_match(league_id, match_id).await?;
    let players = result::Players {
        a: &found.player_a,
        b: &found.player_b,
    };
    let read = result::read(match_id, players, reported, checker)?;
    let request = Credentials::new(&referee.agent_id, &referee.token).request(ReportMatchResultRequest {
        league_id: league_id.to_owned(),
        match_id: match_id.to_owned(),
        lease_id: String::new(),
        result: Some(read),
        transcript: None,
    });
    let answer = inbound
        .manager_link
        .manager
        .clone()
        .report_match_result(request)
        .await?
        .into_inner();
    inbound.referees.match_reported(league_id, match_id);
    // The referee (and anyone asking this replica next) sees the new result at once.
    inbound.forget_standings();
    Ok(Handled {
        result: wire::message(
            "MATCH_RESULT_REPORT_ACK",
            "league_manager",
            envelope.conversation_id.as_deref().unwrap_or_default(),
            json!({
                "league_id": league_id,
                "match_id": match_id,
                "status": "ACCEPTED",
                "duplicate": answer.duplicate,
                "recorded": answer.recorded.as_ref().map(convert::match_result),
            }),
        ),
        agent_id: Some(referee.agent_id),
    })
}
