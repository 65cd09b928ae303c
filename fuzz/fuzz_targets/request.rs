//! The gateway's request path on any bytes: JSON-RPC framing, then for every call the dialect
//! resolution and the envelope check in both compliance modes, as `/mcp` does before anything
//! reaches the league. Any panic is a bug; every input must end in a value or an error.

#![no_main]

use league_gateway::compliance::{Checker, Mode};
use league_gateway::dialect;
use league_gateway::jsonrpc::{self, Body};
use league_gateway::wire::envelope;
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
