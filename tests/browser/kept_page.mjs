// Opens the gateway's live page in headless Chromium after a `league run --keep-page` has ended, and
// reports what it shows: the finished league with its champion, and live updates still connected (not
// the grey dot of a gateway that is gone). Started by tests/system/live_page.rs.
//
//   node kept_page.mjs <gateway base URL> <output dir>
//
// Stdout: one JSON line, what the page showed and every browser error. Exits non-zero, saying what was
// awaited, when the page never shows it; the timeout only turns a hang into that failure.

import { chromium } from "playwright-core";

const [base, outDir] = process.argv.slice(2);
const STEP_TIMEOUT = 60_000;

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

try {
  await page.goto(`${base}/`);
  await page.waitForSelector("#champion", { state: "visible", timeout: STEP_TIMEOUT });
  await page.waitForSelector("#connection.live", { timeout: STEP_TIMEOUT });
} catch (error) {
  console.error(`kept page: ${error.message}`);
  await page.screenshot({ path: `${outDir}/failure.png`, fullPage: true }).catch(() => {});
  await browser.close();
  process.exit(1);
}
await page.screenshot({ path: `${outDir}/kept.png`, fullPage: true });
const shown = await page.evaluate(() => {
  const counter = document.querySelector("#round-counter");
  return {
    champion: document.querySelector("#champion-name").textContent,
    leagueId: document.querySelector("#league-name").textContent,
    roundCounter: counter.textContent,
    status: counter.dataset.status,
    connection: getComputedStyle(document.querySelector("#connection")).color,
    connectionLive: document.querySelector("#connection").classList.contains("live"),
    players: [...document.querySelectorAll("#standings tbody tr")].map((row) => row.cells[1].textContent),
  };
});
await browser.close();
console.log(JSON.stringify({ shown, errors }));
