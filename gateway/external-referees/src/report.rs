//! MATCH_RESULT_REPORT from an external referee, through any gateway replica: read in the spellings real
//! referees use, and reported to the manager with the referee's own credentials. The report names no
//! lease; the manager accepts it from the referee holding the match's lease, records it once, and a
//! repeated report is a no-op that answers with the result on record.

use league_proto::ErrorCode;
use league_proto::v2::ReportMatchResultRequest;
use league_runtime::credentials::Credentials;
use serde_json::{Map, Value, json};

use league_domain::MessageType;
use league_domain::{LeagueId, MatchId};
use league_manager_link::league_status::to_league_error;
use league_v2::compliance::Checker;
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::{convert, envelope, ids, result, sender};

use super::{Referee, Referees};

impl Referees {
    /// The referee's MATCH_RESULT_REPORT, taken to the manager: the acknowledgement.
    pub async fn report(
        &self,
        referee: &Referee,
        message: &Map<String, Value>,
        checker: &mut Checker,
    ) -> LeagueResult<Value> {
        let league_id: LeagueId = ids::required(message, "league_id")?;
        let match_id: MatchId = ids::required(message, "match_id")?;
        let reported = message
            .get("result")
            .or_else(|| message.get("game_result"))
            .and_then(Value::as_object)
            .ok_or_else(|| LeagueError::new(ErrorCode::MissingRequiredField, "result is required"))?;
        let found = self.refereed_match(Some(&league_id), match_id).await?;
        let players = result::Players {
            a: &found.player_a,
            b: &found.player_b,
        };
        let read = result::read(&match_id.to_string(), players, reported, checker)?;
        let request =
            Credentials::new(referee.referee_id.as_str(), &referee.token).request(ReportMatchResultRequest {
                league_id: league_id.to_string(),
                match_id: match_id.to_string(),
                lease_id: String::new(),
                result: Some(read),
                transcript: None,
            });
        let answer = self
            .manager_link
            .manager
            .clone()
            .report_match_result(request)
            .await
            .map_err(to_league_error)?
            .into_inner();
        self.match_reported(league_id.as_str(), &match_id.to_string());
        Ok(envelope::message(
            MessageType::MatchResultReportAck.as_str(),
            sender::MANAGER,
            &referee.conversation_id,
            json!({
                "league_id": league_id,
                "match_id": match_id,
                "status": "ACCEPTED",
                "duplicate": answer.duplicate,
                "recorded": answer.recorded.as_ref().map(convert::match_result),
            }),
        ))
    }
}
