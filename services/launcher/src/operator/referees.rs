//! Who referees is the operator's decision (ADR 0039): `league referees` lists the registered referees
//! (revoked ones too), `league revoke-referee <id>` revokes one — its credentials stop working, its
//! unfinished matches go to other referees uncharged, and the referee registration token is rotated so
//! that it cannot register anew (ADR 0082) — and `league referee-token` prints the token a referee must
//! present to register (`--rotate`: a new one).

use clap::Args;
use league_domain::RefereeId;
use league_proto::v2::{
    AgentKind, GetRefereeRegistrationTokenRequest, ListAgentsRequest, RevokeRefereeRequest,
    RotateRefereeRegistrationTokenRequest,
};

use super::{Common, Operator, failed};
use crate::output::{self, Rows, cell};
use league_report::columns::time;

#[derive(Debug, Clone, Args)]
pub struct RefereesArgs {
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Clone, Args)]
pub struct RevokeRefereeArgs {
    /// The referee's id (`REF03`), as `league referees` lists it.
    pub referee_id: RefereeId,
}

#[derive(Debug, Clone, Args)]
pub struct RefereeTokenArgs {
    /// Replace the token by a new one and print it: referees registered keep their own credentials,
    /// new ones need the new token.
    #[arg(long)]
    pub rotate: bool,
}

pub async fn referees(args: RefereesArgs) -> anyhow::Result<()> {
    let operator = Operator::connect()?;
    let listed = operator
        .agents()?
        .list_agents(operator.request(ListAgentsRequest {
            kind: AgentKind::Referee as i32,
            label: String::new(),
            include_revoked: true,
        }))
        .await
        .map_err(failed("listing referees"))?
        .into_inner();
    let mut rows = Rows::new(&[
        "referee", "name", "external", "capacity", "running", "status", "revoked",
    ]);
    for referee in &listed.agents {
        let meta = referee.meta.clone().unwrap_or_default();
        let external = meta.labels.get(league_proto::EXTERNAL_LABEL).map(String::as_str) == Some("true");
        rows.push(vec![
            referee.agent_id.clone(),
            meta.display_name,
            cell(if external { "yes" } else { "no" }),
            cell(referee.max_concurrent_matches),
            cell(referee.running_matches),
            cell(if referee.revoked_at.is_some() {
                "revoked"
            } else {
                "active"
            }),
            time(referee.revoked_at.as_ref()),
        ]);
    }
    output::print(args.common.output, &rows, || {
        output::json("league.v2.ListAgentsResponse", &listed)
    })
}

pub async fn revoke(args: RevokeRefereeArgs) -> anyhow::Result<()> {
    let operator = Operator::connect()?;
    let revoked = operator
        .agents()?
        .revoke_referee(operator.request(RevokeRefereeRequest {
            referee_id: args.referee_id.to_string(),
        }))
        .await
        .map_err(failed("revoking the referee"))?
        .into_inner();
    if revoked.already_revoked {
        println!("{} was revoked already", args.referee_id);
    } else {
        println!(
            "{} revoked: its reports, claims and registrations are refused",
            args.referee_id
        );
    }
    if !revoked.released_match_ids.is_empty() {
        println!(
            "handed to other referees, uncharged: {}",
            revoked.released_match_ids.join(", ")
        );
    }
    if revoked.registration_token_rotated {
        println!(
            "the referee registration token was rotated: `league referee-token` shows the new one \
             (registered referees keep their own credentials)"
        );
    } else {
        // Said on stderr: the revocation holds, but a referee knowing the token could register anew.
        eprintln!(
            "warning: the referee registration token was not rotated: {}",
            revoked.registration_token_kept_because
        );
    }
    Ok(())
}

pub async fn token(args: RefereeTokenArgs) -> anyhow::Result<()> {
    let operator = Operator::connect()?;
    if args.rotate {
        let rotated = operator
            .agents()?
            .rotate_referee_registration_token(operator.request(RotateRefereeRegistrationTokenRequest {}))
            .await
            .map_err(failed("rotating the referee registration token"))?
            .into_inner();
        // Printed alone, so that `$(league referee-token --rotate)` is the new token.
        println!("{}", rotated.token);
        return Ok(());
    }
    let admission = operator
        .agents()?
        .get_referee_registration_token(operator.request(GetRefereeRegistrationTokenRequest {}))
        .await
        .map_err(failed("reading the referee registration token"))?
        .into_inner();
    if admission.open {
        println!("referee registration is open: any referee registers without a token (a local trial)");
    } else {
        // Printed alone, so that `$(league referee-token)` is the token.
        println!("{}", admission.token);
    }
    Ok(())
}
