// Drives headless Chromium (Debian's /usr/bin/chromium, through playwright-core) against the gateway's
// live league page while a league runs; started by tests/system/live_page.rs.
//
//   node live_page.mjs <gateway base URL> <output dir> <players>
//
// Stdout protocol: "READY" once the page shows the league waiting for players (the test then starts
// them), and at the end one JSON line: what the page showed, and every browser error (a CSP violation
// or a script error counts). Exits non-zero, saying what was awaited, when the page never shows
// something it must. The timeouts below only turn a hang into that failure.

import { chromium } from "playwright-core";

const [base, outDir, playersArg] = process.argv.slice(2);
const players = Number(playersArg);
const LEAGUE_TIMEOUT = 240_000;
const STEP_TIMEOUT = 60_000;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
const errors = [];
const fail = async (what, error) => {
  console.error(`live page: ${what}: ${error.message}`);
  await page.screenshot({ path: `${outDir}/failure.png`, fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
};
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
// Every request the page's script makes, and when (the page's clock, as its history's).
await page.addInitScript(() => {
  window.fetchLog = [];
  const fetch = window.fetch.bind(window);
  window.fetch = (resource, init) => {
    window.fetchLog.push({ path: String(resource), at: performance.now() });
    return fetch(resource, init);
  };
});
page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
page.on("console", (message) => {
  if (message.type() === "error") errors.push(`console: ${message.text()}`);
});

async function step(what, action) {
  try {
    return await action();
  } catch (error) {
    return fail(what, error);
  }
}

// The page at `/` finds the newest league by itself.
const response = await step("open the page", () => page.goto(`${base}/`));
const headers = response.headers();
await step("the league waiting for players", () =>
  page.waitForSelector('#round-counter[data-status="REGISTERING"]', { timeout: STEP_TIMEOUT }),
);
await page.screenshot({ path: `${outDir}/registering.png` });
const waitingText = await page.textContent("#round-counter");
const championBeforeTheStart = await page.isVisible("#champion");
console.log("READY");

await step(`the table fills in with ${players} players`, () =>
  page.waitForFunction(
    (n) => document.querySelectorAll("#standings tbody tr").length === n,
    players,
    { timeout: LEAGUE_TIMEOUT },
  ),
);
await step("the round counter advances", () =>
  page.waitForFunction(() => Number(document.querySelector("#round-counter").dataset.current) >= 1, null, {
    timeout: LEAGUE_TIMEOUT,
  }),
);
await page.screenshot({ path: `${outDir}/running.png`, fullPage: true });
await step("the champion appears", () =>
  page.waitForSelector("#champion", { state: "visible", timeout: LEAGUE_TIMEOUT }),
);
// The chart's last round arrives with the final snapshot.
await step("the chart covers every round", () =>
  page.waitForFunction(
    () => {
      const total = Number(document.querySelector("#round-counter").dataset.total);
      const line = document.querySelector("#chart polyline");
      return line && line.getAttribute("points").split(" ").length === total + 1;
    },
    null,
    { timeout: STEP_TIMEOUT },
  ),
);
// The roster lists every player of the league once the last one registered, and the page asked for it
// again once the answer to the last change could no longer be behind it (`lag_ms`, however the page's
// requests fell against the gateway's shared answer).
await step(`the roster lists ${players} players of this league`, () =>
  page.waitForFunction(
    (n) => document.querySelectorAll("#roster tbody tr.here").length === n,
    players,
    { timeout: STEP_TIMEOUT },
  ),
);
const rosterLag = (await (await fetch(`${base}/api/players`)).json()).lag_ms;
await step("the roster asked again after the last change", () =>
  page.waitForFunction(
    (lag) => {
      const history = window.liveHistory;
      const last = history[history.length - 1];
      const change = history.find((h) => h.status === last.status && h.registered === last.registered);
      return window.fetchLog.some((f) => f.path === "/api/players" && f.at >= change.at + lag);
    },
    rosterLag,
    { timeout: STEP_TIMEOUT },
  ),
);
await page.screenshot({ path: `${outDir}/completed.png`, fullPage: true });

// A click on a match opens its transcript.
await step("a click opens a transcript", async () => {
  await page.click("#matches .match >> nth=0");
  await page.waitForFunction(() => document.querySelectorAll("#transcript-entries .entry").length > 0, null, {
    timeout: STEP_TIMEOUT,
  });
});
await page.screenshot({ path: `${outDir}/transcript.png` });

const shown = await page.evaluate(() => {
  const text = (selector) => document.querySelector(selector).textContent;
  const counter = document.querySelector("#round-counter");
  return {
    champion: text("#champion-name"),
    roundCounter: text("#round-counter"),
    totalRounds: Number(counter.dataset.total),
    rows: [...document.querySelectorAll("#standings tbody tr")].map((row) =>
      [...row.cells].map((cell) => cell.textContent),
    ),
    chartLines: document.querySelectorAll("#chart polyline").length,
    chartPoints: document.querySelector("#chart polyline").getAttribute("points").split(" ").length,
    transcriptTitle: text("#transcript-title"),
    transcriptTypes: [...document.querySelectorAll("#transcript-entries .entry .type")].map((e) => e.textContent),
    transcriptStates: [...document.querySelectorAll("#transcript-entries .state-change .type")].map((e) => e.textContent),
    transcriptWords: [...document.querySelectorAll("#transcript-entries .entry .words")].map((e) => e.textContent),
    boardCells: [...document.querySelectorAll("#transcript-game .ttt .cell")].map((e) => e.firstChild?.textContent ?? ""),
    moveNumbers: [...document.querySelectorAll("#transcript-game .ttt .cell .move")].map((e) => Number(e.textContent)),
    winningCells: document.querySelectorAll("#transcript-game .ttt .cell.line").length,
    evenOddCards: [...document.querySelectorAll("#transcript-game .even-odd .card .big")].map((e) => e.textContent),
    championDetail: text("#champion-detail"),
    gameRule: text("#game-rule"),
    leaderColors: [...document.querySelectorAll("#standings .swatch")].map((e) => getComputedStyle(e).backgroundColor),
    matchCardPlayers: [...document.querySelectorAll("#matches .match .players")].map((e) => e.textContent),
    leagueId: text("#league-name"),
    roster: [...document.querySelectorAll("#roster tbody tr")].map((row) =>
      [...row.cells].map((cell) => cell.textContent),
    ),
    history: window.liveHistory,
    fetches: window.fetchLog,
  };
});
await browser.close();

// The JSON API behind the page, as anyone could call it: what it answers, and what it refuses.
const league = encodeURIComponent(shown.leagueId);
const firstMatch = shown.transcriptTitle.split(" ")[1];
const get = async (path, init) => {
  const answer = await fetch(`${base}${path}`, init);
  return { status: answer.status, cache: answer.headers.get("cache-control"), body: await answer.text() };
};
const api = {
  snapshot: await get(`/api/leagues/${league}`),
  progression: await get(`/api/leagues/${league}/progression`),
  round: await get(`/api/leagues/${league}/rounds/1`),
  transcript: await get(`/api/leagues/${league}/matches/${firstMatch}`),
  players: await get("/api/players"),
  unknownLeague: await get("/api/leagues/no_such_league"),
  badLeagueId: await get("/api/leagues/%3Cscript%3E"),
  badRound: await get(`/api/leagues/${league}/rounds/zero`),
  post: await get(`/api/leagues/${league}`, { method: "POST" }),
};
console.log(JSON.stringify({ shown, championBeforeTheStart, waitingText, headers, errors, api }));
