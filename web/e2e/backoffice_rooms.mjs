// The staff console's rooms screen in real headless Chromium against the gateway's staff door
// (tests/web/test_browser_backoffice.py runs it; backoffice.mjs beside it is the console's main flow,
// staff_browser.mjs their shared harness).
// Modes:
//   close: (English) sofia (support) opens <room>: its table <table> is listed with the seated players
//          and "Watch", and no "Close after this hand" (support is not offered it); the seat numbers of
//          the tables list and of the live (spectator) view of the table are printed (the test holds
//          both to the seats the players took); then oskar (operations) on a phone (390x844) opens the
//          room, asks to close <table> after its hand: the form says what happens, is not sent without
//          a reason, and with one answers in words; the answer is printed and the screen saved
//          (close-table.png).
//   forms: (English) oskar (operations) creates the room <room> (private), renames it <name>,
//          disables and enables it, sets its maintenance (no new seats, with <message>; then the same
//          for a window an hour ahead, an hour long), adds <player>
//          to its allow-list and creates an invite code for two players. After each change the script
//          prints its step with `"wait": true` and reads a line: the test checks the effect through
//          the lobby's API meanwhile and answers "go".
// Each page is a fresh browser context, as another person's browser. Prints one JSON line per step;
// exits non-zero naming the first check that failed.
// Usage: node backoffice_rooms.mjs <staff door url> <artefacts dir> close <room> <table> <reason> <names, comma-separated>
//        node backoffice_rooms.mjs <staff door url> <artefacts dir> forms <room> <name> <message> <player>
import { createInterface } from "node:readline";
import { staffBrowser } from "./staff_browser.mjs";

const [url, artefacts, mode, ...args] = process.argv.slice(2);
const { say, check, open, signIn, shot, settled, text, finish, clean } = await staffBrowser(url, artefacts);

/** The rooms screen, and in it the room `room` opened (its tables listed). */
async function openRoom(page, room) {
  await page.click("#menu-rooms");
  const button = `#rooms button.open-room[data-room="${room}"]`;
  await page.waitForSelector(button);
  await page.click(button);
  await page.waitForSelector(`#room-title code:text-is("${room}")`);
  await settled(page);
}

/** The row of `table` in the room's tables list: its cells, its taken seats, its buttons. */
async function tableRow(page, table) {
  return page.evaluate((id) => {
    const row = [...document.querySelectorAll("#tables-of-room tbody tr")].find((r) => r.querySelector("td")?.textContent === id);
    if (!row) return null;
    return {
      cells: [...row.querySelectorAll("td")].map((c) => c.textContent),
      seats: [...row.querySelectorAll(".taken-seat")].map((s) => ({ seat: Number(s.getAttribute("data-seat")), text: s.textContent })),
      buttons: [...row.querySelectorAll("button")].map((b) => ({ kind: b.className, text: b.textContent, disabled: b.disabled })),
    };
  }, table);
}

