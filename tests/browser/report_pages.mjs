// Opens a league's results folder in headless Chromium (Debian's /usr/bin/chromium, through
// playwright-core), from disk as a reader would; started by tests/system/report.rs.
//
//   node report_pages.mjs <even_odd league folder> <tic_tac_toe league folder> <screenshot dir>
//
// Prints one JSON line: what the pages showed and every browser error. Screenshots of the index, its
// head-to-head table, a player's page and the tic_tac_toe matches are left in the screenshot dir.

import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [evenOdd, ticTacToe, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
const errors = [];
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
page.on("console", (message) => {
  if (message.type() === "error") errors.push(`console: ${message.text()}`);
});
page.on("requestfailed", (request) => errors.push(`failed: ${request.url()}`));
const open = (folder, file) => page.goto(pathToFileURL(path.join(folder, file)).href, { waitUntil: "load" });
const count = (selector) => page.evaluate((s) => document.querySelectorAll(s).length, selector);

await open(evenOdd, "index.html");
await page.screenshot({ path: `${shots}/index.png` });
const index = await page.evaluate(() => ({
  standingsRows: document.querySelectorAll("#standings tbody tr").length,
  ratingsRows: document.querySelectorAll("#ratings tbody tr").length,
  headToHeadRows: document.querySelectorAll("#head-to-head tbody tr").length,
  headToHeadCells: [...document.querySelectorAll("#head-to-head tbody td")].filter((td) => td.textContent).length,
  luck: document.querySelector("#luck")?.textContent ?? "",
  brokenImages: [...document.images].filter((img) => !img.complete || img.naturalWidth === 0).map((img) => img.src),
}));
await page.evaluate(() => document.querySelector("#head-to-head").closest("details").setAttribute("open", ""));
await page.locator("#head-to-head").screenshot({ path: `${shots}/head_to_head_table.png` });
await page.locator("#ratings").screenshot({ path: `${shots}/ratings_table.png` });
await page.locator('img[src="head_to_head.svg"]').screenshot({ path: `${shots}/head_to_head_chart.png` });

// The champion's page, by the link on the index.
await page.click("#standings tbody tr:first-child a");
await page.waitForSelector("#player-matches");
await page.screenshot({ path: `${shots}/player.png`, fullPage: true });
const player = {
  url: page.url(),
  headToHeadRows: await count("#player-head-to-head tbody tr"),
  matchRows: await count("#player-matches tbody tr"),
  meta: await page.textContent(".meta"),
};

await open(ticTacToe, "index.html");
await page.evaluate(() => document.querySelectorAll("details").forEach((d) => d.setAttribute("open", "")));
const boards = await count("table.board");
const winningCells = await count("table.board td.line");
const wins = await page.evaluate(
  () => [...document.querySelectorAll("details tbody tr")].filter((tr) => tr.cells[3]?.textContent === "win").length,
);
await page.locator("details >> nth=1").screenshot({ path: `${shots}/tic_tac_toe_round.png` });
await open(ticTacToe, "players/P01.html");
await page.screenshot({ path: `${shots}/tic_tac_toe_player.png`, fullPage: true });

await browser.close();
console.log(JSON.stringify({ ...index, player, boards, winningCells, wins, errors }));
