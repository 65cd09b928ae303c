# The compose stack of its own, shared by scripts/compose-smoke (proves `docker compose up`) and
# scripts/compose-bench (measures a league spread over containers). Sourced, not run; the caller sets
# SCRIPT (its name, for messages), PROJECT (the compose project) and REMOVE_IMAGES before sourcing.
#
# The engine: dockerd from Debian's docker.io with its own data root, exec root and socket, started with
# --iptables=false --ip6tables=false --ip-forward=false --bridge=none, so the machine's firewall, its
# default Docker socket and its network are never touched (builds use --network host; the compose network
# is an ordinary bridge between containers, and published ports are bound on 127.0.0.1 by docker-proxy).
# Everything it starts is stopped in a trap, on success and failure alike: containers, networks and
# volumes (compose down -v), dockerd by its PID, mounts left under its directories.
#
# Every wait is bounded and says what it waited for when it gives up.

REPO=$PWD
SMOKE_DATA=${SMOKE_DATA:-/var/lib/league-compose-smoke}
SMOKE_RUN=${SMOKE_RUN:-/run/league-compose-smoke}
# The client from docker.io (any other on PATH may lack what BuildKit builds need); the stand-ins'
# build scripts use it too.
export DOCKER=/usr/bin/docker

STARTED=$(date +%s)
PASSED=0
FAILED=0
WORK=""
DOCKERD_PID=""

step() { printf -- '--> %s\n' "$*"; }
pass() { PASSED=$((PASSED + 1)); printf 'PASS %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL %s\n' "$*"; }
# Fatal: nothing after it can be checked.
die() { fail "$*"; exit 1; }
summary() {
    printf '%s: %d passed, %d failed, %ds\n' "$SCRIPT" "$PASSED" "$FAILED" "$(($(date +%s) - STARTED))"
}

[ "$(id -u)" -eq 0 ] || { echo "$SCRIPT: run as root (it starts its own dockerd)" >&2; exit 1; }

