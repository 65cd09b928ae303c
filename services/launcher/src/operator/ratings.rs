//! `league ratings`: each player's Glicko-2 rating with its uncertainty, across every completed league
//! of one game in the deployment (games never mix: a player's even_odd results say nothing of its
//! tic_tac_toe). Each league is one rating period (every result against the opponents' ratings
//! from before the league), oldest league first; a technical loss counts as a loss, a double forfeit
//! not at all. Computed from the recorded results on each call, so it needs no state of its own.

use std::collections::BTreeMap;

use clap::Args;
use league_domain::GameType;
use league_proto::v2::{GetStandingsRequest, LeagueStatus, LeagueSummary, ResultStatus, ScheduledMatch};
use serde_json::json;
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2_rating_period};

use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_runtime::grpc::GrpcChannel;
use secrecy::SecretString;

use super::leagues;
use crate::output::{self, Format, Rows, cell};

#[derive(Debug, Clone, Args)]
pub struct RatingsArgs {
    /// How to print: table, json or csv.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub output: Format,
    /// The game whose leagues are rated (each game is rated on its own).
    #[arg(long, default_value_t = GameType::default())]
    pub game: GameType,
    #[command(flatten)]
    pub from: super::ReadFrom,
}

/// A player's standing across leagues.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rated {
    pub rating: Glicko2Rating,
    pub matches: u32,
    pub leagues: u32,
}

pub async fn ratings(args: RatingsArgs) -> anyhow::Result<()> {
    let mut operator = args.from.connect().await?;
    let (completed, rated) = current(&mut operator.manager, &operator.token, args.game.as_str()).await?;
    let names = names(&mut operator, &completed).await?;
    let name_of = |player: &str| names.get(player).cloned().unwrap_or_default();
    let mut ranked: Vec<(&String, &Rated)> = rated.iter().collect();
    ranked.sort_by(|a, b| b.1.rating.rating.total_cmp(&a.1.rating.rating).then(a.0.cmp(b.0)));
    // The rank, the player and its name, then the rating's columns.
    let mut columns = vec!["rank", crate::columns::RATINGS[0], "display_name"];
    columns.extend(&crate::columns::RATINGS[1..]);
    let mut rows = Rows::new(&columns);
    for (rank, (player, rated)) in ranked.iter().enumerate() {
        let mut row = vec![cell(rank + 1)];
        let mut rating = crate::columns::rating(player, rated);
        rating.insert(1, name_of(player));
        row.extend(rating);
        rows.push(row);
    }
    output::print(args.output, &rows, || {
        Ok(json!({
            "game_type": args.game.as_str(),
            "leagues": completed.iter().map(|league| league.league_id.clone()).collect::<Vec<_>>(),
            "ratings": ranked.iter().map(|(player, rated)| json!({
                "player_id": player,
                "display_name": name_of(player),
                "rating": rated.rating.rating,
                "deviation": rated.rating.deviation,
                "volatility": rated.rating.volatility,
                "matches": rated.matches,
                "leagues": rated.leagues,
            })).collect::<Vec<_>>(),
        }))
    })
}

/// Each rated player's name, as its latest league among `completed` (oldest first) shows it.
async fn names(
    operator: &mut super::Operator,
    completed: &[LeagueSummary],
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut names = BTreeMap::new();
    for league in completed {
        let standings = operator
            .manager
            .get_standings(operator.request(GetStandingsRequest {
                league_id: league.league_id.clone(),
            }))
            .await
            .map_err(super::failed("reading the players' names"))?
            .into_inner();
        names.extend(
            standings
                .standings
                .into_iter()
                .map(|row| (row.player_id, row.display_name)),
        );
    }
    Ok(names)
}

/// The completed leagues of `game_type`, oldest first, and every player's rating after them.
pub async fn current(
    manager: &mut ManagerServiceClient<GrpcChannel>,
    token: &SecretString,
    game_type: &str,
) -> anyhow::Result<(Vec<LeagueSummary>, BTreeMap<String, Rated>)> {
    let completed = completed_of(leagues::fetch(manager, token).await?.leagues, game_type);
    let mut periods = vec![];
    for league in &completed {
        let played = crate::report::data::schedule(manager, token, &league.league_id).await?;
        periods.push(played.into_iter().flat_map(|round| round.matches).collect());
    }
    let rated = rate(&periods);
    Ok((completed, rated))
}

/// The completed leagues of `game_type` among `leagues`, oldest first: one game's rating periods.
fn completed_of(leagues: Vec<LeagueSummary>, game_type: &str) -> Vec<LeagueSummary> {
    let mut completed: Vec<_> = leagues
        .into_iter()
        .filter(|league| league.status == LeagueStatus::Completed as i32 && league.game_type == game_type)
        .collect();
    completed.sort_by_key(|league| league.completed_at.map(|at| (at.seconds, at.nanos)));
    completed
}

impl Rated {
    /// The rating and two deviations (about 95 % of the time the true rating lies within them).
    pub fn shown(&self) -> (String, String) {
        (
            format!("{:.0}", self.rating.rating),
            format!("{:.0}", 2.0 * self.rating.deviation),
        )
    }
}

