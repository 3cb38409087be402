// The page as a Telegram Mini App, in headless Chromium at phone size with touch: a stub of
// `Telegram.WebApp` is put in place before any of the page's scripts (addInitScript), and the request
// for Telegram's script (https://telegram.org/js/telegram-web-app.js) is answered here with a one-line
// script that only marks it loaded, so nothing leaves the machine and the page's Content-Security-Policy
// is what admits it. The stub records every call the page makes and lets the run fire Telegram's events.
// Checked: sign-in with the stub's initData, ready() and expand(), the theme's colours and a live theme
// change (light, then dark without a colour it had), the safe areas and their changes, the stable
// viewport height, the BackButton (hidden in the lobby, shown elsewhere, its click going back and, at a
// table, leaving the seat: at once when not seated or not in a hand, after Telegram's showConfirm in the
// middle of a hand the player is in, staying on "no"), closing confirmation on and vertical swipes off while seated and both back
// on leaving, a haptic tap once per turn (not again when a chat line redraws the table) and a success
// haptic on each pot the player wins; the player's Telegram photo (initData's `user.photo_url`, its
// image answered here, as nothing leaves the machine) at their seat, and, once they turned it off on
// their profile, their initials at their next seat. Then the same page in a plain browser, with Telegram's script
// blocked and with the stand-in the script is outside Telegram: the development sign-in and the lobby,
// and nothing Telegram's applied.
// Prints one JSON line per step. Usage: node telegram_stub.mjs <gateway url> <artefacts dir> <room id> <initData>
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, artefacts, roomId, initData] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const TELEGRAM_SCRIPT = "https://telegram.org/js/telegram-web-app.js";
// A player's photo as Telegram serves it: a small PNG (1x1) stands in for it.
const PHOTOS = /^https:\/\/t\.me\/i\/userpic\//;
const PHOTO_PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");
const started = Date.now();
const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
let shots = 0;
const shot = (page, name) => page.screenshot({ path: join(artefacts, `${String(++shots).padStart(2, "0")}-${name}.png`) });

const DARK = {
  bg_color: "#17212b", text_color: "#f5f5f5", hint_color: "#708499", link_color: "#6ab3f3",
  button_color: "#5288c1", button_text_color: "#ffffff", secondary_bg_color: "#232e3c",
};
const LIGHT = {
  bg_color: "#ffffff", text_color: "#000000", hint_color: "#999999", link_color: "#2481cc",
  button_color: "#2481cc", button_text_color: "#ffffff", secondary_bg_color: "#efeff3",
};

