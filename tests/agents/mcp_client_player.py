#!/usr/bin/env python3
"""A league.v2 player that talks to the league only as an MCP client: the official MCP Python SDK's
client over the gateway's `/mcp` (`tools/call register_player`, and at the end `tools/call
get_standings` with its token), and a plain JSON-RPC endpoint of its own for the league's calls, which
come by their canonical names (it registered by the canonical tool name). Every message it receives is
checked by tests/agents/conformance.py (bare family) and an off-spec one is refused (HTTP 400/401 with a
JSON-RPC error).

Usage: mcp_client_player.py <league /mcp url> <name>

Prints one JSON line when the league completes (or it gives up):
{"name", "player_id", "received": {message_type: count}, "refused": {reason: count},
 "standings_rows": rows of the standings it read through MCP, "errors": [...], "completed"}.
"""

import asyncio
import json
import os
import random
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402

LEAGUE_URL, NAME = sys.argv[1], sys.argv[2]
FAMILY = "bare"
STATE = {"player_id": None, "token": None, "league_token": None, "received": {}, "refused": {}, "errors": [],
         "standings_rows": None}
DONE = threading.Event()
LOCK = threading.Lock()


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def count(table, key):
    with LOCK:
        STATE[table][key] = STATE[table].get(key, 0) + 1


def reply(message_type, message, **fields):
    return {"protocol": conformance.PROTOCOL, "message_type": message_type,
            "sender": conformance.sender("player", STATE["player_id"]), "timestamp": now(),
            "conversation_id": message["conversation_id"], "auth_token": STATE["token"],
            "match_id": message["match_id"], "player_id": STATE["player_id"], **fields}


def handle(method, params):
    """The result of one call (None: a method it lacks); raises conformance.Refusal for off-spec input."""
    named = conformance.CANONICAL_METHODS.get(method)
    if named is None:
        return None
    message_type = conformance.check(params, FAMILY, expected_type=named, expected_token=STATE["league_token"])
    count("received", message_type)
    if message_type == "GAME_INVITATION":
        return reply("GAME_JOIN_ACK", params, arrival_timestamp=now(), accept=True)
    if message_type == "CHOOSE_PARITY_CALL":
        return reply("CHOOSE_PARITY_RESPONSE", params, parity_choice=random.choice(["even", "odd"]))
    if message_type == "LEAGUE_COMPLETED":
        DONE.set()
    return {"status": "ok"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        status = 200
        try:
            result = handle(request.get("method", ""), request.get("params") or {})
            if result is None:
                status, body = 404, {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"},
                                     "id": request.get("id")}
            else:
                body = {"jsonrpc": "2.0", "result": result, "id": request.get("id")}
        except conformance.Refusal as refusal:
            count("refused", refusal.reason)
            status, body = refusal.http_status, refusal.body(request.get("id"))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


async def call_tool(name, arguments):
    async with Client(streamable_http_client(LEAGUE_URL), raise_exceptions=True, read_timeout_seconds=30) as client:
        answer = await client.call_tool(name, arguments)
    if answer.is_error or not isinstance(answer.structured_content, dict):
        raise RuntimeError(f"{name} refused: {answer}")
    return answer.structured_content


async def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        registered = await call_tool("register_player", {
            "protocol": conformance.PROTOCOL, "message_type": "LEAGUE_REGISTER_REQUEST",
            "sender": f"player:{NAME.upper()}", "timestamp": now(), "conversation_id": f"conv-{NAME}-register",
            "player_meta": {"display_name": NAME, "version": "1.0.0", "game_types": ["even_odd"],
                            "contact_endpoint": f"http://127.0.0.1:{port}/mcp", "protocol_version": "2.1.0"}})
        if registered.get("status") != "ACCEPTED":
            raise RuntimeError(f"registration refused: {registered}")
        conformance.check(registered, FAMILY, expected_type="LEAGUE_REGISTER_RESPONSE")
        STATE["player_id"], STATE["token"] = registered["player_id"], registered["auth_token"]
        STATE["league_token"] = registered.get("league_auth_token")
        if await asyncio.to_thread(DONE.wait, 300):
            standings = await call_tool("get_standings", {"auth_token": STATE["token"]})
            STATE["standings_rows"] = len(standings.get("data", {}).get("standings", []))
    except Exception as error:  # noqa: BLE001 - reported in the summary
        STATE["errors"].append(f"{error!r}")
    server.shutdown()
    print(json.dumps({"name": NAME, **{k: STATE[k] for k in ("player_id", "received", "refused", "standings_rows",
                                                             "errors")}, "completed": DONE.is_set()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
