#!/usr/bin/env python3
"""A league.v2 referee written the way other teams write theirs (peer-a's manager hands matches to its
referees with START_MATCH): Python's standard library only, a JSON-RPC endpoint on /mcp, registration
with the league manager, and for each START_MATCH a thread that runs the Even/Odd match itself —
GAME_INVITATION and CHOOSE_PARITY_CALL to both players at the endpoints START_MATCH names, the number
drawn with `secrets`, GAME_OVER to both, MATCH_RESULT_REPORT to the league.

Usage: league_referee.py <league /mcp url> <name> [<url for reports>]. The optional URL is another gateway
replica behind the same league, as a load balancer would pick. Prints one JSON line per reported match:
{"reported": match_id, "winner": ..., "answer": <the league's answer>} and {"error": ...} on a failure.
"""

import json
import secrets
import sys
import threading
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LEAGUE_URL, NAME = sys.argv[1], sys.argv[2]
REPORT_URL = sys.argv[3] if len(sys.argv) > 3 else LEAGUE_URL
STATE = {"referee_id": None, "token": None}
PRINT = threading.Lock()


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def say(line):
    with PRINT:
        print(json.dumps(line), flush=True)


def post(url, method, params):
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    if answer.get("error"):
        raise RuntimeError(f"{method} to {url}: {answer['error']}")
    return answer["result"]


def message(message_type, start, **fields):
    out = {
        "protocol": "league.v2",
        "message_type": message_type,
        "sender": f"referee:{STATE['referee_id']}",
        "timestamp": now(),
        "conversation_id": start["conversation_id"],
        "auth_token": STATE["token"],
        "league_id": start["league_id"],
        "round_id": start["round_id"],
        "match_id": start["match_id"],
        "game_type": start["game_type"],
    }
    out.update(fields)
    return out


def run_match(start):
    try:
        players = start["players"]
        ids = [p["player_id"] for p in players]
        for player, opponent in zip(players, reversed(players)):
            ack = post(player["contact_endpoint"], "handle_game_invitation", message(
                "GAME_INVITATION", start, role_in_match=player["role_in_match"], opponent_id=opponent["player_id"]))
            if ack.get("accept") is not True:
                raise RuntimeError(f"{player['player_id']} did not join: {ack}")
        choices = {}
        for player, opponent in zip(players, reversed(players)):
            answer = post(player["contact_endpoint"], "choose_parity", message(
                "CHOOSE_PARITY_CALL", start, player_id=player["player_id"],
                context={"opponent_id": opponent["player_id"], "round_id": start["round_id"],
                         "your_standings": player["standings"]}))
            choices[player["player_id"]] = answer["parity_choice"]
        drawn = secrets.randbelow(10) + 1
        parity = "even" if drawn % 2 == 0 else "odd"
        a, b = ids
        if choices[a] == choices[b]:
            winner, status, score = None, "DRAW", {a: 1, b: 1}
        else:
            winner = a if choices[a] == parity else b
            status, score = "WIN", {a: 3 if winner == a else 0, b: 3 if winner == b else 0}
        game_result = {"status": status, "winner_player_id": winner, "drawn_number": drawn,
                       "number_parity": parity, "choices": choices}
        for player in players:
            post(player["contact_endpoint"], "notify_match_result", message(
                "GAME_OVER", start, player_id=player["player_id"], game_result=game_result))
        answer = post(REPORT_URL, "MATCH_RESULT_REPORT", message(
            "MATCH_RESULT_REPORT", start,
            result={"winner": winner or "DRAW", "score": score, "details": {"drawn_number": drawn, "choices": choices}}))
        say({"reported": start["match_id"], "winner": winner, "answer": answer})
    except Exception as error:  # noqa: BLE001 - reported on stdout for the test to see
        say({"error": f"{start.get('match_id')}: {error}"})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        method, params = request.get("method", ""), request.get("params") or {}
        if method in ("START_MATCH", "start_match") or params.get("message_type") == "START_MATCH":
            threading.Thread(target=run_match, args=(params,)).start()
            result = {"message_type": "START_MATCH_ACK", "conversation_id": params.get("conversation_id"),
                      "status": "MATCH_STARTED", "match_id": params.get("match_id")}
            body = {"jsonrpc": "2.0", "result": result, "error": None, "id": request.get("id")}
        else:
            body = {"jsonrpc": "2.0", "error": {"code": -32601, "message": f"Method not found: {method}"},
                    "id": request.get("id")}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    meta = {"display_name": NAME, "version": "1.0.0", "game_types": ["even_odd"],
            "contact_endpoint": f"http://127.0.0.1:{server.server_address[1]}/mcp", "max_concurrent_matches": 2}
    params = {"protocol": "league.v2", "message_type": "REFEREE_REGISTER_REQUEST", "sender": f"referee:{NAME}",
              "timestamp": now(), "conversation_id": f"conv-{NAME}-register", "referee_meta": meta}
    result = post(LEAGUE_URL, "REFEREE_REGISTER_REQUEST", params)
    if result.get("status") != "ACCEPTED":
        raise SystemExit(f"{NAME}: registration refused: {result}")
    STATE["referee_id"], STATE["token"] = result["referee_id"], result["auth_token"]
    say({"registered": STATE["referee_id"]})
    threading.Event().wait()


if __name__ == "__main__":
    main()
