// A scripted player and a spectator in real headless Chromium (playwright-core, Debian's chromium):
// sign in, buy development chips, sit at a table with bots, play a hand to showdown with several
// actions, chat and a sticker, drop the connection and reload and keep the seat, leave; a second
// browser spectates; the hands screen checks a hand's fairness in the page; a Casino Hold'em and a
// Russian Poker round. A screenshot of each screen goes to the artefacts folder.
// Usage: node browser_play.mjs <gateway url> <artefacts dir> <room id>
import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, artefacts, roomId] = process.argv.slice(2);
mkdirSync(artefacts, { recursive: true });
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
const PHONE = { width: 390, height: 844 };
const started = Date.now();
const say = (step, extra = {}) => console.log(JSON.stringify({ step, seconds: Math.round((Date.now() - started) / 100) / 10, ...extra }));
const screenshots = [];

async function browser(name) {
  const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), `poker-${name}-`)), {
    executablePath: process.env.POKER_CHROMIUM ?? "/usr/bin/chromium",
    args: FLAGS,
    headless: true,
    viewport: PHONE,
    deviceScaleFactor: 1,
    isMobile: true,
    hasTouch: true,
  });
  // Telegram's script is not on this network; the page works without it.
  await context.route("https://telegram.org/**", (route) => route.abort());
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  page.on("pageerror", (error) => say("page error", { name, error: String(error) }));
  return { context, page };
}

