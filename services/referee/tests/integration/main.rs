//! The referee's integration tests, one binary (one link instead of one per file): the match runner
//! against scripted players on paused tokio time (`runner`), and the worker against a fake manager and a
//! fake player host served over real gRPC on 127.0.0.1 (`worker`), and the calls to one player endpoint
//! going many to an exchange (`endpoint_calls`).

mod endpoint_calls;
mod runner;
mod worker;
