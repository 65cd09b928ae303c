//! Reading an external referee's result (MATCH_RESULT_REPORT's `result`, GAME_OVER's `game_result`) from
//! any JSON object, in both compliance modes. Any panic is a bug.

#![no_main]

use league_v2::compliance::{Checker, Mode};
use league_v2::result::{self, Players};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(report)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let players = Players { a: "P01", b: "P02" };
    for mode in [Mode::Lenient, Mode::Strict] {
        let mut checker = Checker::new(mode);
        let _ = result::read("R1M1", players, &report, &mut checker);
    }
});
