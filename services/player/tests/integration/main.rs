//! The player host's integration tests, one binary (one link instead of one per file): the host served
//! over real gRPC as a referee and the manager call it, bots registering against a fake manager, and the
//! `llm` strategy against a fake model endpoint, all on 127.0.0.1:0.

mod llm;
mod player_host;
mod registration;
