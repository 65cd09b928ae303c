// The live league page. One EventSource carries the league's snapshot each time it changes (the
// gateway fetches it once for every viewer); completed rounds, the points history and transcripts are
// fetched only when needed. Everything an agent chose (names, payloads) goes in as text, never as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
// The leaders' colours, told apart at a glance (no two within 77 of each other in RGB; the old palette
// had two blues 49 apart): Okabe–Ito's blue, orange, green and sky blue, with red, purple, black, pink.
const COLORS = ["#0072b2", "#e69f00", "#009e73", "#d62728", "#9467bd", "#56b4e9", "#000000", "#e377c2"];
const LABELLED = 8;

const state = {
  leagueId: null,
  snapshot: null,
  names: new Map(),
  chart: { rounds: 0, players: [] },
  chartFor: null,
  drawnFor: null,
  shownRound: null,
  follow: true,
  history: [],
};
// What the page showed, in order (read by the browser test).
window.liveHistory = state.history;

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

async function getJson(path) {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}

function api(path) {
  return `/api/leagues/${encodeURIComponent(state.leagueId)}${path}`;
}

function playerName(id) {
  const name = state.names.get(id);
  return name ? `${id} ${name}` : id;
}

/// `n` and its noun, singular for exactly one: "1 loss", "0 losses".
function counted(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function notice(text) {
  $("notice").hidden = !text;
  $("notice").textContent = text || "";
}

// ---- the league's snapshot ---------------------------------------------------------------------------

function showSnapshot(snapshot) {
  if (snapshot.error) {
    notice(snapshot.error);
    return;
  }
  notice("");
  const previous = state.snapshot;
  state.snapshot = snapshot;
  for (const row of snapshot.standings) state.names.set(row.player_id, row.display_name);
  const status = snapshot.status;
  state.history.push({
    status: status.status,
    round: status.current_round,
    completed: status.rounds_completed,
    registered: status.registered_players,
    at: performance.now(),
  });
  showStatus(status);
  showStandings(snapshot.standings, previous ? previous.standings : []);
  updateWarnings();
  updateRoster(status);
  showRoundPicker(status);
  if (state.follow) {
    state.shownRound = status.current_round || null;
    showRound(snapshot.round);
    syncPicker();
  }
  updateChart(snapshot);
}

function showStatus(status) {
  document.title = `${status.league_id} · live`;
  $("league-name").textContent = status.league_id;
  $("game").textContent = status.game_type.replace(/_/g, " ");
  $("game-rule").textContent = (GAMES[status.game_type] || {}).rule || "";
  const badge = $("league-status");
  badge.textContent = status.status.toLowerCase();
  badge.className = `badge ${status.status}`;
  const counter = $("round-counter");
  counter.dataset.current = status.current_round;
  counter.dataset.total = status.total_rounds;
  counter.dataset.status = status.status;
  if (status.status === "REGISTERING" && status.expected_players > status.registered_players) {
    // Where the missing agents register: this gateway's /mcp (the page is served by it).
    const missing = status.expected_players - status.registered_players;
    counter.textContent = `${status.registered_players} of ${status.expected_players} registered — waiting for ` +
      `${missing} more ${missing === 1 ? "agent" : "agents"} at ${window.location.origin}/mcp`;
  } else if (status.status === "REGISTERING" || status.total_rounds === 0) {
    counter.textContent = `Waiting for players · ${status.registered_players} registered`;
  } else if (status.status === "COMPLETED") {
    counter.textContent = `All ${status.total_rounds} rounds played`;
  } else if (status.status === "CANCELLED") {
    counter.textContent = `Cancelled in round ${status.current_round} of ${status.total_rounds}`;
  } else {
    counter.textContent = `Round ${status.current_round} of ${status.total_rounds}`;
  }
  $("match-counter").textContent = status.total_matches
    ? `${status.finished_matches} / ${status.total_matches} matches played`
    : "";
  const share = status.total_matches ? (100 * status.finished_matches) / status.total_matches : 0;
  $("round-bar").style.width = `${share.toFixed(1)}%`;
  // Why nothing moves, as the manager knows it (paused, a referee gone quiet, none taking matches).
  const stall = $("stall");
  stall.hidden = !status.stall;
  stall.textContent = status.stall
    ? `Stalled · ${status.stall.message}${status.stall.since ? ` (since ${new Date(status.stall.since).toLocaleTimeString()})` : ""}`
    : "";
  const champion = status.champion;
  $("champion").hidden = !champion;
  if (champion) {
    $("champion-name").textContent = `${champion.player_id} · ${champion.display_name}`;
    $("champion-detail").textContent =
      `${counted(champion.points, "point", "points")} · ${counted(champion.wins, "win", "wins")}, ` +
      `${counted(champion.draws, "draw", "draws")}, ${counted(champion.losses, "loss", "losses")}`;
  }
}

function showStandings(rows, before) {
  const previous = new Map(before.map((row) => [row.player_id, row]));
  const body = $("standings").tBodies[0];
  const colors = topColors(rows);
  body.replaceChildren(
    ...rows.map((row, index) => {
      const old = previous.get(row.player_id);
      const classes = [];
      if (index === 0 && row.played > 0) classes.push("first");
      if (old && old.points !== row.points) classes.push("changed");
      const swatch = colors.has(row.player_id)
        ? el("span", { class: "swatch", "data-color": colors.get(row.player_id) })
        : null;
      const tr = el(
        "tr",
        { class: classes.join(" "), "data-player": row.player_id },
        el("td", { class: "num rank" }, String(row.rank)),
        el("td", { class: "player", title: row.display_name }, swatch,
          el("span", { class: "id" }, row.player_id), el("span", { class: "display" }, row.display_name)),
        el("td", { class: "num" }, String(row.played)),
        el("td", { class: "num" }, String(row.wins)),
        el("td", { class: "num" }, String(row.draws)),
        el("td", { class: "num" }, String(row.losses)),
        el("td", { class: "num" }, String(row.technical_losses)),
        el("td", { class: "num pts" }, String(row.points)),
        el("td", { class: "tie" }, row.played > 0 ? tieBreak(row.tie_break) : ""),
      );
      return tr;
    }),
  );
  // Colors are set through the CSSOM (the page's CSP forbids inline style attributes).
  for (const swatch of body.querySelectorAll(".swatch")) swatch.style.background = swatch.dataset.color;
  const leader = rows[0];
  const line = $("leader");
  line.replaceChildren();
  if (leader && leader.played > 0) {
    const second = rows[1];
    const gap = second ? leader.points - second.points : 0;
    const lead = gap > 0
      ? `, ${gap} point${gap === 1 ? "" : "s"} ahead of ${second.player_id}`
      : second ? `, level on points with ${second.player_id} (ahead on ${tieBreak(leader.tie_break)})` : "";
    const ended = state.snapshot && state.snapshot.status.status;
    const opening = ended === "COMPLETED" ? "Won by " : ended === "CANCELLED" ? "Ahead when cancelled: " : "Leading: ";
    line.append(opening, el("b", {}, playerName(leader.player_id)),
      ` with ${counted(leader.points, "point", "points")}${lead}`);
  }
}

/// The rule that put a player above the next one on the same points (nothing when points decided).
const TIE_BREAKS = {
  head_to_head: "head-to-head",
  win_rate: "win rate",
  wins: "more wins",
  fewer_draws: "fewer draws",
  player_id: "player id",
};

function tieBreak(rule) {
  return TIE_BREAKS[rule] || "";
}

/// The leaders' colors, by player id (the same in the table and the chart).
function topColors(rows) {
  return new Map(rows.slice(0, LABELLED).map((row, i) => [row.player_id, COLORS[i % COLORS.length]]));
}

// ---- matches ------------------------------------------------------------------------------------------

function showRoundPicker(status) {
  const select = $("round-select");
  if (select.options.length !== status.total_rounds) {
    select.replaceChildren(
      ...Array.from({ length: status.total_rounds }, (_, i) => el("option", { value: String(i + 1) }, `Round ${i + 1}`)),
    );
  }
}

function syncPicker() {
  if (state.shownRound) $("round-select").value = String(state.shownRound);
  $("round-live").classList.toggle("on", state.follow);
}

async function pickRound(roundId) {
  const status = state.snapshot && state.snapshot.status;
  if (!status || roundId < 1 || roundId > status.total_rounds) return;
  state.follow = roundId === status.current_round && status.status !== "COMPLETED";
  state.shownRound = roundId;
  syncPicker();
  if (state.follow) {
    showRound(state.snapshot.round);
    return;
  }
  try {
    showRound(await getJson(api(`/rounds/${roundId}`)));
  } catch (error) {
    notice(`Cannot load round ${roundId}: ${error.message}`);
  }
}

function outcome(match) {
  const result = match.result;
  if (!result) return { label: match.status === "IN_PROGRESS" ? "playing" : match.status.toLowerCase(), kind: match.status };
  if (result.status === "WIN") return { label: `${result.winner_player_id} won`, kind: "WIN" };
  if (result.status === "DRAW") return { label: "draw", kind: "DRAW" };
  const winner = result.winner_player_id;
  return { label: winner ? `${winner} won (technical)` : "both forfeited", kind: "TECHNICAL_LOSS" };
}

function showRound(round) {
  const list = $("matches");
  if (!round) {
    list.replaceChildren(el("li", { class: "hint" }, "No matches yet."));
    return;
  }
  const items = round.matches.map((match) => {
    const { label, kind } = outcome(match);
    const winner = match.result ? match.result.winner_player_id : null;
    const score = match.result && match.result.score ? match.result.score : {};
    // The id and the name: a spectator follows players by name.
    const side = (id) => el("b", { class: id === winner ? "won" : "" }, playerName(id));
    const points = match.result ? ` ${score[match.player_a_id] ?? 0}–${score[match.player_b_id] ?? 0}` : "";
    const item = el(
      "li",
      { class: "match", tabindex: "0", "data-match": match.match_id, title: "show the transcript" },
      el("div", { class: "line" },
        el("span", { class: "players" }, side(match.player_a_id), " vs ", side(match.player_b_id), points),
        el("span", { class: `state ${kind}` }, label)),
      el("div", { class: "line" },
        el("span", { class: "reason" }, match.result ? match.result.reason : ""),
        el("span", { class: "id" }, match.duration_ms === null || match.duration_ms === undefined
          ? match.match_id
          : `${match.match_id} · ${(match.duration_ms / 1000).toFixed(2)} s`)),
    );
    item.addEventListener("click", () => openTranscript(match.match_id));
    item.addEventListener("keydown", (event) => {
      if (event.key === "Enter") openTranscript(match.match_id);
    });
    return item;
  });
  if (round.byes && round.byes.length) {
    items.push(el("li", { class: "hint" }, `Sitting out: ${round.byes.join(", ")}`));
  }
  list.replaceChildren(...items);
}

// ---- transcripts ---------------------------------------------------------------------------------------

async function openTranscript(matchId) {
  const dialog = $("transcript");
  $("transcript-title").textContent = `Match ${matchId}`;
  $("transcript-summary").textContent = "Loading…";
  $("transcript-game").replaceChildren();
  $("transcript-entries").replaceChildren();
  if (!dialog.open) dialog.showModal();
  try {
    const answer = await getJson(api(`/matches/${encodeURIComponent(matchId)}`));
    const match = answer.match;
    const result = match && match.result;
    const game = gameOf(state.snapshot && state.snapshot.status.game_type);
    $("transcript-title").textContent =
      `Match ${matchId} · ${playerName(match.player_a_id)} vs ${playerName(match.player_b_id)}`;
    $("transcript-summary").textContent = result
      ? `${outcome(match).label}. ${result.reason}`
      : "Not finished yet: the transcript is recorded with the result.";
    $("transcript-game").replaceChildren(...(result ? game.picture(match, result, answer.entries) : []));
    $("transcript-entries").replaceChildren(...answer.entries.map((entry) => entryItem(game, entry)));
  } catch (error) {
    $("transcript-summary").textContent = `Cannot load the transcript: ${error.message}`;
  }
}

function entryItem(game, entry) {
  const at = entry.at ? entry.at.slice(11, 23) : ""; // hh:mm:ss.mmm
  if (entry.kind === "state") {
    const [words, reason] = game.state(entry.to, entry.reason || "");
    return el("li", { class: "entry state-change", "data-state": entry.to },
      el("span", { class: "at" }, at), el("span", { class: "dir" }, "•"),
      el("span", { class: "type" }, words),
      el("span", {}, reason));
  }
  const toPlayer = entry.direction === "to_player";
  const attempt = entry.attempt > 1 ? ` (attempt ${entry.attempt})` : "";
  const payload = entry.payload || {};
  const words = entry.error_code ? "" : game.message(entry.message_type, payload) || MESSAGE_WORDS[entry.message_type] || "";
  return el("li", { class: "entry" },
    el("span", { class: "at" }, at),
    el("span", { class: "dir", title: toPlayer ? "referee → player" : "player → referee" }, toPlayer ? "→" : "←"),
    el("span", { class: "type" }, `${entry.player_id} ${entry.message_type}${attempt}`),
    el("span", {},
      entry.error_code ? el("span", { class: "error" }, entry.error_code) : null,
      words ? el("span", { class: "words" }, words) : null,
      entry.payload ? el("details", { class: "payload" },
        el("summary", {}, "payload"), el("code", {}, JSON.stringify(entry.payload))) : null));
}

// ---- each game's words and picture: one home per game ---------------------------------------------------
//
// The referee's match states are named after even_odd (COLLECTING_CHOICES, DRAWING_NUMBER); each game
// says here what they mean in it, what its moves say, and how a finished match is drawn. A game not
// listed keeps the states' own names and shows its moves as they came.

/// Messages every game exchanges, in words.
const MESSAGE_WORDS = {
  GAME_INVITATION: "invited to the match",
  GAME_JOIN_ACK: "joined",
  GAME_OVER: "told the result",
  GAME_ERROR: "told what went wrong",
};

const CELL_NAMES = ["top left", "top", "top right", "left", "centre", "right", "bottom left", "bottom", "bottom right"];

const GAMES = {
  even_odd: {
    rule: "Each player says even or odd, then the referee draws a number from 1 to 10: different choices — " +
      "whoever matched its parity wins (3 points); the same choice — a draw (1 point each).",
    states: {
      WAITING_FOR_PLAYERS: "waiting for both players",
      COLLECTING_CHOICES: "collecting both choices",
      DRAWING_NUMBER: "drawing the number",
      EVALUATING: "comparing the parities",
    },
    message(type, payload) {
      if (type === "CHOOSE_PARITY_CALL") return "asked: even or odd?";
      if (type === "CHOOSE_PARITY_RESPONSE" && payload.parity_choice) return `chose ${payload.parity_choice}`;
      return "";
    },
    picture(match, result) {
      const choices = result.choices || {};
      const drawn = result.drawn_number;
      const card = (id) => el("div", { class: `card${id === result.winner_player_id ? " won" : ""}` },
        el("div", { class: "who" }, playerName(id)),
        el("div", { class: "big" }, choices[id] || "—"));
      const number = el("div", { class: "card drawn" },
        el("div", { class: "who" }, "the referee drew"),
        el("div", { class: "big" }, drawn === undefined ? "—" : `${drawn} · ${drawn % 2 === 0 ? "even" : "odd"}`));
      return [el("div", { class: "even-odd" }, card(match.player_a_id), card(match.player_b_id), number)];
    },
  },
  tic_tac_toe: {
    rule: "The players take turns marking a 3×3 grid (X moves first): three in a row wins (3 points); " +
      "a full grid with no line is a draw (1 point each).",
    states: {
      WAITING_FOR_PLAYERS: "waiting for both players",
      COLLECTING_CHOICES: "taking turns",
      // The referee passes through its number-drawing states; tic_tac_toe draws none.
      DRAWING_NUMBER: ["every move is in", ""],
      EVALUATING: ["reading the board", ""],
    },
    message(type, payload) {
      if (type === "GAME_MOVE_CALL") {
        const context = payload.step_context || {};
        return context.turn ? `asked for move ${context.turn} (plays ${context.your_mark})` : "asked for a move";
      }
      if (type === "GAME_MOVE_RESPONSE" && Number.isInteger(payload.position)) {
        return `played cell ${payload.position} (${CELL_NAMES[payload.position] || "off the board"})`;
      }
      return "";
    },
    picture(match, result, entries) {
      const board = result.final_board;
      if (!Array.isArray(board)) return [];
      const line = new Set(result.winning_line || []);
      const marks = { X: match.player_a_id, O: match.player_b_id };
      // Each mark's move number, from the moves the transcript shows landing where the final board has
      // that player's mark (a refused move never lands).
      const order = [];
      let moves = 0;
      for (const entry of entries) {
        const position = entry.payload && entry.payload.position;
        if (entry.message_type !== "GAME_MOVE_RESPONSE" || entry.error_code || !Number.isInteger(position)) continue;
        const mark = entry.player_id === match.player_a_id ? "X" : "O";
        if (board[position] === mark && order[position] === undefined) order[position] = ++moves;
      }
      const cell = (mark, index) => el("span", { class: `cell${line.has(index) ? " line" : ""}`, title: `cell ${index}` },
        mark, order[index] ? el("sub", { class: "move" }, String(order[index])) : null);
      return [
        el("div", { class: "ttt" },
          el("div", { class: "board", role: "img", "aria-label": "final board" }, ...board.map(cell)),
          el("div", { class: "legend" },
            el("div", {}, `X: ${playerName(marks.X)}`), el("div", {}, `O: ${playerName(marks.O)}`),
            el("div", { class: "muted" }, counted(result.total_turns ?? board.filter(Boolean).length, "move", "moves")))),
      ];
    },
  },
};

/// The game's words and picture; a game without its entry gets the states' names and no picture.
function gameOf(gameType) {
  const game = GAMES[gameType] || { states: {}, message: () => "", picture: () => [] };
  return {
    ...game,
    state(to, reason) {
      const words = game.states[to];
      if (Array.isArray(words)) return words;
      return [words || to.toLowerCase().replace(/_/g, " "), reason];
    },
  };
}

// ---- the progression chart ----------------------------------------------------------------------------

async function updateChart(snapshot) {
  const completed = snapshot.status.rounds_completed;
  const last = snapshot.last_round;
  const players = snapshot.standings.length;
  const fresh = state.chartFor === state.leagueId && state.chart.players.length === players;
  if (fresh && completed === state.chart.rounds) {
    drawChart();
    return;
  }
  if (fresh && last && last.round_id === state.chart.rounds + 1) {
    for (const player of state.chart.players) player.points.push(last.points[player.player_id] ?? 0);
    state.chart.rounds = last.round_id;
  } else {
    // Only the newest of overlapping fetches is kept.
    const ticket = (state.chartTicket = (state.chartTicket || 0) + 1);
    try {
      const chart = await getJson(api("/progression"));
      if (ticket !== state.chartTicket) return;
      state.chart = chart;
      state.chartFor = state.leagueId;
    } catch (error) {
      notice(`Cannot load the points history: ${error.message}`);
    }
  }
  drawChart();
}

function niceStep(max) {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) || power;
}

