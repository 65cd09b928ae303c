"""league.v2 conformance: everything an agent receives, checked against the specification, and refused the
way real agents refuse it. Python's standard library only; imported by tests/agents/strict_player.py.

The rules (docs/protocol.md, "Conformance" repeats them):

Envelope, on every message:
  protocol         exactly "league.v2"
  message_type     one of the 18 message types below, and the one the method names (when it names one)
  sender           by role: the league manager's messages come from the manager, a referee's from
                   `referee:<ID>`, a player's from `player:<ID>`. How the manager is written depends on
                   the agent's family:
                     typed  every sender matches ^(player|referee|league_manager):[A-Z0-9]+$
                            (the manager is `league_manager:LM01`; bare `league_manager` is refused)
                     bare   the manager is exactly `league_manager`; any other sender is `<type>:<id>`
                            with type player or referee (`league_manager:LM01` is refused)
  timestamp        ISO-8601 in UTC: YYYY-MM-DDTHH:MM:SS[.fraction] then `Z` or `+00:00`
  conversation_id  a non-empty string
  auth_token       a non-empty string on every message after registration; when the league told the
                   agent the token its messages carry (`league_auth_token` in the registration
                   response), exactly that token

Refusals, as real agents answer them (HTTP status, JSON-RPC error):
  no auth_token             401  -32001 "Missing auth token"      data.error_code E012
  another auth_token        401  -32001 "Invalid auth token"      data.error_code E012
  sender of the wrong form  400  -32602 "Sender not registered"   (typed family)
                            400  -32602 "Invalid sender: type must be player or referee" (bare family)
  wrong protocol            400  -32602 "Protocol mismatch"       E018
  bad timestamp             400  -32602 "Invalid timestamp"       E021
  unknown message type      400  -32602 "Unknown message type"    E002
  missing field             400  -32602 "Missing required field: <name>" E003
"""

import re

PROTOCOL = "league.v2"
TYPED_SENDER = re.compile(r"^(player|referee|league_manager):[A-Z0-9]+$")
BARE_SENDER = re.compile(r"^(player|referee):[A-Za-z0-9_\-]+$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$")
FAMILIES = ("typed", "bare")

MANAGER, REFEREE, PLAYER = "league_manager", "referee", "player"

# The 18 message types: who sends each, and the fields it must carry (besides the envelope). A field
# named "a.b" is b inside the object a; "a[].b" is b in every element of the list a. A name ending in
# "?" must be present but may be null.
MESSAGES = {
    "REFEREE_REGISTER_REQUEST": (REFEREE, ["referee_meta", "referee_meta.display_name", "referee_meta.contact_endpoint", "referee_meta.game_types"]),
    "REFEREE_REGISTER_RESPONSE": (MANAGER, ["status", "referee_id", "auth_token", "league_id?"]),
    "LEAGUE_REGISTER_REQUEST": (PLAYER, ["player_meta", "player_meta.display_name", "player_meta.contact_endpoint", "player_meta.game_types"]),
    "LEAGUE_REGISTER_RESPONSE": (MANAGER, ["status", "player_id", "auth_token", "league_id"]),
    "ROUND_ANNOUNCEMENT": (MANAGER, ["league_id", "round_id", "matches", "matches[].match_id", "matches[].game_type",
                                     "matches[].player_A_id", "matches[].player_B_id", "matches[].referee_endpoint"]),
    "GAME_INVITATION": (REFEREE, ["league_id", "round_id", "match_id", "game_type", "role_in_match", "opponent_id"]),
    "GAME_JOIN_ACK": (PLAYER, ["match_id", "player_id", "arrival_timestamp", "accept"]),
    "CHOOSE_PARITY_CALL": (REFEREE, ["match_id", "player_id", "game_type", "context", "context.opponent_id", "context.round_id",
                                     "context.your_standings", "context.your_standings.wins",
                                     "context.your_standings.losses", "context.your_standings.draws", "deadline"]),
    "CHOOSE_PARITY_RESPONSE": (PLAYER, ["match_id", "player_id", "parity_choice"]),
    "GAME_OVER": (REFEREE, ["match_id", "game_type", "game_result", "game_result.status", "game_result.winner_player_id?",
                            "game_result.reason?"]),
    "MATCH_RESULT_REPORT": (REFEREE, ["league_id", "round_id", "match_id", "game_type", "result", "result.winner?", "result.score"]),
    "LEAGUE_STANDINGS_UPDATE": (MANAGER, ["league_id", "round_id", "standings", "standings[].rank", "standings[].player_id",
                                          "standings[].display_name", "standings[].played", "standings[].wins",
                                          "standings[].draws", "standings[].losses", "standings[].points"]),
    "ROUND_COMPLETED": (MANAGER, ["league_id", "round_id", "matches_completed", "next_round_id?"]),
    "LEAGUE_COMPLETED": (MANAGER, ["league_id", "total_rounds", "total_matches", "champion", "champion.player_id",
                                   "champion.display_name", "champion.points", "final_standings"]),
    "LEAGUE_ERROR": (MANAGER, ["error_code", "error_description"]),
    "GAME_ERROR": (REFEREE, ["match_id", "error_code", "error_description", "affected_player", "action_required",
                             "retry_info", "retry_info.retry_count", "retry_info.max_retries", "consequence"]),
    "LEAGUE_QUERY": (PLAYER, ["league_id", "query_type"]),
    "LEAGUE_QUERY_RESPONSE": (MANAGER, ["query_type", "success"]),
}