// Runs in the page before its scripts: Telegram.WebApp as the Telegram apps give it (Bot API 8.0),
// recording calls in window.__tg.calls; window.__tg.emit fires an event as Telegram would.
function installStub({ initData, theme }) {
  const calls = [];
  const handlers = {};
  const backHandlers = [];
  const record = (name, ...args) => calls.push({ name, args, at: Date.now() });
  let user = {};
  try {
    user = JSON.parse(new URLSearchParams(initData).get("user") ?? "{}");
  } catch {}
  const compare = (a, b) => {
    const x = a.split(".").map(Number);
    const y = b.split(".").map(Number);
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    }
    return 0;
  };
  const app = {
    initData,
    initDataUnsafe: { user },
    version: "8.0",
    platform: "android",
    colorScheme: "dark",
    themeParams: { ...theme },
    safeAreaInset: { top: 24, bottom: 34, left: 0, right: 0 },
    contentSafeAreaInset: { top: 46, bottom: 0, left: 0, right: 0 },
    viewportHeight: 640,
    viewportStableHeight: 640,
    isExpanded: false,
    isClosingConfirmationEnabled: false,
    isVerticalSwipesEnabled: true,
    isVersionAtLeast: (version) => compare(app.version, version) >= 0,
    ready: () => record("ready"),
    expand: () => { record("expand"); app.isExpanded = true; },
    onEvent: (name, handler) => { (handlers[name] ??= []).push(handler); },
    offEvent: (name, handler) => { handlers[name] = (handlers[name] ?? []).filter((h) => h !== handler); },
    enableClosingConfirmation: () => { record("enableClosingConfirmation"); app.isClosingConfirmationEnabled = true; },
    disableClosingConfirmation: () => { record("disableClosingConfirmation"); app.isClosingConfirmationEnabled = false; },
    enableVerticalSwipes: () => { record("enableVerticalSwipes"); app.isVerticalSwipesEnabled = true; },
    disableVerticalSwipes: () => { record("disableVerticalSwipes"); app.isVerticalSwipesEnabled = false; },
    BackButton: {
      isVisible: false,
      show() { record("BackButton.show"); this.isVisible = true; return this; },
      hide() { record("BackButton.hide"); this.isVisible = false; return this; },
      onClick(handler) { backHandlers.push(handler); return this; },
      offClick(handler) { const i = backHandlers.indexOf(handler); if (i >= 0) backHandlers.splice(i, 1); return this; },
    },
    // Telegram's yes / no popup: recorded, and answered (a moment later, as Telegram does) with
    // window.__tg.confirmAnswer.
    showConfirm(message, callback) {
      record("showConfirm", message);
      const ok = window.__tg.confirmAnswer;
      window.__tg.popupsOpen += 1;
      setTimeout(() => {
        window.__tg.popupsOpen -= 1;
        callback?.(ok);
      }, 50);
    },
    HapticFeedback: {
      impactOccurred(style) { record("impactOccurred", style); return this; },
      notificationOccurred(kind) { record("notificationOccurred", kind); return this; },
      selectionChanged() { record("selectionChanged"); return this; },
    },
  };
  window.Telegram = { WebApp: app };
  window.__tg = {
    app,
    calls,
    emit: (name, ...args) => { for (const handler of handlers[name] ?? []) handler.apply(app, args); },
    pressBack: () => { for (const handler of [...backHandlers]) handler(); },
    confirmAnswer: true,
    // Popups shown and not answered yet: the page ignores the BackButton while one is open (one
    // question at a time, as Telegram shows them), so the run presses again only once it is answered.
    popupsOpen: 0,
  };
  window.__csp = [];
  document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
}

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "poker-telegram-")), {
  executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
  args: FLAGS,
  headless: true,
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 1,
  isMobile: true,
  hasTouch: true,
});
// Nothing else leaves for telegram.org (and nothing at all leaves this machine).
await context.route("https://telegram.org/**", (route) => route.abort());

async function newPage(name) {
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  return { page, errors, name };
}

const stateOf = (page) => page.evaluate(() => {
  const root = getComputedStyle(document.documentElement);
  const body = getComputedStyle(document.body);
  const app = window.__tg?.app;
  return {
    bg: root.getPropertyValue("--bg").trim(),
    panel: root.getPropertyValue("--panel").trim(),
    quiet: root.getPropertyValue("--quiet").trim(),
    stableHeight: root.getPropertyValue("--tg-viewport-stable-height").trim(),
    bodyBackground: body.backgroundColor,
    bodyColour: body.color,
    colourScheme: root.colorScheme,
    theme: document.documentElement.dataset.theme ?? "",
    padding: [body.paddingTop, body.paddingRight, body.paddingBottom, body.paddingLeft],
    backVisible: app?.BackButton.isVisible ?? null,
    closingConfirmation: app?.isClosingConfirmationEnabled ?? null,
    verticalSwipes: app?.isVerticalSwipesEnabled ?? null,
  };
});
const calls = (page, name) => page.evaluate((n) => window.__tg.calls.filter((c) => c.name === n), name);

// ---- In Telegram (the stub) ----
const { page, errors } = await newPage("telegram");
let leaveCalls = 0;
page.on("request", (request) => { if (request.url().endsWith("/LeaveTable")) leaveCalls += 1; });
await page.route(TELEGRAM_SCRIPT, (route) =>
  route.fulfill({ status: 200, contentType: "application/javascript", body: "window.__telegramScript = 'loaded';" }));
const photoRequests = [];
await page.route(PHOTOS, (route) => {
  photoRequests.push({ url: route.request().url(), referer: route.request().headers().referer ?? "" });
  return route.fulfill({ status: 200, contentType: "image/png", body: PHOTO_PNG });
});
await page.addInitScript(installStub, { initData, theme: DARK });
await page.goto(url);
await page.waitForSelector(".room");
const signedIn = await page.evaluate(() => ({
  session: JSON.parse(sessionStorage.getItem("poker.session") ?? "{}").playerId ?? "",
  signInForm: !!document.querySelector("#sign-in"),
  script: window.__telegramScript ?? "",
  ready: window.__tg.calls.filter((c) => c.name === "ready").length,
  expand: window.__tg.calls.filter((c) => c.name === "expand").length,
}));
const dark = await stateOf(page);
await shot(page, "telegram-lobby-dark");
say("started", { ...signedIn, dark });

