//! A match handed to a referee, parsed once where it arrives. The wire's `MatchAssignment` makes every
//! field optional (proto3); a referee cannot run a match without its ids, both players and a lease, so
//! [`Assignment`] holds them unconditionally and a claim that lacks one is refused at the boundary with
//! the field it lacks, instead of running as a match with empty ids. The ids are parsed there too
//! (crate::id): a malformed one is refused as unusable, like a missing one.

use std::time::{Duration, SystemTime};

use league_proto::v2::{AssignedPlayer, MatchAssignment, ScheduledMatch};

use crate::timing::Timing;
use crate::{LeagueId, MatchId, PlayerId};

/// A claimed match with everything needed to run it.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// The match: league, round, match and player ids and the game type are never empty.
    pub scheduled: ScheduledMatch,
    /// Seat A then seat B, in the schedule's order; each names its player's id.
    pub players: [AssignedPlayer; 2],
    /// The league's timings, defaults applied.
    pub timing: Timing,
    pub lease: Lease,
    /// The ids of `scheduled`, parsed.
    ids: Ids,
}

#[derive(Debug, Clone, PartialEq)]
struct Ids {
    league_id: LeagueId,
    match_id: MatchId,
    players: [PlayerId; 2],
}

/// The referee's hold on the match: renewals and the report quote its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Never empty.
    pub lease_id: String,
    pub expires_at: Option<SystemTime>,
    /// The lease length the league gave, when it gave a usable one ([`Timing::given_lease`]).
    pub duration: Option<Duration>,
}

/// What an assignment lacked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncompleteAssignment {
    /// The match id, when the assignment had one.
    pub match_id: String,
    /// The missing or wrong field, as the wire names it.
    pub field: &'static str,
}

impl std::fmt::Display for IncompleteAssignment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.match_id.as_str() {
            "" => write!(f, "a match assignment without {}", self.field),
            id => write!(f, "the assignment of {id} has no usable {}", self.field),
        }
    }
}

impl std::error::Error for IncompleteAssignment {}

impl TryFrom<MatchAssignment> for Assignment {
    type Error = IncompleteAssignment;

    fn try_from(assignment: MatchAssignment) -> Result<Assignment, IncompleteAssignment> {
        let lacks = |match_id: &str, field| IncompleteAssignment {
            match_id: match_id.to_owned(),
            field,
        };
        let scheduled = assignment.r#match.ok_or_else(|| lacks("", "match"))?;
        let id = scheduled.match_id.as_str();
        for (value, field) in [
            (id, "match.match_id"),
            (scheduled.league_id.as_str(), "match.league_id"),
            (scheduled.game_type.as_str(), "match.game_type"),
            (scheduled.player_a_id.as_str(), "match.player_a_id"),
            (scheduled.player_b_id.as_str(), "match.player_b_id"),
            (assignment.lease_id.as_str(), "lease_id"),
        ] {
            if value.is_empty() {
                return Err(lacks(id, field));
            }
        }
        let seat = |player: Option<AssignedPlayer>, expected: &str, field| match player {
            Some(player) if player.player_id == expected => Ok(player),
            _ => Err(lacks(id, field)),
        };
        let players = [
            seat(assignment.player_a, &scheduled.player_a_id, "player_a")?,
            seat(assignment.player_b, &scheduled.player_b_id, "player_b")?,
        ];
        let ids = Ids {
            league_id: LeagueId::parse(&scheduled.league_id).map_err(|_| lacks(id, "match.league_id"))?,
            match_id: MatchId::parse(id).map_err(|_| lacks(id, "match.match_id"))?,
            players: [
                PlayerId::parse(&scheduled.player_a_id).map_err(|_| lacks(id, "match.player_a_id"))?,
                PlayerId::parse(&scheduled.player_b_id).map_err(|_| lacks(id, "match.player_b_id"))?,
            ],
        };
        Ok(Assignment {
            ids,
            timing: Timing::from_proto(assignment.timing.as_ref()),
            lease: Lease {
                lease_id: assignment.lease_id,
                expires_at: assignment
                    .lease_expires_at
                    .and_then(|at| SystemTime::try_from(at).ok()),
                duration: Timing::given_lease(assignment.timing.as_ref()),
            },
            players,
            scheduled,
        })
    }
}

