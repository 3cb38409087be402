// A showdown with a side pot, in real headless Chromium (playwright-core, Debian's chromium): the player
// signs in, buys development chips, sits with the room's smallest buy-in (two players driven by the
// test over gRPC sit with more), and in each hand the three are dealt into goes all-in with the All-in
// button; the drivers raise past it and call, and check it down. Otherwise the player checks or calls.
// The showdown on the felt (an award per pot, cards shown) is photographed, won or lost (the table
// keeps a player who lost every chip at a showdown seated until its hold is over, so they see it):
// the first goes as `showdown-side-pot.png` into the docs screenshots folder
// (tests/web/test_browser_side_pot.py).
// Usage: node browser_side_pot.mjs <gateway url> <artefacts dir> <room id> <docs screenshots dir>
import { chromium } from "playwright-core";
import { copyFileSync, mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, artefacts, roomId, docsShots] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
mkdirSync(docsShots, { recursive: true });
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const started = Date.now();
const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
let shots = 0;

async function shot(page, name) {
  const path = join(artefacts, `${String(++shots).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path });
  return path;
}

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "poker-side-pot-")), {
  executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
  args: FLAGS,
  headless: true,
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 1,
  isMobile: true,
  hasTouch: true,
  locale: "en-US",
});
// Telegram's script is not on this network; the page works without it.
await context.route("https://telegram.org/**", (route) => route.abort());
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20_000);
page.on("pageerror", (error) => say("page error", { error: String(error) }));

await page.goto(url);
await page.waitForSelector("#sign-in-button");
await page.fill("#name", "webby");
await page.click("#sign-in-button");
await page.waitForSelector(".room");
say("signed in");

await page.click("#buy-chips");
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForFunction(() => /GRAM [1-9]/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
say("bought");

await page.click(`.room[data-room="${roomId}"] button.play`);
await page.waitForSelector("#sit-down");
// The room's range comes with the room (a moment after the table): the box offers its smallest.
await page.waitForFunction(() => Number(document.querySelector("#buy-in")?.getAttribute("min") ?? 0) > 0);
const range = await page.$eval("#buy-in", (e) => ({ min: Number(e.min), max: Number(e.max), offered: Number(e.value) }));
await page.fill("#buy-in", String(range.min));
await page.click("#sit-down");
await page.waitForSelector(".seat.mine");
const seatedAt = Date.now();
say("seated", { buyIn: range.min, ...range });

// In the page: every pot's words while a hand is played (the pots leave the felt with the award), my
// all-in lines of the hand log as they come; the showdown with a side pot (an award per pot on the
// felt, two, with cards shown: another seat's face up, or mine shown in the log); and the felt as it
// was the moment one first showed (latched on every change of the page: a showdown a player lost it
// all at shows only briefly, see below).
await page.evaluate(() => {
  window.__potTexts = new Set();
  window.__showdownNow = () => {
    const felt = document.querySelector("#felt");
    const awards = felt ? felt.querySelectorAll(".award").length : 0;
    const others = felt ? felt.querySelectorAll(".seat:not(.mine) .seat-cards .card:not(.back)").length : 0;
    const mineShown = [...document.querySelectorAll("#events li")].some((li) => (li.textContent ?? "").startsWith("You show "));
    return awards >= 2 && (others > 0 || mineShown);
  };
  window.__feltNow = () => {
    const mine = document.querySelector(".seat.mine .seat-stack");
    return {
      awards: [...document.querySelectorAll("#felt .award")].map((a) => a.textContent),
      street: document.querySelector("#felt .street")?.textContent ?? "",
      board: [...document.querySelectorAll("#board .card")].map((c) => c.getAttribute("data-card") ?? c.textContent),
      lit: document.querySelectorAll("#felt .card.win").length,
      shown: document.querySelectorAll("#felt .seat:not(.mine) .seat-cards .card:not(.back)").length > 0
        || [...document.querySelectorAll("#events li")].some((li) => (li.textContent ?? "").startsWith("You show ")),
      seats: [...document.querySelectorAll("#felt .seat:not(.empty)")].map((s) => ({
        name: s.querySelector(".seat-name")?.firstChild?.textContent ?? "",
        stack: s.querySelector(".seat-stack")?.textContent ?? "",
        cards: [...s.querySelectorAll(".seat-cards .card")].map((c) => (c.classList.contains("back") ? "?" : c.getAttribute("data-card") ?? c.textContent)),
      })),
      // My seat's chips (null without a seat): 0 when I lost it all.
      mine: mine ? Number((mine.textContent ?? "").replace(/[^0-9]/g, "")) : null,
    };
  };
  window.__latched = null;
  window.__ownAllIns = [];
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node instanceof HTMLLIElement && node.parentElement?.id === "events" && (node.textContent ?? "").startsWith("You go all-in")) window.__ownAllIns.push(node.textContent);
      }
    }
    for (const pot of document.querySelectorAll("#pots .pot")) window.__potTexts.add(pot.textContent);
    if (!window.__latched && window.__showdownNow()) window.__latched = window.__feltNow();
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
});
const showdownNow = () => window.__showdownNow();
const feltNow = () => page.evaluate(() => window.__feltNow());

// A picture of the showdown, kept only if the showdown is still on screen once it is taken.
async function shootShowdown(name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const path = await shot(page, name);
  return (await page.evaluate(showdownNow)) ? path : null;
}

// A player who loses their all-in has no chips: the table keeps the seat through the showdown's hold
// (3 s), then cashes them out; the page then sits down again (the loop's first branch). The first
// showdown with two awards on the felt is the picture.
let hand = 0;
let actions = 0;
const hands = [];
let best = null; // { path, won, felt }
const deadline = Date.now() + 45_000;
while (Date.now() < deadline && !best) {
  const state = await page.evaluate(() => ({
    turn: !!document.querySelector("#actions"),
    busted: !document.querySelector(".seat.mine") && !!document.querySelector("#sit-down"),
    // Seats dealt into the hand: cards at the seat (mine face up, the others' backs).
    dealt: [...document.querySelectorAll("#felt .seat")].filter((s) => s.querySelectorAll(".seat-cards .card").length === 2).length,
  }));
  if (state.busted) {
    await page.click("#sit-down");
    await page.waitForSelector(".seat.mine");
    continue;
  }
  if (!state.turn) {
    await page.waitForTimeout(100);
    continue;
  }
  const shove = state.dealt >= 3 && !!(await page.$("#act-all-in"));
  // Mid-hand, no award on the felt: the next showdown latched is this hand's.
  if (shove) await page.evaluate(() => { window.__latched = null; });
  const selector = shove ? "#act-all-in" : (await page.$("#act-check")) ? "#act-check" : (await page.$("#act-call")) ? "#act-call" : null;
  // A locator: every update draws the bar again, and a handle taken before one would be detached.
  if (!selector || !(await page.locator(selector).click({ timeout: 3_000 }).then(() => true, () => false))) continue;
  actions += 1;
  if (!shove) {
    await page.waitForFunction(() => !document.querySelector("#actions"), null, { timeout: 10_000 }).catch(() => undefined);
    continue;
  }
  hand += 1;
  const allInAt = Date.now();
  say("all-in", { hand, dealtSeats: state.dealt });
  // The showdown, however briefly on screen: the felt as it was then.
  await page.waitForFunction(() => window.__latched !== null, null, { timeout: 30_000 });
  const felt = await page.evaluate(() => window.__latched);
  const won = (felt.mine ?? 0) > 0;
  const attempt = { hand, won, dealtSeats: state.dealt, playSeconds: Math.round((Date.now() - allInAt) / 100) / 10, felt };
  const path = await shootShowdown(`showdown-side-pot-${hand}`);
  // On screen with the player's own seat still there, won or lost.
  attempt.seenAtTheSeat = path !== null && (await page.evaluate(() => !!document.querySelector(".seat.mine")));
  hands.push(attempt);
  say("side pot showdown", attempt);
  if (path && !best) best = { path, won, hand, felt };
}
if (!best) {
  await shot(page, "no-side-pot-showdown");
  const log = await page.evaluate(() => [...document.querySelectorAll("#events li")].slice(-30).map((li) => li.textContent));
  say("no side pot showdown", { hands, log });
  throw new Error(hand ? "no picture of a showdown with two awards" : "never went all-in in a hand the three were dealt into");
}
copyFileSync(best.path, join(docsShots, "showdown-side-pot.png"));
const seen = await page.evaluate(() => ({
  pots: [...window.__potTexts],
  ownAllIn: window.__ownAllIns,
}));
say("showdown", { hands: hand, actions, won: best.won, hand: best.hand, seconds: Math.round((Date.now() - seatedAt) / 100) / 10, ...best.felt, ...seen });
await context.close();
say("done");