/// Ratings after `periods` (each a league's matches), everyone starting at Glicko-2's defaults.
pub fn rate(periods: &[Vec<ScheduledMatch>]) -> BTreeMap<String, Rated> {
    let config = Glicko2Config::default();
    let mut rated: BTreeMap<String, Rated> = BTreeMap::new();
    for matches in periods {
        let before = rated.clone();
        let rating_of = |player: &str| before.get(player).map(|rated| rated.rating).unwrap_or_default();
        let mut results: BTreeMap<String, Vec<(Glicko2Rating, Outcomes)>> = BTreeMap::new();
        for played in matches {
            let Some(outcome) = outcome(played) else {
                continue;
            };
            let (a, b) = (&played.player_a_id, &played.player_b_id);
            let mirrored = match outcome {
                Outcomes::WIN => Outcomes::LOSS,
                Outcomes::LOSS => Outcomes::WIN,
                Outcomes::DRAW => Outcomes::DRAW,
            };
            results
                .entry(a.clone())
                .or_default()
                .push((rating_of(b), outcome));
            results
                .entry(b.clone())
                .or_default()
                .push((rating_of(a), mirrored));
        }
        for (player, games) in results {
            let entry = rated.entry(player.clone()).or_default();
            entry.rating = glicko2_rating_period(&rating_of(&player), &games, &config);
            entry.matches += games.len() as u32;
            entry.leagues += 1;
        }
    }
    rated
}

/// Seat A's outcome of a finished match; `None` when it does not count (unfinished, double forfeit).
fn outcome(played: &ScheduledMatch) -> Option<Outcomes> {
    let result = played.result.as_ref()?;
    let forfeits = result.at_fault_player_ids.len();
    if result.winner_player_id == played.player_a_id {
        Some(Outcomes::WIN)
    } else if result.winner_player_id == played.player_b_id {
        Some(Outcomes::LOSS)
    } else if result.status == ResultStatus::Draw as i32 && forfeits == 0 {
        Some(Outcomes::DRAW)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::MatchResult;

    use super::*;

    fn played(a: &str, b: &str, winner: &str) -> ScheduledMatch {
        ScheduledMatch {
            player_a_id: a.into(),
            player_b_id: b.into(),
            result: Some(MatchResult {
                status: if winner.is_empty() {
                    ResultStatus::Draw
                } else {
                    ResultStatus::Win
                } as i32,
                winner_player_id: winner.into(),
                ..MatchResult::default()
            }),
            ..ScheduledMatch::default()
        }
    }

    #[test]
    fn winners_rise_losers_fall_and_uncertainty_shrinks_with_each_league() {
        let league = vec![
            played("P01", "P02", "P01"),
            played("P01", "P03", "P01"),
            played("P02", "P03", ""),
        ];
        let once = rate(std::slice::from_ref(&league));
        let (p1, p2, p3) = (&once["P01"], &once["P02"], &once["P03"]);
        assert!(p1.rating.rating > 1500.0 && p2.rating.rating < 1500.0, "{once:?}");
        assert!(
            (p2.rating.rating - p3.rating.rating).abs() < 1e-9,
            "equal records, equal ratings"
        );
        assert!(p1.rating.deviation < 350.0);
        assert_eq!((p1.matches, p1.leagues), (2, 1));
        let twice = rate(&[league.clone(), league]);
        assert!(twice["P01"].rating.rating > p1.rating.rating);
        assert!(twice["P01"].rating.deviation < p1.rating.deviation);
        assert_eq!((twice["P01"].matches, twice["P01"].leagues), (4, 2));
    }

    #[test]
    fn each_game_is_rated_from_its_own_leagues_oldest_first() {
        let league = |id: &str, game: &str, status: LeagueStatus, completed_at: i64| LeagueSummary {
            league_id: id.into(),
            game_type: game.into(),
            status: status as i32,
            completed_at: Some(prost_types::Timestamp {
                seconds: completed_at,
                nanos: 0,
            }),
            ..LeagueSummary::default()
        };
        let leagues = vec![
            league("late_even_odd", "even_odd", LeagueStatus::Completed, 30),
            league("tic_tac_toe", "tic_tac_toe", LeagueStatus::Completed, 20),
            league("early_even_odd", "even_odd", LeagueStatus::Completed, 10),
            league("running_even_odd", "even_odd", LeagueStatus::Running, 0),
        ];
        let ids = |game: &str| -> Vec<String> {
            completed_of(leagues.clone(), game)
                .into_iter()
                .map(|league| league.league_id)
                .collect()
        };
        assert_eq!(ids("even_odd"), ["early_even_odd", "late_even_odd"]);
        assert_eq!(ids("tic_tac_toe"), ["tic_tac_toe"]);
        assert!(ids("chess").is_empty());
    }

    #[test]
    fn unfinished_matches_and_double_forfeits_do_not_count() {
        let mut forfeit = played("P01", "P02", "");
        if let Some(result) = forfeit.result.as_mut() {
            result.status = ResultStatus::DoubleForfeit as i32;
            result.at_fault_player_ids = vec!["P01".into(), "P02".into()];
        }
        let unfinished = ScheduledMatch {
            player_a_id: "P01".into(),
            player_b_id: "P02".into(),
            ..ScheduledMatch::default()
        };
        assert!(rate(&[vec![forfeit, unfinished]]).is_empty());
    }
}