function drawChart() {
  const status = state.snapshot.status;
  // Redrawn only when what it shows changed: its rounds, or the leaders it colours.
  const leaders = state.snapshot.standings.slice(0, LABELLED).map((row) => row.player_id).join();
  const drawnFor = `${state.chartFor}|${state.chart.rounds}|${state.chart.players.length}|${status.total_rounds}|${leaders}`;
  if (drawnFor === state.drawnFor) return;
  state.drawnFor = drawnFor;
  // Taller for many players, so their lines stay apart.
  const players = state.chart.players.length;
  const [width, height] = [600, players > 16 ? 560 : 400];
  const pad = { left: 36, right: 170, top: 14, bottom: 38 };
  const rounds = Math.max(status.total_rounds, state.chart.rounds, 1);
  const maxPoints = Math.max(3, ...state.chart.players.flatMap((p) => p.points));
  const step = niceStep(maxPoints);
  const top = Math.ceil(maxPoints / step) * step;
  const x = (round) => pad.left + (round / rounds) * (width - pad.left - pad.right);
  const y = (points) => height - pad.bottom - (points / top) * (height - pad.top - pad.bottom);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "points after each round" });
  for (let value = 0; value <= top; value += step) {
    root.append(svg("line", { class: "axis", x1: pad.left, x2: width - pad.right, y1: y(value), y2: y(value) }));
    root.append(svg("text", { class: "tick", x: pad.left - 6, y: y(value) + 4, "text-anchor": "end" }, String(value)));
  }
  const every = Math.max(1, Math.ceil(rounds / 12));
  for (let round = 0; round <= rounds; round += every) {
    root.append(svg("text", { class: "tick", x: x(round), y: height - pad.bottom + 16, "text-anchor": "middle" }, String(round)));
  }
  root.append(svg("text", { class: "axis-label", x: (pad.left + width - pad.right) / 2, y: height - 4, "text-anchor": "middle" }, "round"));
  if (state.chart.rounds === 0) {
    root.append(svg("text", { class: "empty", x: (pad.left + width - pad.right) / 2, y: height / 2, "text-anchor": "middle" },
      "The chart grows as rounds complete."));
    $("chart").replaceChildren(root);
    return;
  }
  // Lines follow the table's order: the leaders are drawn last (on top) and labelled.
  const rank = new Map(state.snapshot.standings.map((row, i) => [row.player_id, i]));
  const colors = topColors(state.snapshot.standings);
  const drawn = [...state.chart.players].sort((a, b) => (rank.get(b.player_id) ?? 0) - (rank.get(a.player_id) ?? 0));
  const labels = [];
  for (const player of drawn) {
    const points = [[x(0), y(0)], ...player.points.map((p, i) => [x(i + 1), y(p)])];
    const color = colors.get(player.player_id);
    const line = svg("polyline", {
      class: color ? "top" : "others",
      points: points.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(" "),
      "data-player": player.player_id,
    });
    if (color) line.setAttribute("stroke", color);
    line.append(svg("title", {}, `${playerName(player.player_id)}: ${player.points.at(-1)} points`));
    root.append(line);
    if (color) labels.push({ player, color, y: points.at(-1)[1], x: points.at(-1)[0] });
  }
  // Labels at the lines' ends, pushed apart so none overlaps.
  labels.sort((a, b) => a.y - b.y);
  let floor = -Infinity;
  for (const label of labels) {
    label.y = Math.max(label.y, floor + 13);
    floor = label.y;
  }
  for (const label of labels) {
    const name = `${label.player.player_id} ${label.player.display_name}`;
    const text = name.length > 22 ? `${name.slice(0, 21)}…` : name;
    root.append(svg("text", { class: "label", x: label.x + 6, y: label.y + 4, fill: label.color }, text));
  }
  $("chart").replaceChildren(root);
}

