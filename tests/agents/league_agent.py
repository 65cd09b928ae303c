#!/usr/bin/env python3
"""A league.v2 player written the way other teams write theirs: Python's standard library only, a
JSON-RPC endpoint on /mcp, registration with the league manager, and one of three styles seen in real
traffic (tests/fixtures):

  message_type  peer-a: the message type as the method, full envelopes, answers in the JSON-RPC result,
                with "error": null beside it.
  separate      canonical method names; answers invitations and parity calls with a bare
                {"status": ...} and sends GAME_JOIN_ACK / CHOOSE_PARITY_RESPONSE back as separate calls.
  sloppy        peer-b: canonical names only (-32601 for anything else), registration without sender,
                timestamp or conversation_id, compact timestamps, a placeholder auth_token in replies,
                `accepted` and `choice` instead of `accept` and `parity_choice`.
  refusing      canonical names; plays, but refuses notifications the ways real agents do: GAME_ERROR
                with -32000 "Unknown message type", LEAGUE_COMPLETED with a result
                {"status": "unknown_message_type"}, ROUND_ANNOUNCEMENT with -32602 over a field,
                ROUND_COMPLETED with -32001 "Auth failed" (for `league probe`'s tests).
  auth_refusing every call refused with -32001 "Auth failed".

Usage: league_agent.py <league /mcp url> <style> <name> [<url for separate replies>]. The optional URL
is another gateway replica behind the same league, as a load balancer would pick. Prints one JSON line when the league completes:
{"name", "player_id", "received": {message_type: count}, "errors": [...]}.

It listens on 127.0.0.1 and registers that address. With LEAGUE_AGENT_HOST set it listens on every
address and registers that host name instead: how it runs in a container, where the league calls it at
the container's name (scripts/compose-smoke; a league outside a test refuses loopback endpoints).
"""

import json
import os
import random
import sys
import threading
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LEAGUE_URL, STYLE, NAME = sys.argv[1], sys.argv[2], sys.argv[3]
CONTACT_HOST = os.environ.get("LEAGUE_AGENT_HOST", "")
LISTEN_HOST = "0.0.0.0" if CONTACT_HOST else "127.0.0.1"
REPLY_URL = sys.argv[4] if len(sys.argv) > 4 else LEAGUE_URL
STATE = {"player_id": None, "token": None, "received": {}, "errors": []}
DONE = threading.Event()
LOCK = threading.Lock()

CANONICAL = {
    "handle_game_invitation": "GAME_INVITATION",
    "choose_parity": "CHOOSE_PARITY_CALL",
    "notify_match_result": "GAME_OVER",
    "notify_game_error": "GAME_ERROR",
    "notify_round": "ROUND_ANNOUNCEMENT",
    "update_standings": "LEAGUE_STANDINGS_UPDATE",
    "notify_round_completed": "ROUND_COMPLETED",
    "notify_league_completed": "LEAGUE_COMPLETED",
}


