#!/usr/bin/env python3
"""A league.v2 player written from the specification, strict the way the most careful real agents are:
every message it receives is checked by tests/agents/conformance.py (envelope, sender form, token,
timestamp, required fields) and anything off-spec is refused as those agents refuse it (HTTP 401/400
with a JSON-RPC error). Python's standard library only.

Usage: strict_player.py <league /mcp url> <family> <name> [<methods>]

  family   typed: every sender must match ^(player|referee|league_manager):[A-Z0-9]+$ (the manager is
                  `league_manager:LM01`);
           bare:  the manager must be exactly `league_manager`.
           A registration response that fails the check is discarded and the player registers again
           (at most 3 times), as real agents do.
  methods  both (default): the canonical method names and the message type as the method;
           lower: only the message type in lower case as the method (`game_invitation`); it registers
                  with the canonical `register_player`, so the league must find that name itself;
           nested: the lower-case message type as the method with the message nested under that name
                   (`{"game_invitation": {...}}`), answers every unknown method 200 {"status": "ok"},
                   and registers the same way;
           details: the lower-case message type as the method, the envelope at the top of the params and
                    only the message's own details nested under that name (`{"protocol": …, "sender": …,
                    "game_invitation": {"match_id": …}}`), answers every unknown method 200
                    {"status": "ok"}, and registers the same way;
           receive: `receive_<message type in lower case>` (registers with
                    `receive_league_register_request`);
           handle_message: one method `handle_message`, the message in `params.message` (registers so);
           mcp_message: one method `mcp_message`, the message as the params (registers so);
           tools_call: one method `tools/call`, as MCP frames a tool call but with no MCP session (no
                       `initialize`): `{"name": <canonical method>, "arguments": <the message>}`, answered
                       with the reply as the result; registers with `tools/call` of `register_player`;
           legacy: the older revision's names: canonical, but `parity_choose` for the parity call
                   (registers with `league_register`).

Prints one JSON line when the league completes (or it gives up):
{"name", "family", "methods", "player_id", "registrations", "received": {message_type: count},
 "refused": {reason: count}, "unknown_methods": count of -32601 answers, "errors": [...], "completed"}.
"""

import json
import os
import random
import sys
import threading
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402

LEAGUE_URL, FAMILY, NAME = sys.argv[1], sys.argv[2], sys.argv[3]
METHODS = sys.argv[4] if len(sys.argv) > 4 else "both"
assert FAMILY in conformance.FAMILIES, f"family must be one of {conformance.FAMILIES}"
STYLES = ("both", "lower", "nested", "details", "receive", "handle_message", "mcp_message", "tools_call", "legacy")
assert METHODS in STYLES, f"methods must be one of {STYLES}"
STATE = {"player_id": None, "token": None, "league_token": None, "registrations": 0, "received": {}, "refused": {},
         "unknown_methods": 0, "errors": []}
DONE = threading.Event()
LOCK = threading.Lock()


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def envelope(message_type, conversation_id):
    return {
        "protocol": conformance.PROTOCOL,
        "message_type": message_type,
        "sender": conformance.sender("player", STATE["player_id"]),
        "timestamp": now(),
        "conversation_id": conversation_id,
        "auth_token": STATE["token"],
    }


def count(table, key):
    with LOCK:
        STATE[table][key] = STATE[table].get(key, 0) + 1


def message_of(method, params):
    """The message a call carries, and the type its method names (None: a method this agent lacks)."""
    if METHODS == "both":
        named = conformance.CANONICAL_METHODS.get(method) or (method if method in conformance.MESSAGES else None)
        return params, named
    if METHODS == "receive":
        kind = method[len("receive_"):].upper() if method.startswith("receive_") else None
        return params, (kind if kind in conformance.MESSAGES else None)
    if METHODS in ("handle_message", "mcp_message"):
        if method != METHODS:
            return params, None
        message = params.get("message") if METHODS == "handle_message" else params
        kind = message.get("message_type") if isinstance(message, dict) else None
        return (message if isinstance(message, dict) else None), (kind if kind in conformance.MESSAGES else None)
    if METHODS == "tools_call":
        if method != "tools/call":
            return params, None
        arguments = params.get("arguments")
        return (arguments if isinstance(arguments, dict) else None), conformance.CANONICAL_METHODS.get(params.get("name"))
    if METHODS == "legacy":
        if method == "parity_choose":
            return params, "CHOOSE_PARITY_CALL"
        return params, (None if method == "choose_parity" else conformance.CANONICAL_METHODS.get(method))
    named = method.upper() if method == method.lower() and method.upper() in conformance.MESSAGES else None
    if METHODS == "nested":
        inner = params.get(method) if named else None
        return (inner if isinstance(inner, dict) else None), named
    if METHODS == "details":
        details = params.get(method) if named else None
        if not isinstance(details, dict) or "message_type" not in params:
            return None, named
        envelope_fields = {key: value for key, value in params.items() if key != method}
        if any(key in details for key in envelope_fields):
            return None, named
        return {**envelope_fields, **details}, named
    return params, named


