// A player plays at a table in headless Chromium while the gateway issues 10-second tokens: the page
// renews at half-life and, each time the table stream ends with its token (UNAUTHENTICATED
// TOKEN_EXPIRED: no stream outlives its token), opens it again at once without a visible break.
// Prints one JSON line: renewals, stream opens, every link state the page showed after it was first
// live, whether the seat and the live link are there at the end, the page's updates meanwhile.
// Usage: node token_renewal.mjs <gateway url> <room id> <seconds to play>
import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, roomId, seconds] = process.argv.slice(2);
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "poker-renewal-")), {
  executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
  args: FLAGS,
  headless: true,
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
});
await context.route("https://telegram.org/**", (route) => route.abort());
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20_000);
const pageErrors = [];
page.on("pageerror", (error) => pageErrors.push(String(error)));
let renewals = 0;
let streamOpens = 0;
page.on("request", (request) => {
  if (request.url().endsWith("/RenewToken")) renewals += 1;
  if (request.url().endsWith("/WatchTable")) streamOpens += 1;
});

await page.goto(url);
await page.waitForSelector("#sign-in-button");
await page.fill("#name", "renewer");
await page.click("#sign-in-button");
await page.waitForSelector(".room");
await page.click("#buy-chips");
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForFunction(() => /GRAM [1-9]/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
await page.click(`.room[data-room="${roomId}"] button.play`);
await page.waitForSelector("#sit-down");
await page.click("#sit-down");
await page.waitForSelector(".seat.mine");
await page.waitForSelector("#link.live");
// Every link state the page shows from now on, and how many table updates it drew.
await page.evaluate(() => {
  window.__links = [];
  window.__updates = 0;
  const link = document.querySelector("#link");
  new MutationObserver(() => {
    window.__links.push(link.className);
    window.__updates += 1;
  }).observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
});
const renewalsBefore = renewals;
const opensBefore = streamOpens;
const until = Date.now() + Number(seconds) * 1000;
let actions = 0;
while (Date.now() < until) {
  // Check, else fold, whenever it is our turn (never a call: a random bot's all-in called and lost
  // would take the seat, which this run is about keeping); the bots do the rest.
  if (await page.$("#actions")) {
    const selector = (await page.$("#act-check")) ? "#act-check" : (await page.$("#act-fold")) ? "#act-fold" : null;
    if (selector && (await page.locator(selector).click({ timeout: 3_000 }).then(() => true, () => false))) actions += 1;
  }
  await page.waitForTimeout(200);
}
const result = await page.evaluate(() => ({
  links: [...new Set(window.__links)],
  updates: window.__updates,
  seated: !!document.querySelector(".seat.mine"),
  live: document.querySelector("#link")?.className ?? "",
}));
console.log(JSON.stringify({
  step: "renewals",
  renewals: renewals - renewalsBefore,
  streamOpens: streamOpens - opensBefore,
  actions,
  pageErrors,
  ...result,
}));
await context.close();