// A live theme change: light, then dark again without the secondary colour (its default returns).
await page.evaluate((theme) => { window.__tg.app.themeParams = theme; window.__tg.app.colorScheme = "light"; window.__tg.emit("themeChanged"); }, LIGHT);
const light = await stateOf(page);
const lightPanel = await page.$eval(".room", (el) => getComputedStyle(el).backgroundColor);
await shot(page, "telegram-lobby-light");
const { secondary_bg_color: _dropped, ...darkWithoutSecondary } = DARK;
await page.evaluate((theme) => { window.__tg.app.themeParams = theme; window.__tg.app.colorScheme = "dark"; window.__tg.emit("themeChanged"); }, darkWithoutSecondary);
const darkAgain = await stateOf(page);
say("theme", { light, lightPanel, darkAgain });

// Safe areas and the stable viewport, changed live.
const insetsAtStart = dark.padding;
await page.evaluate(() => {
  const app = window.__tg.app;
  app.safeAreaInset = { top: 0, bottom: 20, left: 12, right: 8 };
  window.__tg.emit("safeAreaChanged");
  app.contentSafeAreaInset = { top: 30, bottom: 0, left: 0, right: 0 };
  window.__tg.emit("contentSafeAreaChanged");
  app.viewportStableHeight = 700;
  window.__tg.emit("viewportChanged", { isStateStable: true });
});
const changed = await stateOf(page);
say("insets", { atStart: insetsAtStart, changed: changed.padding, stableHeight: changed.stableHeight });

// The BackButton: hidden in the lobby, shown on my hands, and its click comes back.
const backInLobby = (await stateOf(page)).backVisible;
await page.click("#my-hands");
await page.waitForSelector("#hands");
const backOnHands = (await stateOf(page)).backVisible;
await page.evaluate(() => window.__tg.pressBack());
await page.waitForSelector(".room");
const backAfterPress = (await stateOf(page)).backVisible;
say("back button", { backInLobby, backOnHands, backAfterPress, lobbyAgain: !!(await page.$(".room")) });