# A decided game's result also names the draw and the choices.
DECIDED_GAME_OVER = ["game_result.drawn_number", "game_result.number_parity", "game_result.choices"]

# The specification's method for each message type a player is called with.
CANONICAL_METHODS = {
    "notify_round": "ROUND_ANNOUNCEMENT",
    "handle_game_invitation": "GAME_INVITATION",
    "choose_parity": "CHOOSE_PARITY_CALL",
    "notify_match_result": "GAME_OVER",
    "update_standings": "LEAGUE_STANDINGS_UPDATE",
    "notify_round_completed": "ROUND_COMPLETED",
    "notify_league_completed": "LEAGUE_COMPLETED",
    "notify_game_error": "GAME_ERROR",
}


class Refusal(Exception):
    """An off-spec message, and how the agent answers it."""

    def __init__(self, http_status, code, message, error_code=None, reason=None):
        super().__init__(message)
        self.http_status, self.code, self.message, self.error_code = http_status, code, message, error_code
        self.reason = reason or message

    def body(self, request_id):
        error = {"code": self.code, "message": self.message}
        if self.error_code:
            error["data"] = {"error_code": self.error_code}
        return {"jsonrpc": "2.0", "error": error, "id": request_id}


def _missing(name):
    return Refusal(400, -32602, f"Missing required field: {name}", "E003", reason="missing_field")


def _values(message, path):
    """Every value at `path` ("a.b", "a[].b") in `message`; raises a refusal if a step is missing."""
    values = [message]
    shown = []
    for step in path.split("."):
        each = step.endswith("[]")
        name = step[:-2] if each else step
        shown.append(name)
        found = []
        for value in values:
            if not isinstance(value, dict) or name not in value:
                raise _missing(".".join(shown))
            found.append(value[name])
        if each:
            if not all(isinstance(v, list) for v in found):
                raise _missing(".".join(shown))
            found = [item for v in found for item in v]
        values = found
    return values


def require(message, fields):
    for field in fields:
        nullable = field.endswith("?")
        path = field.rstrip("?")
        for value in _values(message, path):
            if value is None and not nullable:
                raise _missing(path)
            if isinstance(value, str) and value == "" and not nullable:
                raise _missing(path)


def check_sender(sender, role, family):
    """The sender's form for `family`, and that it is `role`'s."""
    if not isinstance(sender, str):
        raise Refusal(400, -32602, "Sender not registered", reason="sender")
    if family == "typed":
        if not TYPED_SENDER.match(sender):
            raise Refusal(400, -32602, "Sender not registered", reason="sender")
    elif sender != MANAGER and not BARE_SENDER.match(sender):
        raise Refusal(400, -32602, "Invalid sender: type must be player or referee", reason="sender")
    if sender.split(":", 1)[0] != role:
        raise Refusal(400, -32602, f"Sender not registered: {role} expected", reason="sender")


def check(message, family, expected_type=None, token_required=True, expected_token=None):
    """Checks one received message (the params of a call, or a result); raises Refusal when off-spec.
    Returns its message type."""
    if not isinstance(message, dict):
        raise Refusal(400, -32600, "Invalid Request", "E002", reason="not_an_object")
    token = message.get("auth_token")
    if token_required and (not isinstance(token, str) or not token):
        raise Refusal(401, -32001, "Missing auth token", "E012", reason="auth_missing")
    if token_required and expected_token is not None and token != expected_token:
        raise Refusal(401, -32001, "Invalid auth token", "E012", reason="auth_invalid")
    if message.get("protocol") != PROTOCOL:
        raise Refusal(400, -32602, "Protocol mismatch", "E018", reason="protocol")
    message_type = message.get("message_type")
    if message_type not in MESSAGES or (expected_type and message_type != expected_type):
        raise Refusal(400, -32602, "Unknown message type", "E002", reason="message_type")
    role, fields = MESSAGES[message_type]
    check_sender(message.get("sender"), role, family)
    timestamp = message.get("timestamp")
    if not isinstance(timestamp, str) or not TIMESTAMP.match(timestamp):
        raise Refusal(400, -32602, "Invalid timestamp", "E021", reason="timestamp")
    conversation_id = message.get("conversation_id")
    if not isinstance(conversation_id, str) or not conversation_id:
        raise _missing("conversation_id")
    require(message, fields)
    if message_type == "GAME_OVER" and message["game_result"].get("status") in ("WIN", "DRAW"):
        require(message, DECIDED_GAME_OVER)
    return message_type


def sender(role, agent_id):
    """How an agent writes its own sender (the same in both families)."""
    return f"{role}:{agent_id}"
