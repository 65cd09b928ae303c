#!/usr/bin/env python3
"""A strict league.v2 referee: Python's standard library only, everything it receives checked against the
specification with conformance.py (the START_MATCH it is pushed, and every answer: registration, joins,
choices, queries), anything off-spec refused the way real agents refuse it. It takes its matches in one of
the three styles real referees use:

  push     only `START_MATCH` (the message type as the method)
  assign   only `assign_match`
  pull     no push at all: it polls `league_query {"query_type": "GET_REGISTRATIONS"}` and
           `get_assigned_matches {"referee_id"}` every `--poll` seconds without a token, and calls players
           with `"league_id": null` after the invitation, as pulling referees do

It is as picky as the referees of the field: its push handler (either name) indexes `player_A_id`,
`player_B_id`, `player_A_endpoint` and `player_B_endpoint` (a missing one is answered -32603
`Internal error: 'player_A_id'`, as theirs is), and a pull
runs only the matches listed with `"status": "PENDING"` (any other status is skipped, every poll).

For each match it invites both players at the endpoints it was given, asks both for a parity, draws the
number with `secrets`, sends GAME_OVER to both and reports MATCH_RESULT_REPORT, all with its token.

Usage: strict_referee.py <league /mcp url> <name> --style push|assign|pull [--family bare|typed]
       [--poll SECONDS] [--registration-token TOKEN]
(`--registration-token`: the referee registration token, where the league asks one.)
Prints one JSON line per event: {"registered": id}, {"reported": match_id, "winner", "answer"},
{"refused": reason, "method"} for an off-spec message it refused, {"error": ...} for anything that went wrong.
"""

import argparse
import json
import os
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402

PUSH_METHODS = {"push": "START_MATCH", "assign": "assign_match"}
STATE = {"referee_id": None, "token": None}
STARTED = set()
LOCK = threading.Lock()


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def say(line):
    with LOCK:
        print(json.dumps(line), flush=True)


def post(url, method, params):
    """One JSON-RPC call; the result, or RuntimeError with the error."""
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        answer = json.loads(error.read() or b"{}")
    if answer.get("jsonrpc") != "2.0" or ("result" in answer) == ("error" in answer):
        raise RuntimeError(f"{method} to {url}: not a JSON-RPC 2.0 response: {answer}")
    if "error" in answer:
        raise RuntimeError(f"{method} to {url}: {answer['error']}")
    return answer["result"]


def checked(result, message_type):
    """An answer, checked as the message it must be (answers carry no token of ours to check)."""
    conformance.check(result, ARGS.family, expected_type=message_type, token_required=False)
    return result


def envelope(message_type, conversation_id, **fields):
    out = {
        "protocol": "league.v2",
        "message_type": message_type,
        "sender": conformance.sender("referee", STATE["referee_id"]),
        "timestamp": now(),
        "conversation_id": conversation_id,
        "auth_token": STATE["token"],
    }
    out.update(fields)
    return out


def check_start_match(params):
    """START_MATCH is not among the 18 types, but it carries the envelope like any message from the
    manager, and names the match."""
    token = params.get("auth_token")
    if not isinstance(token, str) or not token:
        raise conformance.Refusal(401, -32001, "Missing auth token", "E012", reason="auth_missing")
    if params.get("protocol") != conformance.PROTOCOL:
        raise conformance.Refusal(400, -32602, "Protocol mismatch", "E018", reason="protocol")
    if params.get("message_type") != "START_MATCH":
        raise conformance.Refusal(400, -32602, "Unknown message type", "E002", reason="message_type")
    conformance.check_sender(params.get("sender"), conformance.MANAGER, ARGS.family)
    if not conformance.TIMESTAMP.match(str(params.get("timestamp"))):
        raise conformance.Refusal(400, -32602, "Invalid timestamp", "E021", reason="timestamp")
    conformance.require(params, ["conversation_id", "league_id", "round_id", "match_id", "game_type",
                                 "players", "players[].player_id", "players[].role_in_match",
                                 "players[].contact_endpoint", "report_endpoint"])


