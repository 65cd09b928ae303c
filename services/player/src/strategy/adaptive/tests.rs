use league_domain::MatchId;
use league_proto::v2::ResultStatus;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::*;
use Outcome::{Draw, Loss, Win};
use Parity::{Even, Odd};

fn games(opponent_id: &str, seen: &[Seen]) -> Vec<GameRecord> {
    seen.iter()
        .zip(0..)
        .map(|(&(choice, outcome), n)| GameRecord {
            league_id: "L1".into(),
            match_id: Some(MatchId::new(n + 1, 1)),
            opponent_id: opponent_id.into(),
            my_choice: Some(Even),
            opponent_choice: Some(choice),
            outcome,
            status: ResultStatus::Win,
            at_fault: false,
        })
        .collect()
}

fn choices(pattern: &str) -> Vec<Parity> {
    pattern
        .chars()
        .map(|c| if c == 'E' { Even } else { Odd })
        .collect()
}

fn seen(pattern: &str) -> Vec<Seen> {
    choices(pattern)
        .into_iter()
        .map(|choice| (choice, Draw))
        .collect()
}

/// What `choose` answers over many calls, as (evens, odds).
fn tally(opponent_id: &str, history: &[GameRecord]) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(7);
    let evens = (0..200)
        .filter(|_| choose(opponent_id, history, &mut rng) == Even)
        .count();
    (evens, 200 - evens)
}

#[test]
fn too_little_history_against_this_opponent_plays_at_random() {
    // Plenty of history, but against someone else; only four games against P02.
    let mut history = games("P03", &seen("EEEEEEEEEEEE"));
    history.extend(games("P02", &seen("EEEE")));
    let (evens, odds) = tally("P02", &history);
    assert!(evens > 50 && odds > 50, "random-ish: {evens} even, {odds} odd");
}

#[test]
fn games_without_the_opponents_choice_do_not_count() {
    let mut history = games("P02", &seen("EEEEEEEEEE"));
    for game in &mut history[..6] {
        game.opponent_choice = None; // forfeits: nothing was revealed
    }
    let (evens, odds) = tally("P02", &history);
    assert!(evens > 50 && odds > 50, "random-ish: {evens} even, {odds} odd");
}

#[test]
fn a_biased_opponent_is_exploited() {
    // 9 of 10 even: χ² = 6.4 > 3.841, so play even, whatever the later detectors would say.
    assert_eq!(frequency_bias(&choices("EEEEOEEEEE")), Some(Even));
    assert_eq!(frequency_bias(&choices("OOOEOOOOOOOO")), Some(Odd));
    assert_eq!(tally("P02", &games("P02", &seen("EEEEOEEEEE"))), (200, 0));
    assert_eq!(tally("P02", &games("P02", &seen("OOOOOOOOOOOO"))), (0, 200));
}

#[test]
fn the_frequency_test_needs_ten_games_and_significance() {
    assert_eq!(
        frequency_bias(&choices("EEEEEEEEE")),
        None,
        "nine games are too few"
    );
    // 7 of 10: χ² = 1.6; 8 of 10: χ² = 3.6; both below the critical value.
    assert_eq!(frequency_bias(&choices("EEEOEEOEOE")), None);
    assert_eq!(frequency_bias(&choices("EEEOEEOEEE")), None);
    assert_eq!(frequency_bias(&choices("EOEOEOEOEO")), None);
}

#[test]
fn an_alternating_opponent_is_predicted() {
    assert_eq!(alternation_prediction(&choices("EOEOE")), Some(Odd));
    assert_eq!(alternation_prediction(&choices("EOEOEO")), Some(Even));
    // Only the last ten count: a long run of evens before them does not hide the pattern.
    assert_eq!(
        alternation_prediction(&choices("EEEEEEEEOEOEOEOEOEO")),
        Some(Even)
    );
    // 8 of 9 pairs differ (89 %) is alternation; 7 of 9 (78 %) is not; 4 of 5 (80 %) is not.
    assert_eq!(alternation_prediction(&choices("EOEOEOEOOE")), Some(Odd));
    assert_eq!(alternation_prediction(&choices("EOEEOEOOEO")), None);
    assert_eq!(alternation_prediction(&choices("EOEOOE")), None);
    assert_eq!(alternation_prediction(&choices("EOE")), None, "too short");
    // Through `choose`: twelve games, six of each, so no bias, and the alternation wins.
    assert_eq!(tally("P02", &games("P02", &seen("EOEOEOEOEOEO"))), (200, 0));
}

#[test]
fn the_conditional_detector_uses_what_followed_the_same_result() {
    // After each draw the opponent chose odd; the last game was a draw. No bias (too few games) and no
    // alternation (4 of 5 pairs).
    let history: Vec<Seen> = vec![
        (Even, Draw),
        (Odd, Win),
        (Even, Draw),
        (Odd, Draw),
        (Odd, Win),
        (Even, Draw),
    ];
    assert_eq!(conditional_prediction(&history), Odd);
    assert_eq!(tally("P02", &games("P02", &history)), (0, 200));
}

#[test]
fn the_conditional_detector_defaults_to_even() {
    assert_eq!(conditional_prediction(&[]), Even);
    assert_eq!(
        conditional_prediction(&[(Odd, Win), (Odd, Win)]),
        Even,
        "fewer than three games"
    );
    // The last result (a loss) never happened before.
    assert_eq!(
        conditional_prediction(&[(Odd, Win), (Odd, Win), (Odd, Loss)]),
        Even
    );
    // One odd and one even after losses: a tie.
    assert_eq!(
        conditional_prediction(&[(Odd, Loss), (Odd, Loss), (Even, Win), (Odd, Loss)]),
        Even
    );
}
