// The staff console's browser harness, shared by its page scripts (backoffice.mjs: the main flow;
// backoffice_rooms.mjs: the rooms screen): headless Chromium, one JSON line per step, checks that
// name what failed, fresh contexts as other people's browsers, the staff sign-in, screenshots, and
// the page errors and Content-Security-Policy refusals every script must end without.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** The harness for the console at `url`, saving screenshots in `artefacts`. */
export async function staffBrowser(url, artefacts) {
  mkdirSync(artefacts, { recursive: true });
  const started = Date.now();
  const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
  const pageErrors = [];
  const refusedByPolicy = [];

  function check(condition, what, extra = {}) {
    if (!condition) {
      say("FAILED", { what, ...extra });
      throw new Error(`${what}: ${JSON.stringify(extra)}`);
    }
  }

  const browser = await chromium.launch({
    executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    headless: true,
  });

  async function open(name, { locale = "en-US", width = 1280, height = 800, downloads = true } = {}) {
    const context = await browser.newContext({ locale, viewport: { width, height }, deviceScaleFactor: 1, acceptDownloads: downloads });
    // Telegram's widget is not reached from a test (no network): the page works without it.
    await context.route("https://telegram.org/**", (route) => route.abort());
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (error) => pageErrors.push(`${name}: ${error}`));
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy/i.test(message.text())) refusedByPolicy.push(`${name}: ${message.text()}`);
    });
    return { context, page };
  }

  async function signIn(page, staff) {
    await page.goto(url);
    await page.waitForSelector("#sign-in-button");
    await page.fill("#staff-name", staff);
    await page.click("#sign-in-button");
    await page.waitForSelector("#screen-dashboard");
    const who = (await page.textContent("#who")) ?? "";
    check(who.includes(staff), `signed in as ${staff}`, { who });
  }

  async function shot(page, name) {
    await page.screenshot({ path: join(artefacts, `${name}.png`) });
  }

  /** Waits until every loading line of the screen is gone (the screen's reads answered). */
  async function settled(page) {
    await page.waitForFunction(() => ![...document.querySelectorAll("p.muted")].some((p) => /^(loading|загрузка)…$/.test(p.textContent ?? "")));
  }

  const text = async (page, selector) => ((await page.textContent(selector)) ?? "").trim();

  /** The end of a script: the browser closed, then no page error and nothing refused by the policy. */
  async function finish() {
    await browser.close();
  }

  function clean() {
    check(pageErrors.length === 0, "no page error", { pageErrors });
    check(refusedByPolicy.length === 0, "nothing refused by the Content-Security-Policy", { refusedByPolicy });
  }

  return { say, check, open, signIn, shot, settled, text, finish, clean };
}
