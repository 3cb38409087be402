// The limits a player sets on themself (responsible gaming) at phone size (390x844, touch), in Russian,
// in real headless Chromium (tests/web/test_browser_limits.py runs it): the player signs in, buys 5,000
// GRAM chips, opens Limits from their profile, sets a daily purchase limit of 20,000 (the form says it
// applies at once; the table lists it with 15,000 left), raises it to 50,000 (the form says after 24
// hours; the table shows the raise pending with its time, 20,000 still in force), sets a 15-minute
// session reminder (the page clock moved 15 and 30 minutes on: a notice each time), starts a 3-day
// cooling-off after a confirmation naming its end, and then sees a purchase refused with the Russian
// text. Prints one JSON line per step; exits non-zero naming the first failure.
// Usage: node browser_limits.mjs <gateway url> <artefacts dir> <player name>
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, artefacts, name] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const PHONE = { width: 390, height: 844 };
const THIN = "\u202f";
const started = Date.now();
const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
let shots = 0;
const shot = (page, label) => page.screenshot({ path: join(artefacts, `${String(++shots).padStart(2, "0")}-${label}.png`), fullPage: true });

function check(condition, what, extra = {}) {
  if (!condition) {
    say("FAILED", { what, ...extra });
    throw new Error(`${what}: ${JSON.stringify(extra)}`);
  }
}

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "poker-limits-")), {
  executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
  args: FLAGS,
  headless: true,
  viewport: PHONE,
  deviceScaleFactor: 1,
  isMobile: true,
  hasTouch: true,
  locale: "ru-RU",
});
await context.route("https://telegram.org/**", (route) => route.abort());
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20_000);
const pageErrors = [];
page.on("pageerror", (error) => pageErrors.push(String(error)));
// The page's clock, moved on by the test for the session reminder (it runs as time does otherwise).
await page.clock.install();

/** The row of a limit in a pool's table. */
const row = (pool, kind) => page.evaluate(([p, k]) => {
  const tr = document.querySelector(`.limits-pool[data-pool=${p}] tr[data-kind=${k}]`);
  return tr && {
    amount: tr.getAttribute("data-amount"),
    pending: tr.getAttribute("data-pending"),
    cells: [...tr.querySelectorAll("th, td")].map((c) => c.textContent),
  };
}, [pool, kind]);