// Chips, a table, a seat: closing confirmation on and vertical swipes off while seated.
await page.click("#buy-chips");
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForFunction(() => /GRAM [1-9]/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
await page.click(`.room[data-room="${roomId}"] button.play`);
await page.waitForSelector("#sit-down");
// Not seated: the BackButton goes back to the lobby at once, asking nothing; then to the table again.
await page.evaluate(() => window.__tg.pressBack());
await page.waitForSelector(".room");
const notSeatedBack = { confirms: (await calls(page, "showConfirm")).length, leaveCalls };
await page.click(`.room[data-room="${roomId}"] button.play`);
await page.waitForSelector("#sit-down");
const beforeSitting = await stateOf(page);
await page.click("#sit-down");
await page.waitForSelector(".seat.mine");
await page.waitForFunction(() => window.__tg.app.isClosingConfirmationEnabled && !window.__tg.app.isVerticalSwipesEnabled);
const seated = await stateOf(page);
// My Telegram photo at my seat: round, loaded lazily and without a referrer, under the page's policy.
const myAvatar = () => page.evaluate(() => {
  const holder = document.querySelector(".seat.mine .avatar");
  const img = holder?.querySelector("img");
  const box = holder?.getBoundingClientRect();
  return {
    src: img?.getAttribute("src") ?? "", referrerPolicy: img?.getAttribute("referrerpolicy") ?? "", loading: img?.getAttribute("loading") ?? "",
    loaded: !!img && img.complete && img.naturalWidth > 0, initials: holder?.getAttribute("data-initials") ?? null,
    drawnInitials: holder ? getComputedStyle(holder, "::after").content : "", radius: holder ? getComputedStyle(holder).borderRadius : "",
    size: box ? [Math.round(box.width), Math.round(box.height)] : [],
  };
});
await page.waitForFunction(() => (document.querySelector(".seat.mine .avatar img")?.naturalWidth ?? 0) > 0, null, { timeout: 10_000 }).catch(() => undefined);
const avatarSeated = await myAvatar();
await shot(page, "telegram-table");
say("seated", { beforeSitting, seated, notSeatedBack, avatar: avatarSeated, photoRequests });

// Every turn the page shows (#actions appearing) and every pot it shows won at my seat, with times.
await page.evaluate(() => {
  window.__turns = [];
  window.__myAwards = [];
  let shown = false;
  new MutationObserver(() => {
    const now = !!document.querySelector("#actions");
    if (now && !shown) window.__turns.push(Date.now());
    shown = now;
    const mine = document.querySelector(".seat.mine")?.getAttribute("data-seat");
    if (mine && [...document.querySelectorAll(".award[data-seats]")].some((a) => a.getAttribute("data-seats").split(" ").includes(mine))) {
      window.__myAwards.push(Date.now());
    }
  }).observe(document.body, { childList: true, subtree: true });
});

// Play (check or call, never fold, so a pot comes my way) until a chat line has redrawn the table
// during my turn and I have won a pot; re-sit if the chips run out.
let chatDuringTurn = null;
let actions = 0;
const deadline = Date.now() + 180_000;
while (Date.now() < deadline) {
  const won = (await calls(page, "notificationOccurred")).length > 0;
  if (won && chatDuringTurn) break;
  if (!(await page.$(".seat.mine")) && (await page.$("#sit-down"))) {
    await page.click("#sit-down").catch(() => undefined);
    await page.waitForTimeout(300);
    continue;
  }
  if (await page.$("#actions")) {
    if (!chatDuringTurn) {
      // A chat line redraws the table mid-turn: the turn's tap must not come again.
      const taps = (await calls(page, "impactOccurred")).length;
      const lines = await page.$$eval("#chat li", (l) => l.length);
      await page.fill("#chat-input", "gl");
      await page.click("#chat-send");
      await page.waitForFunction((n) => document.querySelectorAll("#chat li").length > n, lines);
      if (await page.$("#actions")) {
        chatDuringTurn = { tapsBefore: taps, tapsAfter: (await calls(page, "impactOccurred")).length };
      }
    }
    const selector = (await page.$("#act-check")) ? "#act-check" : (await page.$("#act-call")) ? "#act-call" : (await page.$("#act-all-in")) ? "#act-all-in" : null;
    if (selector && (await page.locator(selector).click({ timeout: 3_000 }).then(() => true, () => false))) actions += 1;
  }
  await page.waitForTimeout(150);
}
const played = await page.evaluate(() => ({
  turns: window.__turns,
  myAwards: window.__myAwards,
  taps: window.__tg.calls.filter((c) => c.name === "impactOccurred").map((c) => ({ at: c.at, style: c.args[0] })),
  wins: window.__tg.calls.filter((c) => c.name === "notificationOccurred").map((c) => ({ at: c.at, kind: c.args[0] })),
}));
say("played", { actions, chatDuringTurn, ...played });

// The BackButton at the table. In the middle of a hand I am in, leaving would fold it: it asks first
// (Telegram's popup), and "no" keeps me at the table; "yes" leaves (folding). Seated but not in a hand
// (just sat down, not dealt in yet): it leaves at once. Each press is made in the page in the same
// moment the page's state is read (a hand starts or ends between two calls of the run otherwise).
const backAtTable = (await stateOf(page)).backVisible;
async function pressBackWhen(inHand, answer) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!(await page.$(".seat.mine")) && (await page.$("#sit-down"))) {
      await page.click("#sit-down").catch(() => undefined); // out of chips: in again
    }
    const pressed = await page.evaluate(({ inHand, answer }) => {
      // A popup still open (its answer comes 50 ms later, far later on a loaded machine: one CI run
      // pressed "yes" while the "no" before it was unanswered, the page ignored it and never left).
      if (window.__tg.popupsOpen > 0) return false;
      const mine = document.querySelector(".seat.mine");
      if (!mine) return false;
      const dealtIn = document.querySelector("#felt")?.dataset.phase === "HAND_IN_PROGRESS"
        && !mine.classList.contains("folded") && mine.querySelectorAll(".seat-cards .card").length > 0;
      if (dealtIn !== inHand) return false;
      window.__tg.confirmAnswer = answer;
      window.__tg.pressBack();
      return true;
    }, { inHand, answer });
    if (pressed) return true;
    await page.waitForTimeout(50);
  }
  return false;
}
const confirmsBefore = (await calls(page, "showConfirm")).length;
const keptPressed = await pressBackWhen(true, false);
await page.waitForFunction(() => window.__tg.popupsOpen === 0); // the popup's answer ("no")
await page.waitForTimeout(600); // any leaving the answer would (wrongly) start
const kept = {
  pressed: keptPressed,
  confirms: (await calls(page, "showConfirm")).slice(confirmsBefore).map((c) => c.args[0]),
  stillSeated: !!(await page.$(".seat.mine")),
  leaveCalls,
};
const foldedPressed = await pressBackWhen(true, true);
await page.waitForSelector(".room", { timeout: 30_000 });
await page.waitForFunction(() => !window.__tg.app.isClosingConfirmationEnabled && window.__tg.app.isVerticalSwipesEnabled);
const folded = { pressed: foldedPressed, confirms: (await calls(page, "showConfirm")).length - confirmsBefore, leaveCalls };
say("back mid-hand", { kept, folded });

