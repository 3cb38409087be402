// The lobby and the house games' rules sheet at phone size (390x844, touch), in real headless Chromium
// (issue 36): the game tabs and the pool filter (kept over a reload), the first screen holding the tab
// bar and room cards rather than one long column, the buy panel in one or two lines a way, "Play now"
// at a stake seating the player at the fullest table with a free seat, and at Russian Poker the rules
// and pay tables in a sheet, the round's state in words, the exchange in two steps and only the
// decisions the round allows. Prints one JSON line per step; exits non-zero naming the first failure.
// Usage: node browser_lobby.mjs <gateway url> <artefacts dir> <table the bots sit at>
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, artefacts, botTable] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const PHONE = { width: 390, height: 844 };
const started = Date.now();
const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
let shots = 0;
const shot = (page, name) => page.screenshot({ path: join(artefacts, `${String(++shots).padStart(2, "0")}-${name}.png`) });

function check(condition, what, extra = {}) {
  if (!condition) {
    say("FAILED", { what, ...extra });
    throw new Error(`${what}: ${JSON.stringify(extra)}`);
  }
}

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "poker-lobby-")), {
  executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
  args: FLAGS,
  headless: true,
  viewport: PHONE,
  deviceScaleFactor: 1,
  isMobile: true,
  hasTouch: true,
  locale: "en-US",
});
await context.route("https://telegram.org/**", (route) => route.abort());
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20_000);
const pageErrors = [];
page.on("pageerror", (error) => pageErrors.push(String(error)));

// What the first screen holds: the tab bar, the active panel's cards wholly inside 844 px, the page's
// height and width.
const firstScreen = () => page.evaluate((height) => {
  const tabs = document.querySelector("#lobby-tabs");
  const selected = document.querySelector("#lobby-tabs [aria-selected=true]")?.getAttribute("data-tab") ?? "";
  const panel = document.querySelector(`.tab-panel[data-tab="${selected}"]`);
  const cards = [...(panel?.querySelectorAll(".room") ?? [])].map((card) => card.getBoundingClientRect());
  return {
    tabs: [...document.querySelectorAll("#lobby-tabs [role=tab]")].map((tab) => tab.getAttribute("data-tab")),
    selected,
    tabBarBottom: Math.round(tabs?.getBoundingClientRect().bottom ?? 9999),
    cards: cards.length,
    cardsOnFirstScreen: cards.filter((r) => r.bottom <= height && r.left >= 0 && r.right <= innerWidth + 1).length,
    cardHeights: cards.map((r) => Math.round(r.height)),
    pageHeight: document.documentElement.scrollHeight,
    pageWidth: document.documentElement.scrollWidth,
  };
}, PHONE.height);

// Sign in.
await page.goto(url);
await page.waitForSelector("#sign-in-button");
await page.fill("#name", "lobbyist");
await page.click("#sign-in-button");
await page.waitForSelector(".tab-panel[data-tab=no_limit] .room");
const first = await firstScreen();
say("lobby", first);
await shot(page, "lobby-phone");
check(first.tabs.join() === "no_limit,fixed_limit,house" && first.selected === "no_limit", "the three tabs, no-limit first", first);
check(first.tabBarBottom <= PHONE.height && first.cards >= 2 && first.cardsOnFirstScreen >= 2, "the tab bar and room cards on the first screen", first);
check(first.pageHeight < 1400 && first.pageWidth <= PHONE.width, "no long column, no sideways page", first);

// The pool filter: MPX rooms only, kept over a reload; then GRAM again.
await page.click("#pool-MPX");
await page.waitForFunction(() => [...document.querySelectorAll(".tab-panel[data-tab=no_limit] .room")].every((r) => r.getAttribute("data-room").includes("-mpx")));
await page.reload();
await page.waitForSelector(".tab-panel[data-tab=no_limit] .room");
const kept = await page.evaluate(() => ({
  pressed: document.querySelector("#pool-MPX")?.getAttribute("aria-pressed"),
  rooms: [...document.querySelectorAll(".tab-panel .room")].map((r) => r.getAttribute("data-room")),
}));
say("pool filter", kept);
check(kept.pressed === "true" && kept.rooms.length > 0 && kept.rooms.every((r) => r.includes("-mpx")), "the MPX filter, kept over a reload", kept);
await page.click("#pool-GRAM");
await page.waitForFunction(() => [...document.querySelectorAll(".tab-panel .room")].every((r) => r.getAttribute("data-room").includes("-gram")));

