// Two Telegram players at one table, each in a browser context of their own (headless Chromium at
// 390x844 with touch), each signed in with their own initData through a small stand-in for
// `Telegram.WebApp` (the request for Telegram's script is answered here, so nothing leaves the
// machine). Both buy chips and sit at the same table of the room, wait for a hand, send a chat line
// each, end the hand (whoever's turn it is folds) and, when the hand has ended, open My hands and the
// replayer of that hand. At each screen the run reads, per page, the name in its header, the name on
// the other player's seat and the chat lines, and scans the page's visible text and its full HTML
// (page.content(), attributes included) for the other player's Telegram id digits, `tg:`, the
// player's own digits and the table's `p-` handles; the test (tests/web/test_browser_telegram.py)
// judges what is found. A screenshot of each screen and page goes to the artefacts folder.
// Prints one JSON line per step. Usage:
//   node telegram_two_players.mjs <gateway url> <artefacts dir> <room id> <initData A> <initData B>
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [url, artefacts, roomId, ...initDatas] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const TELEGRAM_SCRIPT = "https://telegram.org/js/telegram-web-app.js";
const started = Date.now();
const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
let shots = 0;
const shot = (page, name) => page.screenshot({ path: join(artefacts, `${String(++shots).padStart(2, "0")}-${name}.png`) });

// Runs in the page before its scripts: Telegram.WebApp with this player's initData, every method a
// no-op (telegram_stub.mjs checks what the page does with them).
function installStub({ initData }) {
  let user = {};
  try {
    user = JSON.parse(new URLSearchParams(initData).get("user") ?? "{}");
  } catch {}
  const none = { top: 0, bottom: 0, left: 0, right: 0 };
  const noop = () => undefined;
  const button = { isVisible: false, show() { this.isVisible = true; return this; }, hide() { this.isVisible = false; return this; }, onClick() { return this; }, offClick() { return this; } };
  window.Telegram = { WebApp: {
    initData, initDataUnsafe: { user }, version: "8.0", platform: "android", colorScheme: "dark", themeParams: {},
    safeAreaInset: none, contentSafeAreaInset: none, viewportHeight: 844, viewportStableHeight: 844,
    isExpanded: true, isClosingConfirmationEnabled: false, isVerticalSwipesEnabled: true,
    isVersionAtLeast: () => true, ready: noop, expand: noop, onEvent: noop, offEvent: noop,
    enableClosingConfirmation: noop, disableClosingConfirmation: noop, enableVerticalSwipes: noop, disableVerticalSwipes: noop,
    BackButton: button, showConfirm: (_message, callback) => setTimeout(() => callback?.(true), 0),
    HapticFeedback: { impactOccurred: noop, notificationOccurred: noop, selectionChanged: noop },
  } };
}

const browser = await chromium.launch({ executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium", args: FLAGS, headless: true });

async function player(initData, label) {
  const user = JSON.parse(new URLSearchParams(initData).get("user"));
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale: "en-US" });
  await context.route("https://telegram.org/**", (route) => (route.request().url() === TELEGRAM_SCRIPT
    ? route.fulfill({ status: 200, contentType: "application/javascript", body: "window.__telegramScript = 'loaded';" })
    : route.abort()));
  await context.addInitScript(installStub, { initData });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  return { label, id: String(user.id), name: user.first_name, context, page, errors };
}

const players = [await player(initDatas[0], "a"), await player(initDatas[1], "b")];
const [a, b] = players;
a.other = b;
b.other = a;

// Every place `pattern` occurs in `text`, with a little of what stands either side.
function hits(text, pattern) {
  const found = [];
  const re = typeof pattern === "string" ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g") : pattern;
  for (const m of text.matchAll(re)) found.push(text.slice(Math.max(0, m.index - 60), m.index + m[0].length + 60));
  return found;
}

// The page's visible text and its whole HTML, scanned for ids.
const scans = [];
async function scan(p, where) {
  const text = await p.page.innerText("body");
  const html = await p.page.content();
  const look = (s) => ({
    otherId: hits(s, p.other.id),
    tg: hits(s, "tg:"),
    ownId: hits(s, p.id),
    handles: hits(s, /\bp-[0-9a-f]{12}\b/g),
  });
  const result = { where, player: p.label, text: look(text), html: look(html) };
  scans.push(result);
  await shot(p.page, `${p.label}-${where.replace(/\W+/g, "-")}`);
  return result;
}

const both = (fn) => Promise.all(players.map(fn));