def run_match(match):
    """Plays one match (START_MATCH's fields, or one entry of get_assigned_matches) and reports it."""
    match_id = match["match_id"]
    try:
        conversation = f"conv-{match_id}-{secrets.token_hex(4)}"
        players = match["players"]
        common = {"league_id": match["league_id"], "round_id": match["round_id"], "match_id": match_id,
                  "game_type": match["game_type"]}
        # Pulling referees leave the league out once the match is going.
        later = dict(common, league_id=None) if ARGS.style == "pull" else common
        for player, opponent in zip(players, reversed(players)):
            ack = checked(post(player["contact_endpoint"], "handle_game_invitation", envelope(
                "GAME_INVITATION", conversation, role_in_match=player["role_in_match"],
                opponent_id=opponent["player_id"], **common)), "GAME_JOIN_ACK")
            if ack["accept"] is not True or ack["match_id"] != match_id:
                raise RuntimeError(f"{player['player_id']} did not join: {ack}")
        choices = {}
        for player, opponent in zip(players, reversed(players)):
            standings = player.get("standings") or {}
            answer = checked(post(player["contact_endpoint"], "choose_parity", envelope(
                "CHOOSE_PARITY_CALL", conversation, player_id=player["player_id"],
                context={"opponent_id": opponent["player_id"], "round_id": match["round_id"],
                         "your_standings": {k: standings.get(k, 0) for k in ("wins", "losses", "draws")}},
                deadline=now(), **later)), "CHOOSE_PARITY_RESPONSE")
            if answer["parity_choice"] not in ("even", "odd"):
                raise RuntimeError(f"{player['player_id']} chose {answer['parity_choice']!r}")
            choices[player["player_id"]] = answer["parity_choice"]
        drawn = secrets.randbelow(10) + 1
        parity = "even" if drawn % 2 == 0 else "odd"
        a, b = [p["player_id"] for p in players]
        if choices[a] == choices[b]:
            winner, status, score = None, "DRAW", {a: 1, b: 1}
        else:
            winner = a if choices[a] == parity else b
            status, score = "WIN", {a: 3 if winner == a else 0, b: 3 if winner == b else 0}
        game_result = {"status": status, "winner_player_id": winner, "drawn_number": drawn,
                       "number_parity": parity, "choices": choices, "reason": "parity"}
        for player in players:
            post(player["contact_endpoint"], "notify_match_result", envelope(
                "GAME_OVER", conversation, player_id=player["player_id"], game_result=game_result, **later))
        answer = post(match["report_endpoint"], "report_match_result", envelope(
            "MATCH_RESULT_REPORT", conversation, **common,
            result={"winner": winner, "score": score, "details": {"drawn_number": drawn, "choices": choices}}))
        if answer.get("status") != "ACCEPTED":
            raise RuntimeError(f"report refused: {answer}")
        say({"reported": match_id, "winner": winner, "answer": answer})
    except Exception as error:  # noqa: BLE001 - reported on stdout for the test to see
        say({"error": f"{match_id}: {error}"})


def start(match):
    """Runs a match once, however often it is handed over."""
    with LOCK:
        if match["match_id"] in STARTED:
            return
        STARTED.add(match["match_id"])
    threading.Thread(target=run_match, args=(match,), daemon=True).start()


def registered_players():
    registrations = checked(post(ARGS.league, "league_query", {
        "query_type": "GET_REGISTRATIONS", "conversation_id": f"conv-poll-{secrets.token_hex(4)}"}),
                            "LEAGUE_QUERY_RESPONSE")
    return {p["player_id"] for p in registrations["players"]}


