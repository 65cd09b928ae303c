use league_domain::MatchId;
use league_proto::v2::{MatchContext, RequestMoveRequest, ResultStatus};
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::*;
use crate::memory::Outcome;
use crate::payload::{list, read_string, string};

fn rng() -> StdRng {
    StdRng::seed_from_u64(11)
}

fn my_game(choice: Option<Parity>) -> GameRecord {
    GameRecord {
        league_id: "L1".into(),
        match_id: Some(MatchId::new(1, 1)),
        opponent_id: "P02".into(),
        my_choice: choice,
        opponent_choice: None,
        outcome: Outcome::Draw,
        status: ResultStatus::Draw,
        at_fault: false,
    }
}

fn move_request(game_type: &str, step_context: Option<Struct>) -> RequestMoveRequest {
    RequestMoveRequest {
        player_id: "P01".into(),
        opponent_id: "P02".into(),
        context: Some(MatchContext {
            game_type: game_type.into(),
            ..MatchContext::default()
        }),
        step_context,
        ..RequestMoveRequest::default()
    }
}

#[test]
fn names_round_trip() {
    for kind in StrategyKind::ALL {
        assert_eq!(kind.to_string().parse::<StrategyKind>(), Ok(kind));
    }
    assert_eq!("always_even".parse(), Ok(StrategyKind::AlwaysEven));
    assert_eq!(
        "AlwaysEven".parse::<StrategyKind>(),
        Err(UnknownStrategy("AlwaysEven".into()))
    );
}

#[test]
fn fixed_strategies_ignore_history() {
    let history = [my_game(Some(Parity::Odd))];
    assert_eq!(
        StrategyKind::AlwaysEven.choose_parity("P02", &history, &mut rng()),
        Parity::Even
    );
    assert_eq!(
        StrategyKind::AlwaysOdd.choose_parity("P02", &[], &mut rng()),
        Parity::Odd
    );
}

#[test]
fn random_plays_both_parities() {
    let mut rng = rng();
    let evens = (0..200).filter(|_| StrategyKind::Random.choose_parity("P02", &[], &mut rng) == Parity::Even);
    let evens = evens.count();
    assert!((50..150).contains(&evens), "{evens} of 200");
}

#[test]
fn alternating_flips_its_own_last_choice() {
    let alternate =
        |history: &[GameRecord]| StrategyKind::Alternating.choose_parity("P09", history, &mut rng());
    assert_eq!(alternate(&[]), Parity::Even, "starts with even");
    assert_eq!(alternate(&[my_game(Some(Parity::Even))]), Parity::Odd);
    assert_eq!(
        alternate(&[my_game(Some(Parity::Even)), my_game(Some(Parity::Odd))]),
        Parity::Even
    );
    // A forfeited game (no choice of ours on record) does not count.
    assert_eq!(
        alternate(&[my_game(Some(Parity::Odd)), my_game(None)]),
        Parity::Even
    );
}

#[test]
fn even_odd_moves_are_parity_choices() {
    let context = object([
        ("action", string("choose_parity")),
        ("valid_choices", list([string("even"), string("odd")])),
    ]);
    for kind in StrategyKind::ALL {
        let payload = kind.choose_move(&move_request(EVEN_ODD, Some(context.clone())), &[], &mut rng());
        let choice = read_string(&payload, "parity_choice");
        assert!(matches!(choice, Some("even" | "odd")), "{kind}: {payload:?}");
    }
}

#[test]
fn tic_tac_toe_moves_are_positions() {
    let board = list(["X", "X", "", "O", "O", "", "", "", ""].map(string));
    let legal = list([2, 5, 6, 7, 8].map(number));
    let context = object([
        ("board", board),
        ("your_mark", string("O")),
        ("legal_moves", legal),
    ]);
    for kind in StrategyKind::ALL {
        let payload = kind.choose_move(&move_request(TIC_TAC_TOE, Some(context.clone())), &[], &mut rng());
        assert_eq!(
            payload,
            object([("position", number(5))]),
            "{kind}: O completes the middle row"
        );
    }
}

#[test]
fn unknown_games_and_unreadable_contexts_get_an_empty_move() {
    let empty = Struct::default();
    let adaptive = StrategyKind::Adaptive;
    assert_eq!(
        adaptive.choose_move(&move_request("chess", None), &[], &mut rng()),
        empty
    );
    assert_eq!(
        adaptive.choose_move(&move_request(TIC_TAC_TOE, None), &[], &mut rng()),
        empty
    );
    let nonsense = object([("board", string("full"))]);
    assert_eq!(
        adaptive.choose_move(&move_request(TIC_TAC_TOE, Some(nonsense)), &[], &mut rng()),
        empty
    );
    let no_context = RequestMoveRequest::default();
    assert_eq!(adaptive.choose_move(&no_context, &[], &mut rng()), empty);
}