// The casino tab: tapped, its panel comes into view; and back.
await page.click("#tab-house");
await page.waitForFunction(() => {
  const r = document.querySelector(".tab-panel[data-tab=house]")?.getBoundingClientRect();
  return r && Math.abs(r.left - document.querySelector("#rooms").getBoundingClientRect().left) < 2;
});
const casino = await page.evaluate(() => ({
  selected: document.querySelector("#tab-house")?.getAttribute("aria-selected"),
  rooms: [...document.querySelectorAll(".tab-panel[data-tab=house] .room")].map((r) => r.getAttribute("data-room")),
}));
say("casino tab", casino);
await shot(page, "lobby-casino-tab");
check(casino.selected === "true" && casino.rooms.join() === "casino-holdem-gram,russian-poker-gram", "the casino tab and its rooms", casino);
await page.click("#tab-no_limit");
await page.waitForFunction(() => document.querySelector("#rooms").scrollLeft === 0);
await page.waitForTimeout(300);
const back = await page.evaluate(() => ({
  selected: document.querySelector("#lobby-tabs [aria-selected=true]")?.getAttribute("data-tab"),
  kept: JSON.parse(localStorage.getItem("poker.lobby") ?? "{}").tab,
}));
check(back.selected === "no_limit" && back.kept === "no_limit", "back at the no-limit tab, kept", back);