def poll():
    """The pull style: registrations and assigned matches, every few seconds, without a token."""
    while True:
        try:
            known = registered_players()
            assigned = post(ARGS.league, "get_assigned_matches", {"referee_id": STATE["referee_id"]})
            for match in assigned["matches"]:
                if match.get("status") != "PENDING":
                    continue  # not ours to run now, as the field's pullers read it
                conformance.require(match, ["match_id", "league_id", "round_id", "game_type", "players",
                                            "players[].contact_endpoint", "report_endpoint"])
                players = {p["player_id"] for p in match["players"]}
                if not players <= known:
                    # The last player may have registered (and started the league) between the two
                    # polls: ask once more before calling it a fault.
                    known = registered_players()
                if not players <= known:
                    raise RuntimeError(f"{match['match_id']}: players not among the registrations")
                start(match)
        except Exception as error:  # noqa: BLE001
            # A league that is gone (its gateway stopped once the league ended) is no protocol fault:
            # a pulling referee simply polls again. Anything else is a complaint.
            gone = isinstance(error, ConnectionError) or isinstance(getattr(error, "reason", None), ConnectionError)
            say({"unreachable" if gone else "error": f"poll: {error}"})
        time.sleep(ARGS.poll)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        method, params = request.get("method", ""), request.get("params") or {}
        status, body = 200, None
        if method == PUSH_METHODS.get(ARGS.style):
            try:
                check_start_match(params)
                seats = (params["player_A_id"], params["player_B_id"])
                if seats != tuple(p["player_id"] for p in params["players"]):
                    raise RuntimeError(f"player_A_id/player_B_id {seats} are not the players in order")
                endpoints = (params["player_A_endpoint"], params["player_B_endpoint"])
                if endpoints != tuple(p["contact_endpoint"] for p in params["players"]):
                    raise RuntimeError(f"player_A_endpoint/player_B_endpoint {endpoints} are not the players'")
                start(params)
                result = {"message_type": "START_MATCH_ACK", "status": "MATCH_STARTED",
                          "match_id": params["match_id"], "conversation_id": params["conversation_id"]}
                body = {"jsonrpc": "2.0", "result": result, "id": request.get("id")}
            except conformance.Refusal as refusal:
                say({"refused": refusal.reason, "method": method})
                status, body = refusal.http_status, refusal.body(request.get("id"))
            except (KeyError, RuntimeError) as error:
                # What the field's referee answers when a field it indexes is missing.
                say({"error": f"{method}: {error!r}"})
                body = {"jsonrpc": "2.0", "error": {"code": -32603, "message": f"Internal error: {error}"},
                        "id": request.get("id")}
        else:
            body = {"jsonrpc": "2.0", "error": {"code": -32601, "message": f"Method not found: {method}"},
                    "id": request.get("id")}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    meta = {"display_name": ARGS.name, "version": "1.0.0", "game_types": ["even_odd"],
            "contact_endpoint": f"http://127.0.0.1:{server.server_address[1]}/mcp",
            "max_concurrent_matches": 2, "protocol_version": "league.v2"}
    params = {"protocol": "league.v2", "message_type": "REFEREE_REGISTER_REQUEST",
              "sender": conformance.sender("referee", ARGS.name.upper()), "timestamp": now(),
              "conversation_id": f"conv-{ARGS.name}-register", "referee_meta": meta}
    if ARGS.registration_token:
        # The operator's referee registration token, where the league asks one (ADR 0039).
        params["auth_token"] = ARGS.registration_token
    try:
        result = checked(post(ARGS.league, "register_referee", params), "REFEREE_REGISTER_RESPONSE")
    except conformance.Refusal as refusal:
        # As real agents do: an answer they cannot accept, and they register again.
        say({"refused": refusal.reason, "method": "register_referee"})
        result = checked(post(ARGS.league, "register_referee", params), "REFEREE_REGISTER_RESPONSE")
    if result.get("status") != "ACCEPTED":
        raise SystemExit(f"{ARGS.name}: registration refused: {result}")
    STATE["referee_id"], STATE["token"] = result["referee_id"], result["auth_token"]
    say({"registered": STATE["referee_id"]})
    if ARGS.style == "pull":
        poll()
    threading.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("league")
    parser.add_argument("name")
    parser.add_argument("--style", choices=["push", "assign", "pull"], required=True)
    parser.add_argument("--family", choices=list(conformance.FAMILIES), default="bare")
    parser.add_argument("--poll", type=float, default=0.5)
    parser.add_argument("--registration-token")
    ARGS = parser.parse_args()
    main()
