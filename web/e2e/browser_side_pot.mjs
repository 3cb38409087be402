// A showdown with a side pot, in real headless Chromium (playwright-core, Debian's chromium): the player
// signs in, buys development chips, sits with the room's smallest buy-in (two players driven by the
// test over gRPC sit with more), and in each hand the three are dealt into goes all-in with the All-in
// button; the drivers raise past it and call, and check it down. Otherwise the player checks or calls.
// The showdown on the felt (an award per pot, cards shown) is photographed, won or lost (the table
// keeps a player who lost every chip at a showdown seated until its hold is over, so they see it):
// the first goes as `showdown-side-pot.png` into the docs screenshots folder
// (tests/web/test_browser_side_pot.py). At the showdown it also measures the felt: each award line
// names its pot and no award line overlaps a seat (bounding boxes, at 390x844).
// Motion: every animation the page runs is recorded as it starts (document.getAnimations() on every
// change of the page): the cards dealt and the chips flying to the pot and to the winners, with normal
// motion; then, the picture taken, the browser asks for reduced motion (emulateMedia) and the run plays
// on to the next deal and award, where nothing may move (no transform, no chip; a card only fades in).
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
      overlaps: window.__awardOverlaps(),
      // The pot flying to its winner as the award is drawn.
      potFlights: document.querySelectorAll("#felt .chip-fly.pot").length,
    };
  };
  // Where the felt's award lines meet a seat's box, if anywhere.
  window.__awardOverlaps = () => {
    const boxes = (selector) => [...document.querySelectorAll(selector)].map((e) => ({ e, r: e.getBoundingClientRect() }));
    const seats = boxes("#felt .seat");
    const found = [];
    for (const award of boxes("#felt .award")) {
      for (const seat of seats) {
        const a = award.r;
        const b = seat.r;
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
          found.push({ award: award.e.textContent, seat: seat.e.getAttribute("data-seat"), awardBox: [a.left, a.top, a.right, a.bottom].map(Math.round), seatBox: [b.left, b.top, b.right, b.bottom].map(Math.round) });
        }
      }
    }
    return found;
  };
  // Every animation as it starts, by kind (a card dealt, a chip to the pot or to a winner), whether it
  // moves anything (a transform), and under which motion setting the browser had then.
  const counted = new WeakSet();
  window.__motion = { normal: {}, reduced: {}, chips: { normal: 0, reduced: 0 }, deals: { normal: 0, reduced: 0 }, awards: { normal: 0, reduced: 0 } };
  const moves = (animation) => {
    if (animation.transitionProperty) return /transform|translate|scale|left|top/.test(animation.transitionProperty);
    return !!animation.effect?.getKeyframes?.().some((k) => (k.transform && k.transform !== "none") || k.translate || k.scale || k.left || k.top);
  };
  window.__recordMotion = (records) => {
    const mode = matchMedia("(prefers-reduced-motion: reduce)").matches ? "reduced" : "normal";
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (!(node instanceof HTMLElement)) continue;
        if (node.classList.contains("chip-fly")) window.__motion.chips[mode] += 1;
        // An award counts once a deal was seen under the same setting (the showdown before the switch
        // may be drawn again).
        if (node.matches(".card.dealt") || node.querySelector(".card.dealt")) window.__motion.deals[mode] += 1;
        if (node.classList.contains("award") && window.__motion.deals[mode] > 0) window.__motion.awards[mode] += 1;
      }
    }
    for (const animation of document.getAnimations()) {
      if (counted.has(animation)) continue;
      counted.add(animation);
      const target = animation.effect?.target;
      const kind = target?.classList.contains("chip-fly") ? (target.classList.contains("pot") ? "pot" : "bet") : target?.classList.contains("card") ? "card" : "other";
      const key = `${kind} ${moves(animation) ? "moving" : "still"}`;
      window.__motion[mode][key] = (window.__motion[mode][key] ?? 0) + 1;
    }
  };
  window.__latched = null;
  window.__ownAllIns = [];
  new MutationObserver((records) => {
    window.__recordMotion(records);
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
  // The chips land first (the animations are under half a second; the showdown is held 3 s).
  await page.evaluate(() => Promise.race([
    Promise.all(document.getAnimations().map((a) => a.finished.catch(() => undefined))),
    new Promise((resolve) => setTimeout(resolve, 1_000)),
  ]));
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
const normalMotion = await page.evaluate(() => JSON.parse(JSON.stringify(window.__motion)));

// Reduced motion: the next deal and award, played by checking or calling; nothing may move.
await page.emulateMedia({ reducedMotion: "reduce" });
const stillBy = Date.now() + 60_000;
let stillActions = 0;
const still = () => page.evaluate(() => ({ deals: window.__motion.deals.reduced, awards: window.__motion.awards.reduced }));
while (Date.now() < stillBy) {
  const seen = await still();
  if (seen.deals >= 1 && seen.awards >= 1) break;
  if (!(await page.$(".seat.mine")) && (await page.$("#sit-down"))) {
    await page.click("#sit-down").catch(() => undefined);
    continue;
  }
  const selector = (await page.$("#act-check")) ? "#act-check" : (await page.$("#act-call")) ? "#act-call" : null;
  if (selector && (await page.locator(selector).click({ timeout: 3_000 }).then(() => true, () => false))) stillActions += 1;
  else await page.waitForTimeout(100);
}
const reducedMotion = await page.evaluate(() => ({ ...JSON.parse(JSON.stringify(window.__motion)), matches: matchMedia("(prefers-reduced-motion: reduce)").matches }));
await shot(page, "reduced-motion");
say("motion", { normal: normalMotion, reduced: reducedMotion, stillActions });
const seen = await page.evaluate(() => ({
  pots: [...window.__potTexts],
  ownAllIn: window.__ownAllIns,
}));
say("showdown", { hands: hand, actions, won: best.won, hand: best.hand, seconds: Math.round((Date.now() - seatedAt) / 100) / 10, ...best.felt, ...seen });
await context.close();
say("done");
