//! A lease as a referee names it in a renewal or a release: its league and match ids parsed where the
//! request enters (crate::ids), so a malformed one refuses the whole call before anything is written.

use league_domain::{LeagueId, MatchId};
use league_proto::v2::LeaseRef;

use crate::error::ManagerResult;
use crate::ids;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub league_id: LeagueId,
    pub match_id: MatchId,
    /// Empty in a renewal that stands for the lease the referee holds now (crate::league::queue::renew).
    pub lease_id: String,
}

impl Lease {
    /// Every lease of a request, or the refusal of the first malformed one.
    pub fn parse_all(leases: &[LeaseRef]) -> ManagerResult<Vec<Lease>> {
        leases
            .iter()
            .map(|lease| {
                Ok(Lease {
                    league_id: ids::required("leases.league_id", &lease.league_id)?,
                    match_id: ids::required("leases.match_id", &lease.match_id)?,
                    lease_id: lease.lease_id.clone(),
                })
            })
            .collect()
    }

    /// Whether this is the lease of the match a row names by league and match id.
    pub fn is_of(&self, league_id: &str, match_id: &str) -> bool {
        self.league_id == league_id && self.match_id == match_id
    }

    /// The ids of `leases` as three columns (league, match, lease), for a statement's `unnest`.
    pub fn columns(leases: &[Lease]) -> (Vec<&str>, Vec<String>, Vec<&str>) {
        (
            leases.iter().map(|lease| lease.league_id.as_str()).collect(),
            leases.iter().map(|lease| lease.match_id.to_string()).collect(),
            leases.iter().map(|lease| lease.lease_id.as_str()).collect(),
        )
    }
}

impl From<&Lease> for LeaseRef {
    fn from(lease: &Lease) -> LeaseRef {
        LeaseRef {
            league_id: lease.league_id.to_string(),
            match_id: lease.match_id.to_string(),
            lease_id: lease.lease_id.clone(),
        }
    }
}