def handle(method, params):
    """The result of one call; raises conformance.Refusal for off-spec input."""
    message, named = message_of(method, params)
    if named is None:
        return None
    if message is None:
        raise conformance.Refusal(400, -32602, f"Missing required field: {method}", "E003", reason="nesting")
    message_type = conformance.check(message, FAMILY, expected_type=named, expected_token=STATE["league_token"])
    count("received", message_type)
    conversation_id = message["conversation_id"]
    if message_type == "GAME_INVITATION":
        reply = envelope("GAME_JOIN_ACK", conversation_id)
        reply.update({"match_id": message["match_id"], "player_id": STATE["player_id"], "arrival_timestamp": now(),
                      "accept": True})
        return reply
    if message_type == "CHOOSE_PARITY_CALL":
        reply = envelope("CHOOSE_PARITY_RESPONSE", conversation_id)
        reply.update({"match_id": message["match_id"], "player_id": STATE["player_id"],
                      "parity_choice": random.choice(["even", "odd"])})
        return reply
    if message_type == "LEAGUE_COMPLETED":
        DONE.set()
    return {"status": "ok"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        status, body = 200, None
        try:
            request = json.loads(self.rfile.read(length))
            request_id = request.get("id")
            result = handle(request.get("method", ""), request.get("params") or {})
            if result is None and METHODS in ("nested", "details"):
                result = {"status": "ok"}
            if result is None:
                with LOCK:
                    STATE["unknown_methods"] += 1
                status = 404
                body = {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": request_id}
            else:
                body = {"jsonrpc": "2.0", "result": result, "id": request_id}
        except conformance.Refusal as refusal:
            count("refused", refusal.reason)
            status, body = refusal.http_status, refusal.body(request.get("id"))
        except Exception as error:  # noqa: BLE001 - a bug in this agent: reported in the summary
            STATE["errors"].append(f"handling a call: {error!r}")
            status, body = 500, {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}, "id": None}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def post(method, params):
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).encode()
    request = urllib.request.Request(LEAGUE_URL, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def register(port):
    """Registers; a response that fails the checks is discarded and the registration sent again."""
    meta = {"display_name": NAME, "version": "1.0.0", "game_types": ["even_odd"],
            "contact_endpoint": f"http://127.0.0.1:{port}/mcp", "protocol_version": "2.1.0"}
    for _ in range(3):
        STATE["registrations"] += 1
        request = {"protocol": conformance.PROTOCOL, "message_type": "LEAGUE_REGISTER_REQUEST",
                   "sender": f"player:{NAME.upper()}", "timestamp": now(),
                   "conversation_id": f"conv-{NAME}-register-{STATE['registrations']}", "player_meta": meta}
        if METHODS == "nested":
            answer = post("league_register_request", {"league_register_request": request})
        elif METHODS == "details":
            details = {"player_meta": request.pop("player_meta")}
            answer = post("league_register_request", {**request, "league_register_request": details})
        elif METHODS == "receive":
            answer = post("receive_league_register_request", request)
        elif METHODS == "handle_message":
            answer = post("handle_message", {"message": request})
        elif METHODS == "mcp_message":
            answer = post("mcp_message", request)
        elif METHODS == "tools_call":
            answer = post("tools/call", {"name": "register_player", "arguments": request})
        elif METHODS == "legacy":
            answer = post("league_register", request)
        else:
            answer = post("register_player", request)
        result = answer.get("result")
        if not isinstance(result, dict) or result.get("status") != "ACCEPTED":
            STATE["errors"].append(f"registration refused: {answer}")
            return False
        try:
            conformance.check(result, FAMILY, expected_type="LEAGUE_REGISTER_RESPONSE")
        except conformance.Refusal as refusal:
            count("refused", refusal.reason)
            continue
        STATE["player_id"], STATE["token"] = result["player_id"], result["auth_token"]
        STATE["league_token"] = result.get("league_auth_token")
        return True
    STATE["errors"].append("no registration response passed the checks")
    return False


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    if register(server.server_address[1]):
        DONE.wait(timeout=300)
    server.shutdown()
    print(json.dumps({"name": NAME, "family": FAMILY, "methods": METHODS, "player_id": STATE["player_id"],
                      "registrations": STATE["registrations"], "received": STATE["received"],
                      "refused": STATE["refused"], "unknown_methods": STATE["unknown_methods"],
                      "errors": STATE["errors"], "completed": DONE.is_set()}),
          flush=True)


if __name__ == "__main__":
    main()