// ---- compliance warnings -------------------------------------------------------------------------------

async function updateWarnings() {
  let listed;
  try {
    listed = await getJson("/api/warnings");
  } catch {
    return;
  }
  $("warnings-card").hidden = listed.warnings.length === 0;
  $("warnings").replaceChildren(
    ...listed.warnings.map((warning) => {
      const item = el("li", { "data-kind": warning.kind },
        `${warning.agent_id} · ${warning.kind.replace(/_/g, " ")} × ${warning.count}`);
      if (warning.example) item.append(el("div", { class: "hint" }, warning.example));
      return item;
    }),
  );
}

// ---- the roster ---------------------------------------------------------------------------------------

/// Asked again only when who is here may have changed: a registration, or the league's status. The
/// gateway shares one answer among the requests of a moment, so an answer may describe the system up to
/// its `lag_ms` before it was asked: once that long has passed since the change was seen, the roster is
/// asked once more, so the last change always shows, however the page's requests fell.
function updateRoster(status) {
  const key = `${status.league_id}|${status.status}|${status.registered_players}`;
  if (key === state.rosterFor) return;
  state.rosterFor = key;
  clearTimeout(state.rosterAgain);
  const seen = performance.now();
  fetchRoster().then((lag) => {
    if (lag === null || key !== state.rosterFor) return;
    state.rosterAgain = setTimeout(() => {
      if (key === state.rosterFor) fetchRoster();
    }, Math.max(0, seen + lag - performance.now()));
  });
}