// Sign in, buy 5,000 GRAM chips.
await page.goto(url);
await page.waitForSelector("#sign-in-button");
await page.fill("#name", name);
await page.click("#sign-in-button");
await page.waitForSelector(".tab-panel .room");
await page.click("#buy-chips");
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForFunction(() => /GRAM 5\u202f000/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
await page.click("#buy .sheet-close");

// Limits, from the profile.
await page.click("button#who");
await page.waitForSelector("#open-limits");
const link = (await page.textContent("#open-limits")) ?? "";
check(link === "Лимиты", "the profile's way to Limits, in Russian", { link });
await page.click("#open-limits");
await page.waitForSelector(".limits-pool[data-pool=MPX] tr[data-kind=LOSS_MONTHLY]");
const empty = await page.evaluate(() => ({
  title: document.querySelector("header h1")?.textContent,
  pools: [...document.querySelectorAll(".limits-pool")].map((s) => s.getAttribute("data-pool")),
  rows: document.querySelectorAll(".limits-pool tbody tr").length,
  reminder: document.querySelector("#limits-reminder")?.textContent,
  pause: document.querySelector("#limits-break")?.textContent,
  route: JSON.parse(sessionStorage.getItem("poker.route") ?? "{}").name,
}));
say("limits", empty);
await shot(page, "limits-empty");
check(empty.title === "Лимиты" && empty.route === "limits" && empty.pools.join() === "GRAM,MPX" && empty.rows === 12, "six limits a pool", empty);

// A daily purchase limit of 20,000: at once.
await page.selectOption("#limit-pool", { label: "GRAM" });
await page.selectOption("#limit-kind", { label: "Покупки за сутки" });
await page.fill("#limit-amount", "20000");
await page.click("#limit-set");
await page.waitForSelector("#limit-confirm-box:not([hidden])");
const lowering = { text: await page.textContent("#limit-confirm-text"), later: await page.getAttribute("#limit-confirm", "data-later") };
say("confirm at once", lowering);
check(lowering.later === "false" && /сразу/.test(lowering.text ?? ""), "the form says the new limit applies at once", lowering);
await page.click("#limit-confirm");
await page.waitForSelector(".limits-pool[data-pool=GRAM] tr[data-kind=PURCHASE_DAILY][data-amount='20000']");
const set = await row("GRAM", "PURCHASE_DAILY");
say("limit set", { ...set, status: await page.textContent("#limit-status") });
check(set.cells[1] === `20${THIN}000` && set.cells[2] === `15${THIN}000` && set.pending === "", "20,000 in force, 15,000 left", set);

// Raised to 50,000: after 24 hours, shown pending with its time.
await page.fill("#limit-amount", "50000");
await page.click("#limit-set");
await page.waitForSelector("#limit-confirm-box:not([hidden])");
const raising = { text: await page.textContent("#limit-confirm-text"), later: await page.getAttribute("#limit-confirm", "data-later") };
say("confirm later", raising);
check(raising.later === "true" && /24 час/.test(raising.text ?? ""), "the form says a raise takes effect after 24 hours", raising);
await page.click("#limit-confirm");
await page.waitForSelector(".limits-pool[data-pool=GRAM] tr[data-kind=PURCHASE_DAILY][data-pending='50000']");
const raised = await row("GRAM", "PURCHASE_DAILY");
const tomorrow = new Intl.DateTimeFormat("ru-RU", { dateStyle: "short" }).format(new Date(await page.evaluate(() => Date.now() + 86_400_000)));
say("raise pending", { ...raised, tomorrow, status: await page.textContent("#limit-status") });
await shot(page, "limits-raise-pending");
check(raised.amount === "20000" && raised.cells[3].startsWith(`50${THIN}000 с ${tomorrow}`), "the raise pending with its time, 20,000 still in force", { raised, tomorrow });

// A reminder every 15 minutes: a notice at 15 and at 30 minutes of the session.
await page.fill("#reminder-minutes", "15");
await page.click("#reminder-save");
await page.waitForSelector("#limits-reminder[data-minutes='15']");
const reminder = await page.textContent("#limits-reminder");
check(reminder === "Напоминать каждые 15 минут.", "the reminder listed", { reminder });
await page.clock.fastForward("15:00");
await page.waitForSelector("#session-reminder");
const first = await page.textContent("#session-reminder .reminder-text");
await shot(page, "session-reminder");
await page.clock.fastForward("15:00");
await page.waitForFunction(() => document.querySelector("#session-reminder")?.getAttribute("data-minutes") >= "30");
const second = await page.textContent("#session-reminder .reminder-text");
say("reminder", { reminder, first, second });
check(/^Вы играете уже 1[56] минут\./.test(first ?? "") && /^Вы играете уже 3[01] минут/.test(second ?? ""), "a notice after 15 minutes and again after 30", { first, second });
await page.click("#session-reminder .toast-close");

// A cooling-off of 3 days: the confirmation names its end; then it runs.
await page.selectOption("#break-kind", { label: "Перерыв (1–42 дня)" });
await page.fill("#break-days", "3");
await page.click("#break-start");
await page.waitForSelector("#break-confirm-box:not([hidden])");
const end = new Intl.DateTimeFormat("ru-RU", { dateStyle: "short" }).format(new Date(await page.evaluate(() => Date.now() + 3 * 86_400_000)));
const asked = { warning: await page.textContent("#break-warning"), button: await page.textContent("#break-confirm") };
say("break confirmation", { ...asked, end });
await shot(page, "break-confirmation");
check(asked.button.startsWith(`Да, перерыв до ${end}`) && /нельзя отменить/.test(asked.warning ?? ""), "the confirmation names the end and says it cannot be undone", { asked, end });
await page.click("#break-confirm");
await page.waitForSelector("#limits-break[data-kind=COOLING_OFF]");
const running = await page.textContent("#limits-break");
say("break", { running });
await shot(page, "break-running");
check(running.startsWith(`Перерыв до ${end}`), "the break listed with its end", { running, end });

// A raise during the break is refused in words.
await page.fill("#limit-amount", "90000");
await page.click("#limit-set");
await page.click("#limit-confirm");
await page.waitForFunction(() => document.querySelector("#limit-status")?.className === "error");
const refusedRaise = await page.textContent("#limit-status");
check(refusedRaise === "Во время перерыва лимиты нельзя повысить или снять, а перерыв нельзя сократить.", "no raise during a break", { refusedRaise });

// Back in the lobby: a purchase is refused with the Russian text.
await page.click("#back");
await page.waitForSelector(".tab-panel .room");
check(!(await page.$("#toast")), "the limits screen's refusal left with it");
await page.click("#buy-chips");
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForSelector("#toast.error");
const refused = await page.textContent("#toast .toast-text");
say("purchase refused", { refused });
await shot(page, "purchase-refused");
check(refused === "У вас перерыв в игре. Покупки и игра (за столами и против дилера) станут доступны, когда он закончится.", "the purchase refused during the cooling-off", { refused });
check(pageErrors.length === 0, "no page errors", { pageErrors });
await context.close();
say("done", { shots });