async function closeTable() {
  const [room, table, reason, seatedNames] = args;
  const names = seatedNames.split(",").filter(Boolean);

  // sofia (support): the table listed with its players and "Watch", and no close; the seat numbers
  // of the list and of the live view.
  const sofia = await open("sofia");
  await signIn(sofia.page, "sofia");
  await openRoom(sofia.page, room);
  await sofia.page.waitForSelector(`button.watch-table[data-table="${table}"]`);
  const listed = await tableRow(sofia.page, table);
  const offered = await sofia.page.$$eval("button.close-table", (all) => all.length);
  say("support's table", { listed, offered });
  check(offered === 0, "support is not offered the close", { offered });
  check(names.every((n) => listed?.seats.some((s) => s.text.includes(n))), "the seated players listed", { listed });
  await sofia.page.click(`button.watch-table[data-table="${table}"]`);
  await sofia.page.waitForFunction((wanted) => {
    const shown = [...document.querySelectorAll("#live-seat-table .seat-name")].map((e) => e.textContent);
    return wanted.every((n) => shown.includes(n));
  }, names, { timeout: 60_000 });
  const live = await sofia.page.$$eval("#live-seat-table tbody tr", (rows) => rows.map((r) => ({
    seat: Number(r.getAttribute("data-seat")),
    number: r.querySelector("td")?.firstChild?.textContent ?? "",
    name: r.querySelector(".seat-name")?.textContent ?? "",
  })));
  say("seat numbers", { list: listed?.seats ?? [], live });
  await sofia.context.close();

  // oskar (operations) on a phone: the close, asked with a reason and confirmed.
  const oskar = await open("oskar", { width: 390, height: 844 });
  await signIn(oskar.page, "oskar");
  await openRoom(oskar.page, room);
  const closeButton = `button.close-table[data-table="${table}"]`;
  await oskar.page.waitForSelector(closeButton);
  const row = await tableRow(oskar.page, table);
  say("operations' table", { row });
  check(row?.buttons.some((b) => b.kind.includes("close-table") && b.text === "Close after this hand" && !b.disabled), "operations is offered the close", { row });
  await oskar.page.click(closeButton);
  await oskar.page.waitForSelector(`#close-table[data-table="${table}"]`);
  const asked = {
    title: await text(oskar.page, "#close-table h2"),
    what: await text(oskar.page, "#close-table-what"),
    now: await text(oskar.page, "#close-table-now"),
    confirm: await text(oskar.page, "#close-table-form button[type=submit]"),
  };
  say("close asked", asked);
  check(asked.title === `Close after this hand: table ${table}`, "the close's title", asked);
  check(asked.what.includes("every seated player is cashed out") && asked.what.includes("The room stays"), "what the close does, in words", asked);
  check(/players are seated\.$/.test(asked.now) && asked.now.includes(`${names.length} players`), "the players seated now", asked);
  // Without a reason nothing is sent (the field is required; the browser says so).
  await oskar.page.click("#close-table-form button[type=submit]");
  const noReason = {
    missing: await oskar.page.$eval("#close-table-form textarea[name=reason]", (t) => t.validity.valueMissing),
    status: await text(oskar.page, "#close-table-form-status"),
  };
  check(noReason.missing && noReason.status === "", "a close without a reason is not sent", noReason);
  await oskar.page.fill("#close-table-form textarea[name=reason]", reason);
  await oskar.page.click("#close-table-form button[type=submit]");
  await oskar.page.waitForSelector("#close-table-answer:not([hidden])", { timeout: 30_000 });
  const answer = {
    answer: await text(oskar.page, "#close-table-answer"),
    toast: await text(oskar.page, ".toast .toast-text"),
    form: !!(await oskar.page.$("#close-table-form")),
    width: await oskar.page.evaluate(() => document.documentElement.scrollWidth),
  };
  say("closed", answer);
  check(answer.answer === answer.toast && !answer.form, "the answer replaces the form", answer);
  check(answer.width <= 390, "the rooms screen fits 390 px", answer);
  check((await text(oskar.page, "#close-table-cancel")) === "Hide", "the close's panel is hidden, no longer cancelled");
  await oskar.page.click(".toast .toast-close");
  await oskar.page.$eval("#close-table", (e) => e.scrollIntoView({ block: "start" }));
  await shot(oskar.page, "close-table");
  await oskar.context.close();
}

// The test's answers, a line each (the forms mode waits for one after each change; standard input is
// read only then).
let answers = null;

/** Prints the step and waits for the test to have checked its effect. */
async function checked(step, extra = {}) {
  say(step, { ...extra, wait: true });
  answers ??= createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  const next = await answers.next();
  check(!next.done && next.value === "go", `the test checked ${step}`, { got: next.done ? null : next.value });
}

/** Opens the foldable section that holds the form `form` and fills its reason. */
async function openForm(page, form, reason) {
  const summary = `details.fold:has(#${form}) > summary`;
  await page.waitForSelector(summary);
  if (!(await page.$eval(`details.fold:has(#${form})`, (d) => d.open))) await page.click(summary);
  await page.fill(`#${form} textarea[name=reason]`, reason);
}

