#!/usr/bin/env python3
"""A league.v2 player that is a real MCP server: the official MCP Python SDK's server (`MCPServer`, the
FastMCP of SDK 1.x) over the streamable HTTP transport, stateful (the SDK's default: `initialize`
opens a session named by `Mcp-Session-Id`, answers stream as server-sent events). Each message it
handles is one tool named as the specification names the method (`handle_game_invitation`,
`choose_parity`, `notify_match_result`…). It registers through the gateway's own MCP endpoint with the
SDK's client (`tools/call register_player`). Every message it receives is checked by
tests/agents/conformance.py (typed family) and an off-spec one is refused with a tool error.

Two ways of taking a message's fields, both seen in FastMCP agents:
  `handle_game_invitation(message: dict)` and the notifications: the message under one argument;
  `choose_parity(match_id, player_id, …)`: the message's fields as the tool's own arguments.

Usage: mcp_server_player.py <league /mcp url> <name> [sessions|stateless|json|forgetful]

  sessions   (default) the SDK's sessions;
  stateless  the SDK's stateless mode (no session; every POST stands alone), answers as event streams;
  json       the SDK's stateless mode answering plain JSON (`json_response=True`): a plain JSON-RPC call
             gets no 406 but an ordinary JSON-RPC error, as from any agent that does not know the method;
  forgetful  sessions, but the first session the league opens is forgotten after a few calls, as by a
             server that restarted: its next call is answered 404, and the league must open another.

Prints one JSON line when the league completes (or it gives up):
{"name", "player_id", "received": {message_type: count}, "refused": {reason: count},
 "sessions": sessions the league's calls came in, "forgotten": calls answered 404 (forgetful),
 "errors": [...], "completed"}.
"""

import asyncio
import json
import os
import random
import socket
import sys
from datetime import datetime, timezone
from typing import Any

import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402

LEAGUE_URL, NAME = sys.argv[1], sys.argv[2]
MODE = sys.argv[3] if len(sys.argv) > 3 else "sessions"
assert MODE in ("sessions", "stateless", "json", "forgetful"), "mode must be sessions, stateless, json or forgetful"
# The calls in the first session after which a forgetful server forgets it.
FORGET_AFTER = 6
FAMILY = "typed"
STATE = {"player_id": None, "token": None, "league_token": None, "received": {}, "refused": {}, "sessions": 0,
         "errors": []}
DONE = asyncio.Event()
SESSION_IDS = set()

server = MCPServer(NAME, version="1.0.0", log_level="WARNING")


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def count(table, key):
    STATE[table][key] = STATE[table].get(key, 0) + 1


def received(message, expected_type):
    """Checks `message`; an off-spec one is refused with the league.v2 error as the tool error's text."""
    try:
        conformance.check(message, FAMILY, expected_type=expected_type, expected_token=STATE["league_token"])
    except conformance.Refusal as refusal:
        count("refused", refusal.reason)
        raise ToolError(f"{refusal.code} {refusal.message}") from refusal
    count("received", expected_type)


def reply(message_type, conversation_id, **fields):
    return {"protocol": conformance.PROTOCOL, "message_type": message_type,
            "sender": conformance.sender("player", STATE["player_id"]), "timestamp": now(),
            "conversation_id": conversation_id, "auth_token": STATE["token"], **fields}


@server.tool()
def handle_game_invitation(message: dict[str, Any]) -> dict[str, Any]:
    """GAME_INVITATION: always joins."""
    received(message, "GAME_INVITATION")
    return reply("GAME_JOIN_ACK", message["conversation_id"], match_id=message["match_id"],
                 player_id=STATE["player_id"], arrival_timestamp=now(), accept=True)


