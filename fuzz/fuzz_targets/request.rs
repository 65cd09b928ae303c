//! A request's bytes through the league.v2 layer (league-v2) as the gateway's `/mcp` takes them before
//! anything reaches the league: JSON-RPC framing, then for every call the dialect resolution and the
//! envelope check in both compliance modes. Any panic is a bug; every input must end in a value or an
//! error.

#![no_main]

use league_v2::compliance::{Checker, Mode};
use league_v2::dialect;
use league_v2::envelope;
use league_v2::jsonrpc::{self, Body};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let calls = match jsonrpc::parse(data) {
        Err(_) => return,
        Ok(Body::Single(call)) => vec![call],
        Ok(Body::Batch(calls)) => calls,
    };
    for call in calls.into_iter().flatten() {
        let Ok(resolved) = dialect::resolve(&call.method, call.params) else {
            continue;
        };
        for mode in [Mode::Lenient, Mode::Strict] {
            for needs_token in [false, true] {
                let mut checker = Checker::new(mode);
                let _ = envelope::check(&resolved.message, &mut checker, needs_token);
            }
        }
    }
});