async function roomForms() {
  const [room, name, message, player] = args;
  const oskar = await open("oskar");
  await signIn(oskar.page, "oskar");
  const page = oskar.page;
  await page.click("#menu-rooms");
  await page.waitForSelector("#rooms button.open-room");

  // A new private room (no-limit, the form's own stakes and buy-ins).
  await openForm(page, "create-room", "A private room for the spring club evening");
  await page.fill("#create-room input[name=room_id]", room);
  await page.fill("#create-room input[name=display_name]", "Club evening");
  await page.check("#create-room input[name=private]");
  await page.click("#create-room button[type=submit]");
  await page.waitForSelector("#create-room-status.ok", { timeout: 30_000 });
  const created = await text(page, "#create-room-status");
  check(created === `Room ${room} created.`, "the room's creation answered", { created });
  await checked("created", { created });

  // The room, opened from the list (read again after the creation).
  const opener = `#rooms button.open-room[data-room="${room}"]`;
  await page.waitForSelector(opener);
  await page.click(opener);
  await page.waitForSelector(`#room-title code:text-is("${room}")`);
  await settled(page);

  // Its name changed.
  await openForm(page, "update-room", "The club asked for its own name");
  await page.fill("#update-room input[name=display_name]", name);
  await page.click("#update-room button[type=submit]");
  await page.waitForFunction((wanted) => document.querySelector("#room-title .data")?.textContent === wanted, name, { timeout: 30_000 });
  const edited = await text(page, ".toast .toast-text");
  check(edited.startsWith("The room is changed"), "the edit answered", { edited });
  await checked("edited", { edited });

  // Disabled, then enabled again.
  await page.waitForSelector("#room-switch", { state: "attached" });
  check((await text(page, "#room-switch button[type=submit]")) === "Disable the room", "the switch offers to disable");
  await openForm(page, "room-switch", "The club evening is postponed");
  await page.click("#room-switch button[type=submit]");
  await page.waitForFunction(() => document.querySelector("#room-state")?.textContent === "disabled", null, { timeout: 30_000 });
  await checked("disabled", { state: await text(page, "#room-state") });
  await page.waitForSelector("#room-switch", { state: "attached" });
  check((await text(page, "#room-switch button[type=submit]")) === "Enable the room", "the switch offers to enable");
  await openForm(page, "room-switch", "The club evening is on again");
  await page.click("#room-switch button[type=submit]");
  await page.waitForFunction(() => document.querySelector("#room-state")?.textContent === "enabled", null, { timeout: 30_000 });
  await checked("enabled", { state: await text(page, "#room-state") });

  // The room's maintenance: no new seats, with a message to players.
  await openForm(page, "room-maintenance-form", "Dealers' training before the club evening");
  await page.check("#room-maintenance-form input[name=no_new_seats]");
  await page.fill("#room-maintenance-form input[name=message]", message);
  await page.click("#room-maintenance-form button[type=submit]");
  await page.waitForFunction(() => (document.querySelector("#room-maintenance")?.textContent ?? "").startsWith("on: no new seats"), null, { timeout: 30_000 });
  await checked("maintenance", { shown: await text(page, "#room-maintenance") });

  // A window scheduled ahead: no new seats from an hour from now for an hour, in the browser's time.
  const [from, until] = await page.evaluate(() => {
    const pad = (n) => String(n).padStart(2, "0");
    const local = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    const start = new Date(Date.now() + 3_600_000);
    return [local(start), local(new Date(start.getTime() + 3_600_000))];
  });
  await openForm(page, "room-maintenance-form", "The dealers' training moves to tonight");
  await page.fill("#room-maintenance-form input[name=start_time]", from);
  await page.fill("#room-maintenance-form input[name=end_time]", until);
  await page.click("#room-maintenance-form button[type=submit]");
  await page.waitForFunction(() => (document.querySelector("#room-maintenance")?.textContent ?? "").startsWith("scheduled: no new seats; from "), null, { timeout: 30_000 });
  await checked("maintenance-window", { shown: await text(page, "#room-maintenance"), from, until });

  // The allow-list: one player added.
  await openForm(page, "allow-list-form", "The club's first member");
  await page.fill("#allow-list-form input[name=add]", player);
  await page.click("#allow-list-form button[type=submit]");
  await page.waitForSelector(`#allow-list li:text-is("${player}")`, { timeout: 30_000 });
  const listed = await page.$$eval("#allow-list li", (all) => all.map((l) => l.textContent));
  await checked("allow-list", { listed, toast: await text(page, ".toast .toast-text") });

  // An invite code for two players.
  await openForm(page, "invite-form", "Invitations for the club's guests");
  await page.fill("#invite-form input[name=max_uses]", "2");
  await page.click("#invite-form button[type=submit]");
  await page.waitForSelector("#invite-form-status.ok", { timeout: 30_000 });
  const code = await text(page, "#invite-code");
  const invited = await text(page, "#invite-form-status");
  check(!!code && invited.includes(code), "the invite code shown", { code, invited });
  await page.$eval("#room-detail", (e) => e.scrollIntoView({ block: "start" }));
  await shot(page, "room-forms");
  await checked("invite", { code, invited });
  await oskar.context.close();
}

try {
  if (mode === "close") await closeTable();
  else if (mode === "forms") await roomForms();
  else throw new Error(`no mode ${mode}`);
} finally {
  await finish();
  if (answers) process.stdin.destroy();
}
clean();
say("done", { mode });
