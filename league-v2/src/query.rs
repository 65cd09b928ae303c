//! The league's queries: LEAGUE_QUERY's `query_type` (`GET_STANDINGS`…) and the debug shorthand that
//! asks each with fewer words (`get_standings`…), each name written once, here.

/// A question LEAGUE_QUERY asks the league: the specification's four and ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// The table now, each row with its tie-break.
    Standings,
    /// Whole rounds of the schedule, each match with what it came to, a page at a time.
    Schedule,
    /// A player's next match.
    NextMatch,
    /// A player's row in the table, results and matches.
    PlayerStats,
    /// One match with its result and transcript.
    Match,
    /// A league's status and progress.
    LeagueStatus,
    /// The table after each round, a page of rounds at a time.
    StandingsByRound,
    /// The leagues, newest first, a page at a time.
    Leagues,
}

/// A pulling referee's question (who plays and referees), asked as a LEAGUE_QUERY but answered by the
/// external-referee worker, not the league: no [`Query`].
pub const REGISTRATIONS: &str = "GET_REGISTRATIONS";

impl Query {
    /// Every query, in the order the league lists them.
    pub const ALL: [Query; 8] = [
        Query::Standings,
        Query::Schedule,
        Query::NextMatch,
        Query::PlayerStats,
        Query::Match,
        Query::LeagueStatus,
        Query::StandingsByRound,
        Query::Leagues,
    ];

    /// The `query_type` on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Query::Standings => "GET_STANDINGS",
            Query::Schedule => "GET_SCHEDULE",
            Query::NextMatch => "GET_NEXT_MATCH",
            Query::PlayerStats => "GET_PLAYER_STATS",
            Query::Match => "GET_MATCH",
            Query::LeagueStatus => "GET_LEAGUE_STATUS",
            Query::StandingsByRound => "GET_STANDINGS_BY_ROUND",
            Query::Leagues => "GET_LEAGUES",
        }
    }

    /// The query a `query_type` names, in any case.
    pub fn parse(query_type: &str) -> Option<Query> {
        Self::ALL
            .into_iter()
            .find(|query| query.as_str().eq_ignore_ascii_case(query_type))
    }

    /// The query a debug shorthand method names (`lower`: the method in lower case): the query type in
    /// lower case, or a name real agents use for it.
    pub(crate) fn by_shorthand(lower: &str) -> Option<Query> {
        match lower {
            "get_player_state" => Some(Query::PlayerStats),
            "get_match_state" => Some(Query::Match),
            "list_leagues" => Some(Query::Leagues),
            _ => Self::ALL
                .into_iter()
                .find(|query| query.as_str().eq_ignore_ascii_case(lower)),
        }
    }

    /// Every `query_type`, comma-separated, for an answer that names the choices.
    pub fn names() -> String {
        Self::ALL.map(Query::as_str).join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_query_type_parses_back_to_its_query_in_any_case() {
        for query in Query::ALL {
            assert_eq!(Query::parse(query.as_str()), Some(query));
            assert_eq!(Query::parse(&query.as_str().to_ascii_lowercase()), Some(query));
        }
        assert_eq!(Query::parse("GET_EVERYTHING"), None);
        assert_eq!(
            Query::parse(REGISTRATIONS),
            None,
            "the referees' question, not the league's"
        );
    }

    #[test]
    fn a_shorthand_is_the_query_type_in_lower_case_or_an_alias() {
        assert_eq!(
            Query::by_shorthand("get_standings_by_round"),
            Some(Query::StandingsByRound)
        );
        assert_eq!(Query::by_shorthand("get_player_state"), Some(Query::PlayerStats));
        assert_eq!(Query::by_shorthand("get_match_state"), Some(Query::Match));
        assert_eq!(Query::by_shorthand("list_leagues"), Some(Query::Leagues));
        assert_eq!(Query::by_shorthand("get_registrations"), None);
    }
}