/// Shows the roster; returns how far behind its request it may be (in ms), or null when it failed (the
/// next change asks again).
async function fetchRoster() {
  // Only the newest of overlapping fetches is shown.
  const ticket = (state.rosterTicket = (state.rosterTicket || 0) + 1);
  let roster;
  try {
    roster = await getJson("/api/players");
  } catch {
    state.rosterFor = null;
    return null;
  }
  if (ticket !== state.rosterTicket) return roster.lag_ms;
  $("roster").tBodies[0].replaceChildren(
    ...roster.players.map((player) => el("tr", { "data-player": player.player_id, class: player.leagues.includes(state.leagueId) ? "here" : "" },
      el("td", { class: "player", title: player.display_name },
        el("span", { class: "id" }, player.player_id), el("span", { class: "display" }, player.display_name)),
      el("td", { class: "strategy" }, player.strategy),
      el("td", { class: "leagues" }, player.leagues.join(" ")))),
  );
  const shown = roster.players.length < roster.total ? ` (the first ${roster.players.length} shown)` : "";
  $("roster-hint").textContent = `${counted(roster.total, "player", "players")} registered on this system${shown}: ` +
    "a bot's strategy, or external for an agent that registered itself.";
  return roster.lag_ms;
}

// ---- wiring --------------------------------------------------------------------------------------------