// The buy panel: each way to buy in one or two lines at 390 px; buy, then close it.
await page.click("#buy-chips");
await page.waitForSelector("#buy .buy-row button[data-method=DEVELOPMENT][data-pool=GRAM]");
const rows = await page.$$eval("#buy .buy-row", (all) => all.map((row) => {
  const line = parseFloat(getComputedStyle(row.querySelector(".buy-method")).lineHeight) || 16;
  return { height: Math.round(row.getBoundingClientRect().height), methodLines: Math.round(row.querySelector(".buy-method").getBoundingClientRect().height / line), right: Math.round(row.getBoundingClientRect().right) };
}));
say("buy panel", { rows });
await shot(page, "buy-panel");
check(rows.length > 0 && rows.every((r) => r.methodLines <= 2 && r.height <= 60 && r.right <= PHONE.width), "the buy panel's rows in one or two lines", { rows });
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForFunction(() => /GRAM [1-9]/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
await page.click("#buy .sheet-close");
check(!(await page.$("#buy")), "the buy panel closed");

// Play now at 5/10: seated at the fullest table with a free seat (the bots' one), no buy-in asked.
await page.click(".play-now-bar[data-tab=no_limit] button.stake[data-stake='5/10']");
await page.click("#play-now-no_limit");
await page.waitForSelector(".seat.mine", { timeout: 30_000 });
const seated = await page.evaluate(() => ({
  route: JSON.parse(sessionStorage.getItem("poker.route") ?? "{}"),
  sitDownOffered: !!document.querySelector("#sit-down"),
}));
say("play now", seated);
await shot(page, "play-now-seated");
check(seated.route.name === "table" && seated.route.tableId === botTable && !seated.sitDownOffered, "seated by Play now at the bots' table", seated);
await page.click("#leave");
await page.waitForSelector(".tab-panel .room", { timeout: 30_000 });

// Casino Hold'em: its ante pay table in the sheet.
await page.click("#tab-house");
await page.click('.room[data-room="casino-holdem-gram"] button.play');
await page.waitForSelector("#deal", { timeout: 30_000 });
await page.click("#house-rules-open");
await page.waitForSelector("#house-rules-sheet");
const casinoSheet = await page.evaluate(() => ({
  title: document.querySelector("#house-rules-title")?.textContent ?? "",
  ante: [...document.querySelectorAll("#pay-table-ante tbody tr")].map((tr) => tr.textContent),
}));
say("casino rules sheet", casinoSheet);
await shot(page, "casino-holdem-rules");
check(casinoSheet.ante.length === 10 && /^royal flush\s*100:1$/i.test(casinoSheet.ante[0] ?? "") && /^high card\s*1:1$/i.test(casinoSheet.ante[9] ?? ""), "Casino Hold'em's ante pay table", casinoSheet);
await page.keyboard.press("Escape");
check(!(await page.$("#house-rules-sheet")), "the sheet closed by Escape");
await page.click("#leave");
await page.waitForSelector(".tab-panel .room", { timeout: 30_000 });

// Russian Poker: the rules and pay tables in a sheet; a round in words, the exchange in two steps.
await page.click('.room[data-room="russian-poker-gram"] button.play');
await page.waitForSelector("#deal", { timeout: 30_000 });
await page.click("#house-rules-open");
await page.waitForSelector("#house-rules-sheet");
const sheet = await page.evaluate(() => {
  const box = document.querySelector("#house-rules-sheet").getBoundingClientRect();
  return {
    title: document.querySelector("#house-rules-title")?.textContent ?? "",
    rules: [...document.querySelectorAll("#house-rules-sheet .rules li")].map((li) => li.textContent),
    bet: [...document.querySelectorAll("#pay-table-bet tbody tr")].map((tr) => tr.textContent),
    bonus: document.querySelectorAll("#pay-table-bonus tbody tr").length,
    inView: box.top >= 0 && box.bottom <= innerHeight + 1,
  };
});
say("rules sheet", sheet);
await shot(page, "russian-poker-rules");
check(sheet.inView && sheet.bet.length === 10 && /^royal flush\s*100:1$/i.test(sheet.bet[0] ?? "") && sheet.bonus === 6, "the pay tables in the sheet", sheet);
check(sheet.rules.some((rule) => /first tap the cards/.test(rule)), "the exchange step in the rules", sheet);
await page.click("#house-rules-close");
check(!(await page.$("#house-rules-sheet")), "the sheet closed");

await page.click("#deal");
await page.waitForSelector("#round-figures", { timeout: 30_000 });
const RAW = /\b(DECISIONS|NO_GAME_CHOICES|CALLED|COMPLETE|WAITING|FOLDED)\b/;
const round = { phases: new Set(), exchange: null };
const deadline = Date.now() + 45_000;
while (Date.now() < deadline && !(await page.$("#round-figures[data-phase=COMPLETE]"))) {
  round.phases.add(await page.textContent("#house-phase"));
  const exchange = await page.$("button[data-decision=EXCHANGE]");
  if (exchange && round.exchange === null) {
    const before = { disabled: await exchange.isDisabled(), text: await exchange.textContent(), step: await page.textContent(".exchange-step") };
    await page.click(".box-cards.pickable .card >> nth=0");
    const after = await page.$eval("button[data-decision=EXCHANGE]", (b) => ({ disabled: b.disabled, text: b.textContent }));
    round.exchange = { before, after };
  }
  const decision = (await page.$("button[data-decision=CALL]")) ?? (await page.$("button[data-decision=TAKE_ANTE]")) ?? (await page.$(".box button[data-decision]:not([disabled])"));
  if (decision) await decision.click().catch(() => undefined);
  await page.waitForTimeout(300);
}
const done = {
  phases: [...round.phases],
  final: await page.textContent("#house-phase"),
  box: await page.textContent(".box [data-status]"),
  decisionsLeft: (await page.$$("button[data-decision]")).length,
  exchange: round.exchange,
};
say("russian poker", done);
await shot(page, "russian-poker-round");
check(!!(await page.$("#round-figures[data-phase=COMPLETE]")), "the round completed", done);
check(![...done.phases, done.final, done.box].some((text) => RAW.test(text)), "the round's state in words", done);
check(/^Round over/.test(done.final) && done.decisionsLeft === 0, "no decision offered once settled", done);
check(done.exchange !== null && done.exchange.before.disabled && /pick cards first/.test(done.exchange.before.text) && /tap the cards/.test(done.exchange.before.step)
  && !done.exchange.after.disabled && /Exchange 1 card/.test(done.exchange.after.text), "the exchange in two steps", done);
check(pageErrors.length === 0, "no page errors", { pageErrors });
await context.close();
say("done", { shots });