// The photo turned off on my profile (the switch under my name): my next seat shows my initials.
await page.click("#who");
await page.waitForSelector("#show-avatar");
const switchBefore = await page.isChecked("#show-avatar");
await page.locator("#show-avatar").uncheck();
await page.waitForFunction(() => { const box = document.querySelector("#show-avatar"); return !!box && !box.disabled && !box.checked; });
const profileSwitch = { before: switchBefore, after: await page.isChecked("#show-avatar"), preview: await page.$eval("#avatar-switch .avatar", (a) => ({ img: !!a.querySelector("img"), initials: a.getAttribute("data-initials") })) };
await shot(page, "telegram-photo-off");
await page.click("#who");

// Seated again, not dealt in yet: back at once, no question. (The seat left mid-hand is free once
// that hand settles: sit down until it is.)
await page.click(`.room[data-room="${roomId}"] button.play`);
await page.waitForSelector("#sit-down");
const seatBy = Date.now() + 30_000;
while (!(await page.$(".seat.mine")) && Date.now() < seatBy) {
  await page.click("#sit-down").catch(() => undefined);
  await page.waitForSelector(".seat.mine", { timeout: 2_000 }).catch(() => undefined);
}
const avatarOff = await myAvatar();
// Sitting out keeps me seated and out of the next hands: the moment "seated, not dealt in" comes
// for certain once any hand I was dealt into ends (between two hands of a heads-up table it lasts
// a moment, which the run missed for a whole minute on a loaded machine).
await page.click("#sit-out");
await page.waitForFunction(() => document.querySelector("#sit-out")?.textContent === "Sit in", null, { timeout: 30_000 });
const confirmsSeated = (await calls(page, "showConfirm")).length;
const outPressed = await pressBackWhen(false, false);
await page.waitForSelector(".room", { timeout: 30_000 });
await page.waitForFunction(() => !window.__tg.app.isClosingConfirmationEnabled && window.__tg.app.isVerticalSwipesEnabled);
const outOfHand = { pressed: outPressed, confirms: (await calls(page, "showConfirm")).length - confirmsSeated };
const left = await stateOf(page);
const csp = await page.evaluate(() => window.__csp);
say("left", { backAtTable, left, leaveCalls, outOfHand, csp, pageErrors: errors, profileSwitch, avatarOff });

// ---- A plain browser: Telegram's script blocked, then the stand-in it is outside Telegram ----
const PLAIN_SCRIPT = `window.__plainCalls = [];
window.Telegram = { WebApp: {
  initData: "", initDataUnsafe: {}, version: "6.0", platform: "unknown", colorScheme: "light", themeParams: {},
  isVersionAtLeast: () => false, onEvent: () => {}, ready: () => window.__plainCalls.push("ready"),
  expand: () => window.__plainCalls.push("expand"),
  BackButton: { show: () => window.__plainCalls.push("BackButton.show"), hide: () => {}, onClick: () => {} },
} };`;
for (const [name, script] of [["blocked", null], ["outside Telegram", PLAIN_SCRIPT]]) {
  const plain = await newPage(name);
  if (script !== null) {
    await plain.page.route(TELEGRAM_SCRIPT, (route) => route.fulfill({ status: 200, contentType: "application/javascript", body: script }));
  }
  await plain.page.goto(url);
  await plain.page.waitForSelector("#sign-in-button");
  await plain.page.fill("#name", script === null ? "plain" : "plainer");
  await plain.page.click("#sign-in-button");
  await plain.page.waitForSelector(".room");
  await plain.page.click("#my-hands");
  await plain.page.waitForSelector("#hands");
  const state = await stateOf(plain.page);
  const extra = await plain.page.evaluate(() => ({
    inlineTheme: document.documentElement.style.getPropertyValue("--tg-theme-bg-color"),
    plainCalls: window.__plainCalls ?? [],
  }));
  if (script === null) await shot(plain.page, "plain-browser-hands");
  say("plain", { name, ...state, ...extra, pageErrors: plain.errors });
  await plain.page.close();
}
await context.close();