def now():
    if STYLE == "sloppy":
        return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def post(method, params, url=None):
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).encode()
    request = urllib.request.Request(url or LEAGUE_URL, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def envelope(message_type, conversation_id):
    return {
        "protocol": "league.v2",
        "message_type": message_type,
        "sender": f"player:{STATE['player_id']}",
        "timestamp": now(),
        "conversation_id": conversation_id,
        "auth_token": STATE["token"],
    }


def send_separately(message):
    """A reply sent as its own call, as some agents do."""
    try:
        answer = post(message["message_type"], message, REPLY_URL)
        if "error" in answer and answer["error"]:
            STATE["errors"].append(answer["error"])
    except Exception as error:  # noqa: BLE001 - reported in the summary
        STATE["errors"].append(str(error))


REFUSALS = {
    "GAME_ERROR": {"code": -32000, "message": "Unknown message type"},
    "ROUND_ANNOUNCEMENT": {"code": -32602, "message": "Missing required field: round_deadline"},
    "ROUND_COMPLETED": {"code": -32001, "message": "Auth failed"},
}


class Refusal(Exception):
    def __init__(self, error):
        super().__init__(error["message"])
        self.error = error


def handle(method, params):
    if STYLE == "auth_refusing":
        raise Refusal({"code": -32001, "message": "Auth failed"})
    message_type = params.get("message_type") or CANONICAL.get(method)
    if STYLE == "message_type":
        if method not in CANONICAL.values() and method not in CANONICAL:
            return None
    elif method not in CANONICAL:
        return None
    message_type = message_type or CANONICAL[method]
    with LOCK:
        STATE["received"][message_type] = STATE["received"].get(message_type, 0) + 1
    if STYLE == "refusing":
        if message_type in REFUSALS:
            raise Refusal(REFUSALS[message_type])
        if message_type == "LEAGUE_COMPLETED":
            return {"status": "unknown_message_type"}
    match_id = params.get("match_id")
    conversation_id = params.get("conversation_id")
    if message_type == "GAME_INVITATION":
        if STYLE == "separate":
            ack = envelope("GAME_JOIN_ACK", conversation_id)
            ack.update({"match_id": match_id, "player_id": STATE["player_id"], "arrival_timestamp": now(), "accept": True})
            threading.Thread(target=send_separately, args=(ack,)).start()
            return {"status": "joined"}
        reply = envelope("GAME_JOIN_ACK", conversation_id)
        reply.update({"match_id": match_id, "player_id": STATE["player_id"], "arrival_timestamp": now()})
        if STYLE == "sloppy":
            reply.update({"auth_token": "tok_p01_temp", "player_id": NAME, "accepted": True})
        else:
            reply["accept"] = True
        return reply
    if message_type == "CHOOSE_PARITY_CALL":
        choice = random.choice(["even", "odd"])
        if STYLE == "separate":
            answer = envelope("CHOOSE_PARITY_RESPONSE", conversation_id)
            answer.update({"match_id": match_id, "player_id": STATE["player_id"], "parity_choice": choice})
            threading.Thread(target=send_separately, args=(answer,)).start()
            return {"status": "thinking"}
        reply = envelope("CHOOSE_PARITY_RESPONSE", conversation_id)
        reply.update({"match_id": match_id, "player_id": STATE["player_id"]})
        if STYLE == "sloppy":
            reply.update({"auth_token": "tok_p01_temp", "choice": choice})
        else:
            reply["parity_choice"] = choice
        return reply
    return {"status": "acknowledged", "message_type": message_type}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        result = None
        try:
            result = handle(request.get("method", ""), request.get("params") or {})
        except Refusal as refusal:
            body = {"jsonrpc": "2.0", "error": refusal.error, "id": request.get("id")}
        else:
            body = self.answer(request, result)
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        # Only once the answer is out: main() then stops the server and the process exits, which would
        # cut an answer still being written.
        if isinstance(result, dict) and result.get("message_type") == "LEAGUE_COMPLETED":
            DONE.set()

    @staticmethod
    def answer(request, result):
        if result is None:
            return {"jsonrpc": "2.0", "error": {"code": -32601, "message": f"Method not found: {request.get('method')}"}, "id": request.get("id")}
        if STYLE == "message_type":
            return {"jsonrpc": "2.0", "result": result, "error": None, "id": request.get("id")}
        return {"jsonrpc": "2.0", "result": result, "id": request.get("id")}


def register(port):
    meta = {"display_name": NAME, "version": "1.0.0", "game_types": ["even_odd"], "contact_endpoint": f"http://{CONTACT_HOST or LISTEN_HOST}:{port}/mcp"}
    if STYLE == "sloppy":
        params = {"protocol": "league.v2", "message_type": "LEAGUE_REGISTER_REQUEST", "player_meta": meta}
        method = "register_player"
    else:
        params = {"protocol": "league.v2", "message_type": "LEAGUE_REGISTER_REQUEST", "sender": f"player:{NAME}",
                  "timestamp": now(), "conversation_id": f"conv-{NAME}-register", "player_meta": meta}
        method = "LEAGUE_REGISTER_REQUEST" if STYLE == "message_type" else "register_player"
    answer = post(method, params)
    result = answer["result"]
    if result.get("status") != "ACCEPTED":
        raise SystemExit(f"{NAME}: registration refused: {answer}")
    STATE["player_id"], STATE["token"] = result["player_id"], result["auth_token"]


def main():
    server = ThreadingHTTPServer((LISTEN_HOST, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    register(server.server_address[1])
    DONE.wait(timeout=300)
    server.shutdown()
    print(json.dumps({"name": NAME, "style": STYLE, "player_id": STATE["player_id"], "received": STATE["received"],
                      "errors": STATE["errors"], "completed": DONE.is_set()}), flush=True)


if __name__ == "__main__":
    main()