function connect() {
  const source = new EventSource(api("/events"));
  source.addEventListener("league", (event) => {
    $("connection").classList.add("live");
    showSnapshot(JSON.parse(event.data));
  });
  // EventSource reconnects by itself (to whichever replica answers); the dot says when it is away.
  source.addEventListener("error", () => $("connection").classList.remove("live"));
}

function showLeagues(leagues) {
  const picker = $("league-picker");
  picker.hidden = leagues.length < 2;
  picker.replaceChildren(
    ...leagues.map((league) => el("option", { value: league.league_id },
      `${league.league_id} · ${league.game_type.replace(/_/g, " ")} · ${league.status.toLowerCase()}`)),
  );
  if (state.leagueId) picker.value = state.leagueId;
}

async function start() {
  $("round-select").addEventListener("change", (event) => pickRound(Number(event.target.value)));
  $("round-prev").addEventListener("click", () => pickRound((state.shownRound || 1) - 1));
  $("round-next").addEventListener("click", () => pickRound((state.shownRound || 0) + 1));
  $("round-live").addEventListener("click", () => {
    state.follow = true;
    if (state.snapshot) showSnapshot(state.snapshot);
  });
  $("transcript-close").addEventListener("click", () => $("transcript").close());
  $("league-picker").addEventListener("change", (event) => {
    location.assign(`/leagues/${encodeURIComponent(event.target.value)}`);
  });
  const match = location.pathname.match(/^\/leagues\/([^/]+)\/?$/);
  if (match) state.leagueId = decodeURIComponent(match[1]);
  while (true) {
    try {
      const list = await getJson("/api/leagues");
      state.leagueId = state.leagueId || list.latest;
      showLeagues(list.leagues);
    } catch (error) {
      notice(`Cannot reach the league: ${error.message}`);
    }
    if (state.leagueId) break;
    notice("No league yet: this page shows it as soon as one is created.");
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
  connect();
}

start();