# --- tools --------------------------------------------------------------------------------------------------
missing=()
[ -x /usr/sbin/dockerd ] && [ -x "$DOCKER" ] || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
    step "installing ${missing[*]} (Debian packages: downloads from the Debian archive)"
    apt-get update -qq || { echo "$SCRIPT: apt-get update failed; no container engine" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || { echo "$SCRIPT: cannot install ${missing[*]}; no container engine" >&2; exit 1; }
fi

# --- cleanup, armed before anything is started ----------------------------------------------------------------
cleanup() {
    local status=$?
    set +e
    if [ -n "$DOCKERD_PID" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
        if [ -n "$WORK" ] && [ -f "$WORK/env" ]; then
            clear_project || { echo "$SCRIPT: compose down failed twice:"; tail -n 20 "$WORK/down.log"; }
        fi
        if $REMOVE_IMAGES; then
            "$DOCKER" image ls -q | sort -u | xargs -r "$DOCKER" image rm -f >/dev/null 2>&1
            "$DOCKER" builder prune -af >/dev/null 2>&1
        fi
        kill -TERM "$DOCKERD_PID"
        for _ in $(seq 60); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
        if kill -0 "$DOCKERD_PID" 2>/dev/null; then
            echo "$SCRIPT: dockerd ($DOCKERD_PID) did not stop in 30 s; killing it"
            kill -KILL "$DOCKERD_PID"
        fi
    fi
    # Mounts the engine leaves behind (network namespaces, overlay layers of a killed engine).
    findmnt -rn -o TARGET | grep -E "^($SMOKE_RUN|$SMOKE_DATA)(/|$)" | sort -r | xargs -r -n1 umount -l
    rm -rf "$SMOKE_RUN"
    if $REMOVE_IMAGES; then rm -rf --one-file-system "$SMOKE_DATA"; fi
    [ -n "$WORK" ] && rm -rf "$WORK"
    if [ "$status" -ne 0 ] && [ "$FAILED" -eq 0 ]; then fail "aborted (exit status $status)"; fi
    summary
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

WORK=$(mktemp -d "${TMPDIR:-/tmp}/league-$SCRIPT.XXXXXX")
export DOCKER_HOST="unix://$SMOKE_RUN/docker.sock"
unset DOCKER_CONTEXT
compose() {
    docker-compose --project-name "$PROJECT" --project-directory "$REPO" --env-file "$WORK/env" \
        -f "$REPO/docker-compose.yml" -f "$REPO/deploy/standins/docker-compose.standins.yml" "$@"
}

# Containers a script runs beside the project, on its network (`docker run`; compose-smoke's external
# agent), carry this label with the project's name: compose does not know them, and its network cannot
# be removed while they are on it.
BESIDE_LABEL=league.beside-project

# clear_project: the project's containers, networks and volumes gone, and the containers beside it. Once
# in a while the engine still counts an endpoint of a container it has just removed and refuses to remove
# the network, and then the volumes stay too: a second `down` a moment later removes them. Run before `up`
# as well, so that what a killed run left (its database volume and finished leagues) never reaches the
# next one.
clear_project() {
    "$DOCKER" ps -aq --filter "label=$BESIDE_LABEL=$PROJECT" | xargs -r "$DOCKER" rm -f >/dev/null
    compose down -v --remove-orphans --timeout 30 >"$WORK/down.log" 2>&1 && return 0
    sleep 2
    compose down -v --remove-orphans --timeout 30 >>"$WORK/down.log" 2>&1
}

# --- the engine ---------------------------------------------------------------------------------------------
start_engine() {
    step "dockerd of its own ($SMOKE_RUN/docker.sock, data in $SMOKE_DATA)"
    if [ -e "$SMOKE_RUN/dockerd.pid" ] && kill -0 "$(cat "$SMOKE_RUN/dockerd.pid")" 2>/dev/null; then
        die "a dockerd from an earlier run is still running (PID $(cat "$SMOKE_RUN/dockerd.pid")); stop it first"
    fi
    mkdir -p "$SMOKE_RUN" "$SMOKE_DATA"
    /usr/sbin/dockerd --host "$DOCKER_HOST" --data-root "$SMOKE_DATA/docker" --exec-root "$SMOKE_RUN/exec" \
        --pidfile "$SMOKE_RUN/dockerd.pid" --iptables=false --ip6tables=false --ip-forward=false \
        --bridge=none --log-level=warn >"$WORK/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    for _ in $(seq 120); do
        "$DOCKER" version >/dev/null 2>&1 && break
        kill -0 "$DOCKERD_PID" 2>/dev/null || { tail -n 20 "$WORK/dockerd.log"; die "dockerd exited at start"; }
        sleep 0.5
    done
    "$DOCKER" version >/dev/null 2>&1 || { tail -n 20 "$WORK/dockerd.log"; die "dockerd did not answer within 60 s"; }
    pass "dockerd started (PID $DOCKERD_PID), $(docker-compose version --short) as docker-compose"
}

# --- images -------------------------------------------------------------------------------------------------
TARGET=${CARGO_TARGET_DIR:-$REPO/target}

build() { # build <what> <docker build args...>; the log is shown only on failure
    local what=$1
    shift
    if DOCKER_BUILDKIT=1 "$DOCKER" build --network host "$@" >"$WORK/build.log" 2>&1; then
        return 0
    fi
    tail -n 30 "$WORK/build.log"
    die "building $what failed (log above)"
}

# build_images LEAGUE_BINARY: the stand-ins and the league image from that binary. The OTLP receiver
# stand-in is the debug build CI's tests made (the same workspace and features as scripts/test, so
# nothing recompiles); the caller builds LEAGUE_BINARY.
build_images() {
    step "the OTLP receiver stand-in (cargo build, debug)"
    cargo build --locked --workspace --example otlp_receiver \
        || die "cargo build of the OTLP receiver failed"
    if ! "$DOCKER" image inspect debian:bookworm-slim >/dev/null 2>&1; then
        step "debian:bookworm-slim stand-in (debootstrap; kept in $SMOKE_DATA for the next run)"
        deploy/standins/debian/build || die "the debian stand-in could not be made"
    fi
    step "postgres stand-in, OTLP receiver stand-in, league image from $1"
    build "the postgres stand-in" -t league-standin/postgres deploy/standins/postgres
    mkdir -p "$WORK/receiver" "$WORK/league"
    cp "$TARGET/debug/examples/otlp_receiver" "$WORK/receiver/otlp_receiver"
    build "the receiver stand-in" -f deploy/standins/otlp-receiver/Dockerfile -t league-standin/otlp-receiver \
        "$WORK/receiver"
    cp "$1" "$WORK/league/league"
    build "the league image" -f Dockerfile --build-arg LEAGUE_BINARY_FROM=prebuilt -t league:local "$WORK/league"
    pass "images built without a registry"
}

# --- helpers for the league ------------------------------------------------------------------------------------
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
set_env() { # set_env NAME VALUE: in the env file compose reads
    grep -q "^$1=" "$WORK/env" || echo "$1=" >>"$WORK/env"
    sed -i "s|^$1=.*|$1=$2|" "$WORK/env"
}
env_value() { sed -n "s/^$1=//p" "$WORK/env"; }

# new_env: .env.example with a fresh operator token and free ports on 127.0.0.1 (gateway, receiver's UI
# and OTLP port); sets GATEWAY and RECEIVER_PORT, and clears what an earlier run of the project left.
new_env() {
    cp .env.example "$WORK/env"
    set_env LEAGUE_OPERATOR_TOKEN "$(openssl rand -hex 32)"
    local gateway_port
    gateway_port=$(free_port)
    set_env LEAGUE_GATEWAY_PORT "127.0.0.1:$gateway_port"
    RECEIVER_PORT=$(free_port)
    set_env JAEGER_UI_PORT "$RECEIVER_PORT"
    set_env JAEGER_OTLP_PORT "$(free_port)"
    GATEWAY=127.0.0.1:$gateway_port
    clear_project || { tail -n 20 "$WORK/down.log"; die "what an earlier run left could not be removed"; }
}

GATEWAY=""
rpc() { # rpc METHOD LEAGUE_ID: the JSON-RPC answer from the gateway, as docs/operations.md asks it
    curl -sS --max-time 10 "http://$GATEWAY/mcp" -H 'Content-Type: application/json' \
        -H "Authorization: Bearer $(env_value LEAGUE_OPERATOR_TOKEN)" \
        -d '{"jsonrpc":"2.0","id":1,"method":"'"$1"'","params":{"league_id":"'"$2"'"}}'
}
# A field of get_league_status's data (finished_matches, total_matches, status), or "" if unanswered.
status_field() { rpc get_league_status "$1" 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["result"]["data"][sys.argv[1]])
except Exception:
    print("")' "$2"; }

# wait_healthy SECONDS: every container of the project running and healthy where it has a healthcheck,
# and migrate exited 0.
wait_healthy() {
    local deadline=$(($(date +%s) + $1)) not_ready
    while :; do
        not_ready=$(compose ps -q | xargs -r "$DOCKER" inspect --format \
            '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.ExitCode}}' |
            awk '{ sub("^/", "", $1) }
                 $1 ~ /_migrate_/ { if (!($2 == "exited" && $4 == "0")) print $1 " " $2 " (exit " $4 ")"; next }
                 $2 != "running" || ($3 != "healthy" && $3 != "none") { print $1 " " $2 " " $3 }')
        [ -z "$not_ready" ] && return 0
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "not ready after $1 s:"; echo "$not_ready" | sed 's/^/    /'
            return 1
        fi
        sleep 1
    done
}

# wait_registered LEAGUE_ID COUNT SECONDS: COUNT players registered in the league.
wait_registered() {
    local deadline=$(($(date +%s) + $3))
    until [ "$(status_field "$1" registered_players)" = "$2" ]; do
        [ "$(date +%s)" -ge "$deadline" ] && die "$1: the $2 players did not register within $3 s"
        sleep 1
    done
}

# wait_league LEAGUE_ID SECONDS: the league COMPLETED with every match finished.
wait_league() {
    local deadline=$(($(date +%s) + $2)) status
    while :; do
        status=$(status_field "$1" status)
        [ "$status" = COMPLETED ] && return 0
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "league $1 not completed after $2 s: status '${status:-no answer}'," \
                "$(status_field "$1" finished_matches)/$(status_field "$1" total_matches) matches"
            return 1
        fi
        sleep 1
    done
}

# sql QUERY: psql in the compose Postgres, unaligned, fields separated by spaces (psql variables with -v).
sql() {
    compose exec -T postgres psql -U "$(env_value POSTGRES_USER)" -d "$(env_value POSTGRES_DB)" -At -F ' ' "$@"
}