impl Assignment {
    pub fn league_id(&self) -> &LeagueId {
        &self.ids.league_id
    }

    pub fn match_id(&self) -> MatchId {
        self.ids.match_id
    }

    pub fn game_type(&self) -> &str {
        &self.scheduled.game_type
    }

    /// Both players' ids, seat A first.
    pub fn player_ids(&self) -> &[PlayerId; 2] {
        &self.ids.players
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use league_proto::v2::MatchTiming;

    fn complete() -> MatchAssignment {
        MatchAssignment {
            r#match: Some(ScheduledMatch {
                league_id: "l1".into(),
                round_id: 1,
                match_id: "R1M1".into(),
                game_type: "even_odd".into(),
                player_a_id: "P01".into(),
                player_b_id: "P02".into(),
                ..ScheduledMatch::default()
            }),
            lease_id: "lease-1".into(),
            lease_expires_at: Some(prost_types::Timestamp {
                seconds: 4_000_000_000,
                nanos: 0,
            }),
            timing: Some(MatchTiming {
                lease_duration: Some(prost_types::Duration {
                    seconds: 45,
                    nanos: 0,
                }),
                ..MatchTiming::default()
            }),
            player_a: Some(AssignedPlayer {
                player_id: "P01".into(),
                ..AssignedPlayer::default()
            }),
            player_b: Some(AssignedPlayer {
                player_id: "P02".into(),
                ..AssignedPlayer::default()
            }),
        }
    }

    #[test]
    fn a_complete_assignment_parses_with_its_lease_and_timing() {
        let assignment = Assignment::try_from(complete()).expect("complete");
        assert_eq!(assignment.match_id(), "R1M1");
        assert_eq!(*assignment.player_ids(), ["P01", "P02"]);
        assert_eq!(assignment.lease.lease_id, "lease-1");
        assert_eq!(assignment.lease.duration, Some(Duration::from_secs(45)));
        assert!(assignment.lease.expires_at.is_some());
        assert_eq!(assignment.timing.join_timeout, Timing::default().join_timeout);
    }

    #[test]
    fn each_missing_field_is_named() {
        type Spoil = fn(&mut MatchAssignment);
        let cases: [(&str, Spoil); 10] = [
            ("match", |a| a.r#match = None),
            ("match.match_id", |a| a.r#match.as_mut().unwrap().match_id.clear()),
            ("match.match_id", |a| {
                a.r#match.as_mut().unwrap().match_id = "R1M01".into()
            }),
            ("match.league_id", |a| {
                a.r#match.as_mut().unwrap().league_id = "L1".into()
            }),
            ("match.player_a_id", |a| {
                a.r#match.as_mut().unwrap().player_a_id = "p01".into();
                a.player_a.as_mut().unwrap().player_id = "p01".into();
            }),
            ("match.player_b_id", |a| {
                a.r#match.as_mut().unwrap().player_b_id = "REF02".into();
                a.player_b.as_mut().unwrap().player_id = "REF02".into();
            }),
            ("match.game_type", |a| {
                a.r#match.as_mut().unwrap().game_type.clear()
            }),
            ("lease_id", |a| a.lease_id.clear()),
            ("player_b", |a| a.player_b = None),
            ("player_a", |a| {
                a.player_a.as_mut().unwrap().player_id = "P09".into()
            }),
        ];
        for (field, spoil) in cases {
            let mut wire = complete();
            spoil(&mut wire);
            let error = Assignment::try_from(wire).expect_err(field);
            assert_eq!(error.field, field);
        }
        let mut wire = complete();
        wire.lease_id.clear();
        assert_eq!(
            Assignment::try_from(wire).unwrap_err().to_string(),
            "the assignment of R1M1 has no usable lease_id"
        );
    }
}
