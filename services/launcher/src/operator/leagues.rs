//! `league leagues`: every league of the deployment, newest first.

use clap::Args;
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{LeagueStatus, ListLeaguesRequest, ListLeaguesResponse};
use league_runtime::credentials::operator_request;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;

use super::{Reading, failed};
use crate::output::{self, Rows, cell};
use league_report::columns::time;

#[derive(Debug, Clone, Args)]
pub struct LeaguesArgs {
    #[command(flatten)]
    pub reading: Reading,
}

pub async fn leagues(args: LeaguesArgs) -> anyhow::Result<()> {
    let mut operator = args.reading.connect().await?;
    let all = fetch(&mut operator.manager, &operator.token).await?;
    let mut rows = Rows::new(&league_report::columns::LEAGUES);
    for league in &all.leagues {
        rows.push(vec![
            league.league_id.clone(),
            league.game_type.clone(),
            status_name(league.status),
            cell(league.current_round_id),
            cell(league.total_rounds),
            cell(league.registered_players),
            league
                .champion
                .as_ref()
                .map(|row| row.player_id.clone())
                .unwrap_or_default(),
            time(league.created_at.as_ref()),
        ]);
    }
    output::print(args.reading.common.output, &rows, || {
        output::json("league.v2.ListLeaguesResponse", &all)
    })
}

/// Every league of the deployment, newest first.
pub async fn fetch(
    manager: &mut ManagerServiceClient<GrpcChannel>,
    token: &SecretString,
) -> anyhow::Result<ListLeaguesResponse> {
    let mut all = ListLeaguesResponse::default();
    let mut page_token = String::new();
    // Bounded: a page holds up to 100 leagues, and the list ends with an empty token.
    for _ in 0..1_000 {
        let request = operator_request(
            token,
            ListLeaguesRequest {
                page_size: 100,
                page_token,
            },
        );
        let page = manager
            .list_leagues(request)
            .await
            .map_err(failed("listing leagues"))?
            .into_inner();
        all.leagues.extend(page.leagues);
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    Ok(all)
}

/// A league's status as people say it.
pub fn status_name(status: i32) -> String {
    match LeagueStatus::try_from(status) {
        Ok(LeagueStatus::Registering) => "registering",
        Ok(LeagueStatus::Running) => "running",
        Ok(LeagueStatus::Completed) => "completed",
        Ok(LeagueStatus::Paused) => "paused",
        Ok(LeagueStatus::Cancelled) => "cancelled",
        _ => "unknown",
    }
    .to_owned()
}