async function shot(page, name) {
  const path = join(artefacts, `${String(screenshots.length + 1).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path });
  screenshots.push(path);
}

async function signIn(page, name) {
  await page.goto(url);
  await page.waitForSelector("#sign-in-button");
  await page.fill("#name", name);
  await page.click("#sign-in-button");
  await page.waitForSelector(".room");
}

async function balance(page, pool) {
  const text = await page.textContent(`.balance[data-pool=${pool}]`);
  return Number((text ?? "0").replace(/[^0-9]/g, ""));
}

async function playToShowdown(page) {
  // Check or call whenever it is our turn, until a hand ends at a showdown we were part of.
  let actions = 0;
  let showdown = false;
  const deadline = Date.now() + 150_000;
  while (!showdown && Date.now() < deadline) {
    const state = await page.evaluate(() => ({
      turn: !!document.querySelector("#actions"),
      shown: [...document.querySelectorAll("#events li")].some((li) => li.textContent?.startsWith("You show ")),
      busted: !document.querySelector(".seat.mine") && !!document.querySelector("#sit-down"),
    }));
    if (state.busted) {
      // Called an all-in and lost: buy in again and go on.
      await page.click("#sit-down");
      await page.waitForSelector(".seat.mine");
      continue;
    }
    if (state.turn) {
      const button = (await page.$("#act-check")) ?? (await page.$("#act-call"));
      if (button) {
        await button.click();
        actions += 1;
        await page.waitForFunction(() => !document.querySelector("#actions") || document.querySelector(".toast.error:not(.hidden)"), null, { timeout: 10_000 }).catch(() => undefined);
        continue;
      }
    }
    if (actions >= 2 && state.shown) {
      showdown = true;
      break;
    }
    await page.waitForTimeout(150);
  }
  return { actions, showdown };
}

const player = await browser("player");
const page = player.page;
await signIn(page, "webby");
say("signed in");
await shot(page, "lobby");

await page.click("#buy-chips");
await page.waitForSelector("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await shot(page, "buy-chips");
await page.click("#buy button[data-method=DEVELOPMENT][data-pool=GRAM]");
await page.waitForFunction(() => /GRAM [1-9]/.test(document.querySelector(".balance[data-pool=GRAM]")?.textContent ?? ""));
const bought = await balance(page, "GRAM");
say("bought", { gram: bought });

await page.click(`.room[data-room="${roomId}"] button.play`);
await page.waitForSelector("#sit-down");
await shot(page, "table-before-sitting");
await page.click("#sit-down");
await page.waitForSelector(".seat.mine");
say("seated");

const hand = await playToShowdown(page);
say("played", hand);
await shot(page, "table-showdown");
if (!hand.showdown || hand.actions < 2) throw new Error(`no showdown with several actions: ${JSON.stringify(hand)}`);

// Lost everything at that showdown: buy in again (chat, the reconnect and leaving need a seat).
if (!(await page.$(".seat.mine")) && (await page.$("#sit-down"))) {
  await page.click("#sit-down");
  await page.waitForSelector(".seat.mine");
  say("seated again");
}
await page.fill("#chat-input", "good game, all");
await page.click("#chat-send");
await page.waitForSelector(".chat-line >> text=good game, all");
await page.click(".sticker[data-sticker=gg]");
await page.waitForSelector(".chat-line .sticker-shown[data-sticker=gg]");
say("chatted");
await shot(page, "table-chat");

// A dropped network: the feed says so, comes back by itself, and the seat is still ours.
await player.context.setOffline(true);
await page.waitForSelector(".link.reconnecting", { timeout: 30_000 });
await shot(page, "table-reconnecting");
await player.context.setOffline(false);
await page.waitForSelector(".link.live >> text=reconnected", { timeout: 30_000 });
if (!(await page.$(".seat.mine"))) throw new Error("the seat was lost after the reconnect");
say("reconnected after a drop");
// A reload (the WebView restarting): the tab's session and screen come back, the seat with them.
await page.reload();
await page.waitForSelector(".seat.mine", { timeout: 30_000 });
say("reconnected after a reload");

const spectator = await browser("spectator");
await signIn(spectator.page, "watcher");
await spectator.page.click(`.room[data-room="${roomId}"] button.watch`);
await spectator.page.waitForSelector("#delay-banner");
await spectator.page.waitForSelector(".seat", { timeout: 40_000 });
const leaked = await spectator.page.evaluate(() => [...document.querySelectorAll(".seat:not(.mine) .card:not(.back)")].length);
say("spectating", { faceUpCardsSeen: leaked });
await shot(spectator.page, "spectator");
await spectator.context.close();

await page.click("#leave");
await page.waitForSelector(".room");
say("left", { gram: await balance(page, "GRAM") });

await page.click("#my-hands");
await page.waitForSelector("#hands li[data-hand]", { timeout: 30_000 });
await page.click("#hands li[data-hand] .check-fairness");
await page.waitForSelector("#hands .verdict.ok, #hands .verdict.bad", { timeout: 30_000 });
const verdict = await page.textContent("#hands .verdict.ok, #hands .verdict.bad");
say("fairness", { verdict });
await shot(page, "my-hands-fairness");
if (!verdict?.startsWith("Fair")) throw new Error(`fairness check: ${verdict}`);
await page.click("#back");
await page.waitForSelector(".room");

async function houseRound(room, name) {
  await page.click(`.room[data-room="${room}"] button.play`);
  await page.waitForSelector("#deal", { timeout: 30_000 });
  await page.click("#deal");
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    const phase = await page.textContent("#round-figures").catch(() => "");
    if (phase?.includes("COMPLETE")) break;
    const decision = (await page.$("button[data-decision=CALL]")) ?? (await page.$("button[data-decision=TAKE_ANTE]")) ?? (await page.$(".box button[data-decision]"));
    if (decision) await decision.click().catch(() => undefined);
    await page.waitForTimeout(300);
  }
  const figures = await page.textContent("#round-figures");
  say(name, { figures });
  await shot(page, name);
  if (!figures?.includes("COMPLETE")) throw new Error(`${name} did not complete: ${figures}`);
  await page.click("#leave");
  await page.waitForSelector(".room");
}
await houseRound("casino-holdem-gram", "casino-holdem");
await houseRound("russian-poker-gram", "russian-poker");

await player.context.close();
say("done", { screenshots });
