//! MATCH_RESULT_REPORT from an external referee, through any gateway replica: read in the spellings real
//! referees use, and reported to the manager with the referee's own credentials. The report names no
//! lease; the manager accepts it from the referee holding the match's lease, records it once, and a
//! repeated report is a no-op that answers with the result on record.
//!
//! A report becomes a result only if it is one: a status of the four (or the specification's winner and
//! score), from a referee that called the match's players, with the players' own answers and the outcome
//! the game's rule gives ([`super::answers`]). Any other is refused with E002 naming the field, the match
//! goes back to the queue uncharged, and the referee gets a `refused_result` compliance warning.

use league_proto::ErrorCode;
use league_proto::v2::{LeaseRef, MatchResult, ReleaseLeasesRequest, ReportMatchResultRequest};
use league_runtime::credentials::Credentials;
use serde_json::{Map, Value, json};

use league_domain::MessageType;
use league_domain::{LeagueId, MatchId, RefereeId};
use league_manager_link::league_status::to_league_error;
use league_v2::compliance::{Checker, kinds};
use league_v2::league_error::{LeagueError, LeagueResult};
use league_v2::{convert, envelope, ids, result, sender};

use super::{Referee, RefereedMatch, Referees, lock};

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
        let read = match self.accept(referee, &found, reported, checker).await {
            Ok(read) => read,
            Err(refusal) => return Err(self.refuse(referee, &found, refusal, checker).await),
        };
        let request =
            Credentials::new(referee.referee_id.as_str(), &referee.token).request(ReportMatchResultRequest {
                league_id: league_id.to_string(),
                match_id: match_id.to_string(),
                lease_id: String::new(),
                result: Some(read),
                // What this replica relayed of the match: stored as its transcript.
                transcript: self.relayed_transcript(&found),
            });
        let answer = match self
            .manager_link
            .manager
            .clone()
            .report_match_result(request)
            .await
        {
            Ok(answer) => answer.into_inner(),
            // The manager found status, winner, scores and players at fault at odds: no result either.
            Err(status) => {
                let error = to_league_error(status);
                if error.code != ErrorCode::InvalidMessageFormat {
                    return Err(error);
                }
                return Err(self.refuse(referee, &found, error, checker).await);
            }
        };
        self.match_reported(&league_id, match_id);
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

impl Referees {
    /// The report read as a result, when it is one: its status one of the four, its winner a player of
    /// the match, and — from the referee holding the match — after calling its players, with their own
    /// answers and an outcome the game's rule gives. Any other report is refused with E002.
    async fn accept(
        &self,
        referee: &Referee,
        found: &RefereedMatch,
        reported: &Map<String, Value>,
        checker: &mut Checker,
    ) -> LeagueResult<MatchResult> {
        let players = result::Players {
            a: found.player_a.as_str(),
            b: found.player_b.as_str(),
        };
        let read = result::read(&found.match_id.to_string(), players, reported, checker)?;
        // A report from anyone else is the manager's to refuse (E015), or a holder's repeat to answer.
        if !found.run_by(&referee.referee_id) {
            return Ok(read);
        }
        if !self.called_a_player(found, &referee.referee_id).await? {
            return Err(LeagueError::new(
                ErrorCode::InvalidMessageFormat,
                format!(
                    "result: {} called neither player of {} through the league, so the match was not played",
                    referee.referee_id, found.match_id
                ),
            ));
        }
        self.check_against_answers(found, &read)?;
        Ok(read)
    }

    /// Whether the referee called a player of `found` (through this replica or, the manager knows,
    /// another). When it called neither, the match is given back to the queue by this very question.
    async fn called_a_player(&self, found: &RefereedMatch, referee_id: &RefereeId) -> LeagueResult<bool> {
        let key = (found.league_id.clone(), found.match_id, referee_id.clone());
        if lock(&self.called).contains(&key) {
            return Ok(true);
        }
        Ok(self.release(found, referee_id, true).await?.is_empty())
    }

    /// A report that is no result: the match goes back to the queue uncharged, to be played again, and
    /// the referee gets a compliance warning. Returns the refusal to answer with.
    async fn refuse(
        &self,
        referee: &Referee,
        found: &RefereedMatch,
        refusal: LeagueError,
        checker: &mut Checker,
    ) -> LeagueError {
        // A referee that does not hold the match has nothing to give back, and its call changes nothing.
        let holds = found.run_by(&referee.referee_id);
        if refusal.code != ErrorCode::InvalidMessageFormat || !holds {
            return refusal;
        }
        checker.note(
            kinds::REFUSED_RESULT,
            format!("{}: {}", found.match_id, refusal.description),
        );
        let released = match self.release(found, &referee.referee_id, false).await {
            Ok(released) => !released.is_empty(),
            Err(error) => {
                tracing::warn!(match_id = %found.match_id, %error, "cannot give back a match whose report was refused; its lease will expire");
                false
            }
        };
        // Its lease keeper, if here, stops, and what its players said is forgotten.
        self.match_reported(&found.league_id, found.match_id);
        tracing::warn!(referee_id = %referee.referee_id, match_id = %found.match_id, refusal = %refusal.description,
            released, "an external referee's report is no result: refused, the match given back");
        let given_back = if released {
            "; the match is given back to be played again, nobody charged"
        } else {
            ""
        };
        LeagueError::new(refusal.code, format!("{}{given_back}", refusal.description))
    }

    /// Releases the lease `referee_id` holds now on `found` (with `unless_players_called`, only if it
    /// called no player of it) as refused: another live referee plays it again. The leases released.
    async fn release(
        &self,
        found: &RefereedMatch,
        referee_id: &RefereeId,
        unless_players_called: bool,
    ) -> LeagueResult<Vec<LeaseRef>> {
        let request = self.manager_link.for_referee(
            referee_id,
            ReleaseLeasesRequest {
                leases: vec![LeaseRef {
                    match_id: found.match_id.to_string(),
                    // The lease it holds now: the report names none, and another replica may have claimed.
                    lease_id: String::new(),
                    league_id: found.league_id.to_string(),
                }],
                unless_players_called,
                // Played again by another referee when one is live.
                refused: true,
            },
        );
        let released = self
            .manager_link
            .manager
            .clone()
            .release_leases(request)
            .await
            .map_err(to_league_error)?
            .into_inner()
            .released;
        Ok(released)
    }
}
