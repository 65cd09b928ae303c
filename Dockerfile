# One image for every role: it holds the single `league` binary (ADR 0006), and the role is the command —
# `league manager`, `league referee`, `league player-host`, `league gateway`, `league migrate` (docs/adr/0009).
#
#   docker build -t league:dev .
#   docker run --rm league:dev --help
#
# Stages: chef (the toolchain and cargo-chef) → planner (the dependency recipe: manifests and Cargo.lock
# only) → builder (dependencies compiled in their own layer, reused until Cargo.lock or a manifest changes;
# then our crates) → runtime (Debian slim, the binary, a non-root user). No protoc anywhere: protox
# compiles the .proto files inside proto/build.rs. No `# syntax=` line: the builder's own Dockerfile
# frontend reads this file, so a build fetches no frontend image.
#
# A binary built already (CI's, by `cargo build`) goes into the same runtime stage without the builder
# stages (BuildKit skips the stages the target does not need), from a build context holding it as `league`:
#
#   DOCKER_BUILDKIT=1 docker build -f Dockerfile --build-arg LEAGUE_BINARY_FROM=prebuilt -t league:local <dir>

# The toolchain CI builds and tests with (Cargo.toml's rust-version, 1.88, is the minimum), on the Debian
# release the runtime stage uses, so the binary links against the same glibc it runs with.
ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm
# Where the binary comes from: `builder` (compiled here) or `prebuilt` (the build context's `league`).
ARG LEAGUE_BINARY_FROM=builder

FROM rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS chef
# Symbols are stripped in every stage alike: the setting is part of each crate's fingerprint, so the
# dependencies cooked below stay valid for the final build.
ENV CARGO_PROFILE_RELEASE_STRIP=symbols \
    CARGO_TERM_COLOR=never
RUN cargo install cargo-chef --locked --version 0.1.78
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS builder
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --package league-launcher --recipe-path recipe.json
COPY . .
RUN cargo build --release --locked --package league-launcher \
    && install -m 0755 target/release/league /usr/local/bin/league

FROM scratch AS prebuilt
COPY league /usr/local/bin/league

# hadolint ignore=DL3006
FROM ${LEAGUE_BINARY_FROM} AS binary

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
LABEL org.opencontainers.image.title="league" \
      org.opencontainers.image.description="League server for autonomous agents: manager, referee, player host, gateway (one binary)" \
      org.opencontainers.image.licenses="MIT"
# ca-certificates for TLS to a remote collector or database; nothing else is installed. Its version is
# not pinned: the Debian release is, and a pinned package version breaks the build at the next point release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 league \
    && useradd --system --uid 10001 --gid league --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin league \
    && install -d -o 10001 -g 10001 -m 0700 /var/lib/league /var/lib/league/secrets /var/lib/league/agents
# /var/lib/league/secrets: where the manager keeps the referee registration token it generates;
# /var/lib/league/agents: where referees and player hosts keep their identities (LEAGUE_STATE_DIR). Owned
# by the league user here, so a named volume mounted on either starts with that owner.
COPY --from=binary /usr/local/bin/league /usr/local/bin/league
# A numeric user, so Kubernetes can verify runAsNonRoot without resolving names.
USER 10001:10001
WORKDIR /tmp
# Documentation only; compose and Kubernetes decide what is reachable. 8000 gateway HTTP (/mcp);
# 50051 manager, 50052 referee, 50053 player host, 50054 gateway bridge (gRPC); 9464 admin
# (/metrics, /healthz, /readyz).
EXPOSE 8000 50051 50052 50053 50054 9464
# The binary handles SIGTERM itself (graceful shutdown); no init process is needed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/league"]
CMD ["--help"]
