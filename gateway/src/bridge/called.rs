//! A referee's call to a player, its ids parsed once where the gRPC request enters the bridge: the player,
//! the match's league and match, and the referee when the context names one. A malformed id is refused
//! as the gateway refuses one in a league.v2 message (E002 naming the field and the grammar,
//! `league_v2::ids`), before the agent is looked up or called. The strings are moved into the ids, not
//! copied.

use league_domain::{LeagueId, MatchId, PlayerId, RefereeId};
use league_manager_link::league_status::to_status;
use league_proto::v2::MatchContext;
use league_proto::{ErrorCode, error_code};
use league_v2::ids;
use tonic::Status;

/// The match a call belongs to: the referee's `MatchContext`, its ids parsed.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) league_id: LeagueId,
    pub(crate) round_id: u32,
    pub(crate) match_id: MatchId,
    pub(crate) game_type: String,
    pub(crate) conversation_id: String,
    /// The referee running the match; `None` when the context names none (the league's own sender then).
    pub(crate) referee_id: Option<RefereeId>,
}

/// A call for one player in a match.
#[derive(Debug)]
pub(crate) struct Called {
    pub(crate) player_id: PlayerId,
    pub(crate) context: Context,
}

impl Called {
    /// The call's ids parsed, once the call's server span names what the request said (a refused call's
    /// span too). A call without a context is refused: it would reach the agent with empty ids.
    pub(crate) fn parse(context: Option<MatchContext>, player_id: String) -> Result<Self, Status> {
        if let Some(context) = &context {
            league_runtime::grpc::record_call_fields(
                &context.league_id,
                &context.match_id,
                &context.conversation_id,
                &player_id,
            );
        }
        let context = required(context, "context")?;
        Ok(Self {
            player_id: ids::taken("player_id", player_id).map_err(to_status)?,
            context: Context::parse(context)?,
        })
    }
}

impl Context {
    fn parse(context: MatchContext) -> Result<Self, Status> {
        let referee_id = if context.referee_id.is_empty() {
            None
        } else {
            Some(ids::taken("context.referee_id", context.referee_id).map_err(to_status)?)
        };
        Ok(Self {
            league_id: ids::taken("context.league_id", context.league_id).map_err(to_status)?,
            round_id: context.round_id,
            match_id: ids::parsed("context.match_id", &context.match_id).map_err(to_status)?,
            game_type: context.game_type,
            conversation_id: context.conversation_id,
            referee_id,
        })
    }
}

/// A field every call from a referee carries (the match it belongs to; a game over's result). gRPC
/// leaves messages optional; a call without one is refused here.
pub(crate) fn required<T>(field: Option<T>, name: &str) -> Result<T, Status> {
    field.ok_or_else(|| error_code::status(ErrorCode::MissingRequiredField, format!("{name} is required")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> MatchContext {
        MatchContext {
            league_id: "evening".into(),
            round_id: 2,
            match_id: "R2M1".into(),
            game_type: "even_odd".into(),
            conversation_id: "conv-1".into(),
            referee_id: String::new(),
        }
    }

    fn refusal(context: MatchContext, player_id: &str) -> (Option<ErrorCode>, String) {
        match Called::parse(Some(context), player_id.into()) {
            Ok(called) => panic!("taken: {called:?}"),
            Err(status) => (error_code::code_of(&status), status.message().to_owned()),
        }
    }

    #[test]
    fn a_call_s_ids_are_parsed_and_a_missing_referee_is_none() {
        let called = Called::parse(Some(context()), "P01".into()).expect("well-formed ids");
        assert_eq!(called.player_id, "P01");
        assert_eq!(called.context.league_id, "evening");
        assert_eq!(called.context.match_id, MatchId::new(2, 1));
        assert_eq!(called.context.referee_id, None);
        let refereed = MatchContext {
            referee_id: "REF01".into(),
            ..context()
        };
        let called = Called::parse(Some(refereed), "P01".into()).expect("well-formed ids");
        assert_eq!(
            called.context.referee_id.map(String::from).as_deref(),
            Some("REF01")
        );
    }

    #[test]
    fn a_malformed_id_is_refused_naming_its_field() {
        let (code, why) = refusal(context(), "p1");
        assert_eq!(code, Some(ErrorCode::InvalidMessageFormat));
        assert!(why.starts_with("player_id \"p1\" is not a player id"), "{why}");
        let cases = [
            (
                "context.league_id",
                MatchContext {
                    league_id: "Evening League".into(),
                    ..context()
                },
            ),
            (
                "context.match_id",
                MatchContext {
                    match_id: "M1".into(),
                    ..context()
                },
            ),
            (
                "context.referee_id",
                MatchContext {
                    referee_id: "P01".into(),
                    ..context()
                },
            ),
        ];
        for (field, context) in cases {
            let (code, why) = refusal(context, "P01");
            assert_eq!(code, Some(ErrorCode::InvalidMessageFormat), "{field}");
            assert!(why.starts_with(field), "{why}");
        }
        let missing = Called::parse(None, "P01".into()).err();
        assert_eq!(
            missing.as_ref().and_then(error_code::code_of),
            Some(ErrorCode::MissingRequiredField)
        );
    }
}