@server.tool()
def choose_parity(protocol: str, message_type: str, sender: str, timestamp: str, conversation_id: str,
                  match_id: str, player_id: str, game_type: str, context: dict[str, Any], deadline: str,
                  auth_token: str | None = None) -> dict[str, Any]:
    """CHOOSE_PARITY_CALL, its fields as arguments: a random parity."""
    message = {"protocol": protocol, "message_type": message_type, "sender": sender, "timestamp": timestamp,
               "conversation_id": conversation_id, "auth_token": auth_token, "match_id": match_id,
               "player_id": player_id, "game_type": game_type, "context": context, "deadline": deadline}
    received(message, "CHOOSE_PARITY_CALL")
    return reply("CHOOSE_PARITY_RESPONSE", conversation_id, match_id=match_id, player_id=STATE["player_id"],
                 parity_choice=random.choice(["even", "odd"]))


def notification(tool_name, message_type):
    def tool(message: dict[str, Any]) -> dict[str, Any]:
        received(message, message_type)
        if message_type == "LEAGUE_COMPLETED":
            DONE.set()
        return {"status": "ok"}

    tool.__doc__ = f"{message_type}: acknowledged."
    server.tool(name=tool_name)(tool)


for method, kind in conformance.CANONICAL_METHODS.items():
    if method not in ("handle_game_invitation", "choose_parity"):
        notification(method, kind)


class Counting:
    """ASGI middleware counting the sessions the league's calls come in (distinct `Mcp-Session-Id`s);
    a forgetful server's first session ends here after FORGET_AFTER calls: 404, as the transport
    answers a session it does not know."""

    def __init__(self, app):
        self.app = app
        self.first, self.calls = None, 0

    async def __call__(self, scope, receive, send):
        session = dict(scope.get("headers") or []).get(b"mcp-session-id")
        if session is not None:
            SESSION_IDS.add(session)
            STATE["sessions"] = len(SESSION_IDS)
            self.first = self.first or session
            if MODE == "forgetful" and session == self.first:
                self.calls += 1
                if self.calls > FORGET_AFTER:
                    STATE["forgotten"] = STATE.get("forgotten", 0) + 1
                    body = json.dumps({"jsonrpc": "2.0", "id": None,
                                       "error": {"code": -32600, "message": "Session not found"}}).encode()
                    await send({"type": "http.response.start", "status": 404,
                                "headers": [(b"content-type", b"application/json")]})
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.app(scope, receive, send)


async def register(port):
    """Registers through the gateway's MCP endpoint with the SDK's client."""
    request = {"protocol": conformance.PROTOCOL, "message_type": "LEAGUE_REGISTER_REQUEST",
               "sender": f"player:{NAME.upper()}", "timestamp": now(), "conversation_id": f"conv-{NAME}-register",
               "player_meta": {"display_name": NAME, "version": "1.0.0", "game_types": ["even_odd"],
                               "contact_endpoint": f"http://127.0.0.1:{port}/mcp", "protocol_version": "2.1.0"}}
    async with Client(streamable_http_client(LEAGUE_URL), raise_exceptions=True, read_timeout_seconds=30) as client:
        answer = await client.call_tool("register_player", request)
    result = answer.structured_content
    if answer.is_error or not isinstance(result, dict) or result.get("status") != "ACCEPTED":
        STATE["errors"].append(f"registration refused: {answer}")
        return False
    conformance.check(result, FAMILY, expected_type="LEAGUE_REGISTER_RESPONSE")
    STATE["player_id"], STATE["token"] = result["player_id"], result["auth_token"]
    STATE["league_token"] = result.get("league_auth_token")
    return True


async def main():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    app = Counting(server.streamable_http_app(stateless_http=MODE in ("stateless", "json"), json_response=MODE == "json"))
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(web.serve(sockets=[listener]))
    while not web.started:
        await asyncio.sleep(0.01)
    try:
        if await register(port):
            # Where it listens, once registered, for whoever started it (tests/system/probe.rs probes it).
            print(f"registered, listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
            await asyncio.wait_for(DONE.wait(), timeout=300)
    except Exception as error:  # noqa: BLE001 - reported in the summary
        STATE["errors"].append(f"{error!r}")
    web.should_exit = True
    await serving
    print(json.dumps({"name": NAME, "player_id": STATE["player_id"], "received": STATE["received"],
                      "refused": STATE["refused"], "sessions": STATE["sessions"], "forgotten": STATE.get("forgotten", 0), "errors": STATE["errors"],
                      "completed": DONE.is_set()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