// Signed in with Telegram, the lobby with the player's own name in the header.
await both(async (p) => {
  await p.page.goto(url);
  await p.page.waitForSelector(".room");
  await p.page.waitForFunction((name) => document.querySelector("#who")?.textContent === name, p.name, { timeout: 10_000 }).catch(() => undefined);
  p.header = await p.page.textContent("#who");
  p.session = await p.page.evaluate(() => JSON.parse(sessionStorage.getItem("poker.session") ?? "{}").playerId ?? "");
  await p.page.click("#buy-chips");
  await p.page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
  await p.page.waitForFunction(() => /GRAM [1-9]/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
  await scan(p, "lobby");
});
say("signed in", { players: players.map((p) => ({ player: p.label, name: p.name, header: p.header, sessionIsOwnId: p.session === `tg:${p.id}` })) });

// One sits, then the other (the lobby routes the second to the table with the free seat).
for (const p of players) {
  await p.page.click(`.room[data-room="${roomId}"] button.play`);
  await p.page.waitForSelector("#sit-down");
  await p.page.click("#sit-down");
  await p.page.waitForSelector(".seat.mine");
}
await both((p) => p.page.waitForSelector(".seat:not(.mine):not(.empty) .seat-name"));
await both((p) => p.page.waitForSelector("#felt[data-phase=HAND_IN_PROGRESS]", { timeout: 30_000 }));
say("seated, a hand running");

// A chat line each, seen on both pages.
const LINES = { a: "удачи всем", b: "good luck all" };
for (const p of players) {
  await p.page.fill("#chat-input", LINES[p.label]);
  await p.page.click("#chat-send");
}
await both((p) => p.page.waitForFunction((lines) => {
  const shown = [...document.querySelectorAll("#chat li")].map((li) => li.textContent ?? "");
  return lines.every((line) => shown.some((s) => s.includes(line)));
}, Object.values(LINES), { timeout: 15_000 }));
const readTable = (p) => p.page.evaluate(() => ({
  otherSeat: document.querySelector(".seat:not(.mine):not(.empty) .seat-name")?.childNodes[0]?.textContent ?? "",
  mySeat: document.querySelector(".seat.mine .seat-name")?.childNodes[0]?.textContent ?? "",
  header: document.querySelector("#who")?.textContent ?? "",
  chat: [...document.querySelectorAll("#chat li")].map((li) => li.textContent ?? ""),
}));
const midHand = {};
await both(async (p) => {
  midHand[p.label] = await readTable(p);
  await scan(p, "table mid-hand");
});
say("mid-hand", { pages: midHand });

// The hand ends: whoever's turn it is folds, until a pot has been awarded on both pages.
const handOver = (p) => p.page.evaluate(() => !!document.querySelector("#felt .award") || [...document.querySelectorAll("#events li")].some((li) => / won /.test(li.textContent ?? "")));
let folds = 0;
const endBy = Date.now() + 20_000;
while (Date.now() < endBy && !(await handOver(a) && await handOver(b))) {
  for (const p of players) {
    if (await p.page.$("#act-fold")) {
      if (await p.page.locator("#act-fold").click({ timeout: 2_000 }).then(() => true, () => false)) folds += 1;
    }
  }
  await a.page.waitForTimeout(150);
}
const ended = (await handOver(a)) && (await handOver(b));
const afterHand = {};
if (ended) {
  await both(async (p) => {
    afterHand[p.label] = await readTable(p);
    afterHand[p.label].log = await p.page.$$eval("#events li", (lines) => lines.map((li) => li.textContent ?? "").slice(-8));
    await scan(p, "table after the hand");
  });
}
say("hand over", { ended, folds, pages: afterHand });

// My hands and the replayer of the hand, when history has it within a few seconds.
const hands = {};
if (ended) {
  await both(async (p) => {
    await p.page.click("#leave");
    await p.page.waitForSelector(".room");
    const by = Date.now() + 15_000;
    await p.page.click("#my-hands");
    for (;;) {
      const listed = await p.page.waitForSelector("#hands li[data-hand]", { timeout: 3_000 }).then(() => true, () => false);
      if (listed || Date.now() > by) break;
      await p.page.click("#back");
      await p.page.waitForSelector(".room");
      await p.page.click("#my-hands");
    }
    if (!(await p.page.$("#hands li[data-hand]"))) {
      hands[p.label] = { listed: false };
      return;
    }
    await scan(p, "my hands");
    await p.page.click("#hands li[data-hand] .replay");
    await p.page.waitForSelector("#replayer");
    await p.page.click("#replay-last");
    const seats = await p.page.$$eval("#replayer .seat .seat-name", (names) => names.map((n) => n.textContent ?? ""));
    const lines = await p.page.$$eval("#replay-text li", (l) => l.map((li) => li.textContent ?? ""));
    hands[p.label] = { listed: true, seats, lines };
    await scan(p, "replayer");
  });
}
say("my hands", { hands });

say("done", { scans, pageErrors: Object.fromEntries(players.map((p) => [p.label, p.errors])) });
await browser.close();
