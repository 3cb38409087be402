// The staff console in real headless Chromium against the gateway's staff door. Three runs:
//   flow:    (English, 1280x800) rita (risk) signs in by the development name (her dashboard's play
//            figures printed: each pool's hands in the last hour and rake today), opens the fair-play case
//            of <dumper> from the queue and holds the dumper with a reason, then asks to release the
//            dumper: the page says it awaits finance, the case lists the request pending, and rita is
//            offered no decision on it (risk has no DecideRelease); fedor (finance) asks for a
//            house funding of <amount>, sees his own request's approval disabled with the words why,
//            and forcing it gets the cashier's FOUR_EYES_REQUIRED in words; fiona (finance) approves it
//            with a reason; adam (admin) finds rita's HoldPlayer and fiona's DecideHouseFunding as staff
//            actions with their reasons in the audit trail and exports it as JSON lines (saved to
//            <artefacts>/audit.jsonl); the dashboard and the audit trail again at 390x844.
//   release: (English) rhea (risk and finance) asks to release <partner> and finds her own request in
//            the money screen's release queue with both buttons disabled and the words why; fedor
//            (finance) finds rita's release of <dumper> on his dashboard and in the queue and approves
//            it with a reason; it is listed approved among the recent release decisions.
//   russian: (ru-RU) olga (operations, support), rita and fedor on each of their screens: every word on
//            screen Russian (but data: ids, names, the services' own summaries), no catalogue key and
//            no `{parameter}`.
// Each page is a fresh browser context (its own sessionStorage), as another person's browser.
// Prints one JSON line per step; exits non-zero naming the first check that failed.
//   The flow also: rita watches the live table <table> where the test seated <names> (the spectators'
//            view through the staff door: the seated names, no face-up hole card of anyone), and
//            opens one of the case's hands in the replayer (every seat's hole cards face up); olga
//            (support) writes a note on the first of <names> and finds it listed with her name.
// Usage: node backoffice.mjs <staff door url> <artefacts dir> <flow|release|russian> <dumper> <amount> [partner] [table] [names, comma-separated]
import { join } from "node:path";
import { staffBrowser } from "./staff_browser.mjs";

const [url, artefacts, mode, dumper, amount, partner, liveTableId, seatedNames] = process.argv.slice(2);
const { say, check, open, signIn, shot, settled, text, finish, clean } = await staffBrowser(url, artefacts);

/** The dashboard's play figures: the two tiles' titles, and per pool the number shown and its whole
 * value (`data-value`), for the hands in the last hour and the rake today. */
async function playFigures(page) {
  return page.evaluate(() => {
    const figures = { titles: ["#tile-hands h3", "#tile-rake h3"].map((s) => document.querySelector(s)?.textContent ?? "") };
    figures.lines = { hands: document.querySelector("#tile-hands")?.textContent ?? "", rake: document.querySelector("#tile-rake")?.textContent ?? "" };
    for (const pool of ["GRAM", "MPX"]) {
      figures[pool] = {};
      for (const kind of ["hands", "rake"]) {
        const shown = document.querySelector(`#${kind}-${pool}`);
        figures[pool][kind] = shown ? { value: shown.getAttribute("data-value"), text: shown.textContent } : null;
      }
    }
    return figures;
  });
}

async function flow() {
  // rita (risk): the sign-in, her dashboard, the case, the hold.
  const rita = await open("rita");
  await rita.page.goto(url);
  await rita.page.waitForSelector("#sign-in-button");
  check((await rita.page.title()) === "Poker back office", "the title", { title: await rita.page.title() });
  await shot(rita.page, "sign-in");
  await signIn(rita.page, "rita");
  await settled(rita.page);
  const menu = await rita.page.$$eval("nav.menu a", (all) => all.map((a) => a.id));
  const dashboard = {
    menu,
    house: await text(rita.page, "#tile-house"),
    cases: await text(rita.page, "#tile-cases"),
    alerts: await text(rita.page, "#tile-alerts"),
    releases: await text(rita.page, "#tile-releases"),
    figures: await playFigures(rita.page),
  };
  say("rita dashboard", dashboard);
  check(JSON.stringify(menu) === JSON.stringify(["menu-dashboard", "menu-rooms", "menu-players", "menu-fairplay", "menu-audit"]), "risk's screens", dashboard);
  check(dashboard.house.includes("Read by: finance, operations"), "a tile risk cannot read says who reads it", dashboard);
  const greyed = await rita.page.$$eval("nav.menu .greyed", (all) => all.map((e) => [e.id, e.getAttribute("aria-disabled"), e.textContent ?? ""]));
  check(
    greyed.length === 2 &&
      greyed[0][0] === "menu-money" && greyed[0][1] === "true" && greyed[0][2].includes("Read by: finance") &&
      greyed[1][0] === "menu-staff" && greyed[1][1] === "true" && greyed[1][2].includes("Read by: admin"),
    "the screens risk cannot open are greyed out in the menu, naming who opens them",
    greyed,
  );
  check(/open case/.test(dashboard.cases), "the open cases", dashboard);
  check(/not connected|No alert|alert/i.test(dashboard.alerts), "the alerts tile", dashboard);
  check(/awaits? finance's approval/.test(dashboard.releases), "the releases tile", dashboard);
  check(/hands? settled/.test(dashboard.figures.lines.hands) && /chips?/.test(dashboard.figures.lines.rake), "the play figures' tiles", dashboard);
  await shot(rita.page, "dashboard");

  await rita.page.click("#menu-fairplay");
  const openCase = `button.open-case[data-players~="${dumper}"]`;
  await rita.page.waitForSelector(openCase);
  await rita.page.click(openCase);
  await rita.page.waitForSelector("#case-title");
  await rita.page.waitForSelector("#case-evidence table");
  await settled(rita.page);
  const evidence = await rita.page.$$eval("#case-evidence tbody tr", (rows) => rows.map((r) => r.textContent));
  const caseView = { title: await text(rita.page, "#case-title"), score: await text(rita.page, "#case-score"), evidence: evidence.slice(0, 6), hands: await rita.page.$$eval("#case-hands button[data-hand]", (b) => b.length) };
  say("case", caseView);
  check(caseView.title.startsWith("Chip dumping"), "the case's kind", caseView);
  check(evidence.some((row) => row.startsWith("Hands together")) && caseView.hands > 0, "the case's evidence and hands", caseView);
  await rita.page.click("#case-hands button[data-hand]");
  await rita.page.waitForSelector("#case-hand #hand-view");
  // The replayer: every seat's hole cards face up from the deal, to the last step.
  await rita.page.waitForSelector("#case-hand #replayer .seat");
  const replayed = async () => rita.page.$$eval("#case-hand #replayer .seat", (seats) => seats.map((s) => ({
    seat: Number(s.getAttribute("data-seat")),
    cards: [...s.querySelectorAll(".seat-cards .card")].map((c) => c.getAttribute("data-card") ?? "back"),
  })));
  const replay = {
    hand: await rita.page.getAttribute("#case-hand #replayer", "data-hand"),
    deal: await replayed(),
    at: await text(rita.page, "#replay-step"),
  };
  await rita.page.click("#replay-last");
  replay.last = await replayed();
  replay.lastAt = await text(rita.page, "#replay-step");
  replay.lines = await rita.page.$$eval("#replay-text li", (all) => all.map((l) => l.textContent));
  say("replayer", replay);
  check(replay.deal.length >= 2 && replay.deal.every((s) => s.cards.length === 2 && s.cards.every((c) => c !== "back")), "every hole card face up in the replayer", replay);
  check(JSON.stringify(replay.last.map((s) => s.cards)) === JSON.stringify(replay.deal.map((s) => s.cards)), "the same cards at the last step", replay);
  await rita.page.$eval("#case-hand", (e) => e.scrollIntoView({ block: "start" }));
  await shot(rita.page, "case-replayer");
  // The hold: without a reason the form says so and sends nothing; with one it goes through.
  await rita.page.selectOption("#hold-form select[name=player_id]", dumper);
  await rita.page.selectOption("#hold-form select[name=hold]", "hold");
  // Without a reason the form is not sent (the field is required; the browser says so).
  await rita.page.click("#hold-form button[type=submit]");
  const noReason = {
    missing: await rita.page.$eval("#hold-form textarea[name=reason]", (t) => t.validity.valueMissing),
    status: await text(rita.page, "#hold-form-status"),
  };
  check(noReason.missing && noReason.status === "", "a change without a reason is not sent", noReason);
  await rita.page.$eval("#case-detail", (e) => e.scrollIntoView({ block: "start" }));
  await shot(rita.page, "fair-play-case");
  const holdWhy = `Chip dumping to the partner: ${caseView.hands} hands of evidence; held while risk reviews`;
  await rita.page.fill("#hold-form textarea[name=reason]", holdWhy);
  await rita.page.click("#hold-form button[type=submit]");
  // The answer in a message (the case is read again at once, with the hold).
  await rita.page.waitForSelector(".toast.info", { timeout: 30_000 });
  const held = await text(rita.page, ".toast.info .toast-text");
  say("held", { held });
  check(held === `${dumper} is on hold.`, "the hold's answer", { held });
  // The release: asked, and waiting for finance (four-eyes); the hold stays meanwhile.
  await rita.page.waitForSelector("#hold-form select[name=player_id]");
  await rita.page.selectOption("#hold-form select[name=player_id]", dumper);
  await rita.page.selectOption("#hold-form select[name=hold]", "release");
  const releaseWhy = "Reviewed the hands again: an old friend's bad play, not dumping; release asked";
  await rita.page.fill("#hold-form textarea[name=reason]", releaseWhy);
  await rita.page.click("#hold-form button[type=submit]");
  const asked = `The release of ${dumper} is asked: it awaits the approval of a member of finance.`;
  await rita.page.waitForFunction((words) => document.querySelector(".toast.info .toast-text")?.textContent === words, asked, { timeout: 30_000 });
  const pendingRow = `#case-releases .release-state[data-subject="${dumper}"][data-state="PENDING"]`;
  await rita.page.waitForSelector(pendingRow);
  const release = {
    requestId: await rita.page.getAttribute(pendingRow, "data-request"),
    row: (await rita.page.$eval(pendingRow, (e) => e.closest("tr")?.textContent ?? "")).trim(),
    decisions: await rita.page.$$eval("button[data-choice=approve], button[data-choice=reject]", (b) => b.length),
    menu: await rita.page.$$eval("nav.menu a", (all) => all.map((a) => a.id)),
  };
  say("release asked", release);
  check(!!release.requestId && release.row.includes("awaits finance") && release.row.includes(releaseWhy), "the case lists the release pending", release);
  check(release.decisions === 0 && !release.menu.includes("menu-money"), "risk is offered no decision on its own release", release);

  // The live table where the test seated two players: the spectators' view, late, no hidden card.
  await rita.page.click("#menu-rooms");
  await rita.page.click('#rooms button.open-room[data-room="nlhe-gram-classic"]');
  const watchButton = `button.watch-table[data-table="${liveTableId}"]`;
  await rita.page.waitForSelector(watchButton);
  await rita.page.click(watchButton);
  const names = (seatedNames ?? "").split(",").filter(Boolean);
  await rita.page.waitForFunction((wanted) => {
    const shown = [...document.querySelectorAll("#live-seat-table .seat-name")].map((e) => e.textContent);
    return wanted.every((n) => shown.includes(n));
  }, names, { timeout: 60_000 });
  const live = await rita.page.evaluate(() => ({
    table: document.querySelector("#live-table")?.getAttribute("data-table"),
    link: document.querySelector("#live-link")?.getAttribute("data-link"),
    linkText: document.querySelector("#live-link")?.textContent,
    state: document.querySelector("#live-state")?.textContent,
    turn: document.querySelector("#live-turn")?.textContent,
    pot: document.querySelector("#live-pot")?.textContent,
    seats: [...document.querySelectorAll("#live-seat-table tbody tr")].map((r) => ({
      seat: r.getAttribute("data-seat"),
      name: r.querySelector(".seat-name")?.textContent,
      cells: [...r.querySelectorAll("td")].map((c) => c.textContent),
      faceUp: [...r.querySelectorAll(".seat-cards .card[data-card]")].map((c) => c.getAttribute("data-card")),
      down: r.querySelectorAll(".seat-cards .card.back").length,
    })),
    log: [...document.querySelectorAll("#live-log li")].map((l) => l.textContent).slice(-4),
    opened: document.querySelector("#live-table")?.getAttribute("data-opened"),
  }));
  say("live table", live);
  check(live.table === liveTableId && live.link === "live", "the spectator stream is live", live);
  check(names.every((n) => live.seats.some((s) => s.name === n)), "the seated names", live);
  check(live.seats.every((s) => s.faceUp.length === 0), "no hidden card of anyone", live);
  await rita.page.$eval("#live-table", (e) => e.scrollIntoView({ block: "start" }));
  await shot(rita.page, "live-table");
  // Leaving the screen closes the stream.
  await rita.page.click("#menu-fairplay");
  await rita.page.waitForSelector("#screen-fairplay");
  check(!(await rita.page.$("#live-table")), "the live table closed with the screen");
  await rita.context.close();

  // olga (support): a note on the first seated player (found by name: the lobby knows them), listed
  // with her name.
  const olga = await open("olga");
  await signIn(olga.page, "olga");
  await olga.page.click("#menu-players");
  await olga.page.fill("#player-query", names[0]);
  await olga.page.click("#player-search-button");
  await olga.page.waitForSelector("button.open-player");
  const noted = await olga.page.getAttribute("button.open-player", "data-player");
  await olga.page.click("button.open-player");
  await olga.page.waitForSelector("#note-form");
  await settled(olga.page);
  // Without words the note is not sent (the field is required).
  await olga.page.click("#note-save");
  check(await olga.page.$eval("#note-text", (t) => t.validity.valueMissing), "an empty note is not sent");
  const noteWords = `Called the player about the held chips: they will send ID on Monday (${Date.now()})`;
  await olga.page.fill("#note-text", noteWords);
  await olga.page.click("#note-save");
  await olga.page.waitForSelector("#note-form-status.ok", { timeout: 30_000 });
  await olga.page.waitForSelector("#player-notes li.note");
  const notes = await olga.page.$$eval("#player-notes li.note", (all) => all.map((n) => ({
    event: n.getAttribute("data-event"),
    actor: n.getAttribute("data-actor"),
    text: n.querySelector(".note-text")?.textContent,
    head: n.querySelector(".note-head")?.textContent,
  })));
  say("note", { player: noted, words: noteWords, notes });
  check(notes[0]?.text === noteWords && notes[0]?.actor === "olga", "the note listed first with its author", { notes });
  await olga.page.$eval("#player-notes-panel", (e) => e.scrollIntoView({ block: "start" }));
  await shot(olga.page, "player-notes");
  // The player's holds panel (the audit trail's PLAYER_HELD / PLAYER_RELEASED): this one was never held.
  await olga.page.waitForSelector("#player-holds #player-holds-none");
  check((await text(olga.page, "#player-holds")).includes("never held"), "the player's screen says whether the player was ever held");
  // The dumper rita held (found by id): the hold is listed, newest first, with who held and why.
  await olga.page.fill("#player-query", dumper);
  await olga.page.click("#player-search-button");
  await olga.page.waitForSelector(`button.open-player[data-player="${dumper}"]`);
  await olga.page.click(`button.open-player[data-player="${dumper}"]`);
  await olga.page.waitForSelector("#player-hold-table");
  const holds = await olga.page.$$eval("#player-hold-table tbody tr", (rows) => rows.map((r) => ({
    kind: r.querySelector(".hold-state")?.getAttribute("data-kind"),
    cells: [...r.querySelectorAll("td")].map((c) => c.textContent),
  })));
  say("holds", { player: dumper, holds });
  check(holds[0]?.kind === "PLAYER_HELD" && holds[0]?.cells[2] === "rita", "the held player's screen lists risk's hold first", { holds });
  await olga.page.$eval("#player-holds", (e) => e.scrollIntoView({ block: "start" }));
  await shot(olga.page, "player-holds");
  await olga.context.close();

  // fedor (finance): asks; his own request offers no approval, and forcing it is refused.
  const fedor = await open("fedor");
  await signIn(fedor.page, "fedor");
  await fedor.page.click("#menu-money");
  await fedor.page.waitForSelector("#request-funding");
  await fedor.page.waitForSelector("#rake-table");
  const rake = await fedor.page.$$eval("#rake-table .rake", (all) => all.map((e) => [e.getAttribute("data-pool"), e.getAttribute("data-value")]));
  say("money: rake", rake);
  check(rake.length === 6 && rake.every(([pool, value]) => ["GRAM", "MPX"].includes(pool ?? "") && /^\d+$/.test(value ?? "")), "the money screen shows the rake per pool today, over 7 and 30 days", rake);
  // Purchases and payouts: chips in and out per pool and period, and the latest payouts one by one.
  await fedor.page.waitForSelector("#payment-flows");
  await fedor.page.waitForSelector(".payouts-table, #payouts-none");
  const payouts = await fedor.page.evaluate(() => ({
    flows: [...document.querySelectorAll("#payment-flows .purchased, #payment-flows .withdrawn")].map((e) => [e.className, e.getAttribute("data-pool"), e.getAttribute("data-value")]),
    rows: [...document.querySelectorAll(".payouts-table tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
  }));
  say("money: payouts", { payouts });
  check(payouts.flows.length === 12, "the money screen shows chips bought and paid out per pool today, over 7 and 30 days", payouts);
  await fedor.page.selectOption("#request-funding select[name=pool]", { label: "GRAM" });
  await fedor.page.fill("#funding-amount", amount);
  const askWhy = "Top up the GRAM house bank before the weekend";
  await fedor.page.fill("#request-funding textarea[name=reason]", askWhy);
  await fedor.page.click("#request-funding button[type=submit]");
  await fedor.page.waitForSelector("#request-funding-status.ok");
  const mine = '#funding-queue li.funding[data-by="fedor"]';
  await fedor.page.waitForSelector(mine);
  const requestId = await fedor.page.getAttribute(mine, "data-request");
  const own = {
    requestId,
    approveDisabled: await fedor.page.$eval(`${mine} button[data-choice=approve]`, (b) => b.disabled),
    words: await text(fedor.page, `${mine} .own-words`),
    reject: await fedor.page.$eval(`${mine} button[data-choice=reject]`, (b) => b.disabled),
  };
  say("own request", own);
  check(own.approveDisabled && !own.reject, "the asker's approval disabled, rejection offered", own);
  check(own.words === "This is your own request: only another member of finance can approve it.", "the words why", own);
  await shot(fedor.page, "money-own-request");
  // Forced past the disabled button (a tampered page): the cashier refuses, in words.
  await fedor.page.$eval(`${mine} button[data-choice=approve]`, (b) => b.removeAttribute("disabled"));
  await fedor.page.fill(`${mine} textarea[name=reason]`, "Trying to approve my own request");
  await fedor.page.click(`${mine} button[data-choice=approve]`);
  await fedor.page.waitForSelector(`${mine} .status.error`);
  const forced = await text(fedor.page, `${mine} .status.error`);
  say("forced", { forced });
  check(forced === "You cannot decide your own request: another member of finance must.", "FOUR_EYES_REQUIRED in words", { forced });
  await fedor.context.close();

  // fiona (finance): approves fedor's request with a reason.
  const fiona = await open("fiona");
  await signIn(fiona.page, "fiona");
  await fiona.page.click("#menu-money");
  const theirs = `#funding-queue li.funding[data-request="${requestId}"]`;
  await fiona.page.waitForSelector(theirs);
  await settled(fiona.page);
  check(!(await fiona.page.$eval(`${theirs} button[data-choice=approve]`, (b) => b.disabled)), "another member of finance may approve");
  check(!(await fiona.page.$(`${theirs} .own-words`)), "no own-request words for another");
  const approveWhy = "Approved: expected house-game volume this weekend";
  await fiona.page.fill(`${theirs} textarea[name=reason]`, approveWhy);
  await shot(fiona.page, "money-queue");
  await fiona.page.click(`${theirs} button[data-choice=approve]`);
  await fiona.page.waitForSelector(".toast.info", { timeout: 30_000 });
  const answer = await text(fiona.page, ".toast.info .toast-text");
  check(answer.startsWith("Approved; the account now holds"), "the approval's answer", { answer });
  await fiona.page.waitForFunction((id) => !document.querySelector(`#funding-queue li.funding[data-request="${id}"]`), requestId);
  await fiona.page.waitForSelector("#recent-fundings");
  const decided = await text(fiona.page, "#recent-fundings");
  say("approved", { decided: decided.slice(0, 300) });
  check(decided.includes("approved") && decided.includes("fiona"), "the decision listed", { decided });
  await fiona.context.close();

  const staffWhy = "New support hire: answers players' questions";
  // adam (admin): the staff directory: he lists nina (support) from the form, with a reason; a wrong
  // name is refused in words; nina then signs in with support's screens.
  const adam = await open("adam");
  await signIn(adam.page, "adam");
  await adam.page.click("#menu-staff");
  await adam.page.waitForSelector("#staff-list table, #staff-list p");
  await adam.page.fill("#staff-telegram-id", "1009");
  await adam.page.fill("#staff-name", "nina");
  await adam.page.check('#staff-roles input[data-role="support"]');
  await adam.page.fill("#staff-form textarea[name=reason]", staffWhy);
  await adam.page.click("#staff-form button[type=submit]");
  await adam.page.waitForSelector("#staff-form-status.ok", { timeout: 30_000 });
  const listedAnswer = await text(adam.page, "#staff-form-status");
  await adam.page.waitForSelector('#staff-table .staff-member[data-name="nina"][data-active="true"]');
  const row = await adam.page.$eval('#staff-table .staff-member[data-name="nina"]', (e) => e.closest("tr")?.textContent ?? "");
  // The same account under another name: the service keeps a name for good.
  await adam.page.fill("#staff-name", "nina2");
  await adam.page.fill("#staff-form textarea[name=reason]", "Rename attempt");
  await adam.page.click("#staff-form button[type=submit]");
  await adam.page.waitForSelector("#staff-form-status.error", { timeout: 30_000 });
  const renamed = await text(adam.page, "#staff-form-status");
  say("staff directory", { listedAnswer, row, renamed });
  check(listedAnswer === "nina: roles support.", "the listing's answer", { listedAnswer });
  check(row.includes("1009") && row.includes("support") && row.includes("adam"), "nina listed with her account, role and who listed her", { row });
  check(renamed.includes("a name never changes"), "a new name for a listed person refused in words", { renamed });
  await shot(adam.page, "staff-directory");
  const nina = await open("nina");
  await signIn(nina.page, "nina");
  await settled(nina.page);
  const ninaMenu = await nina.page.$$eval("nav.menu a", (all) => all.map((a) => a.id));
  say("nina signed in", { menu: ninaMenu, who: await text(nina.page, "#who") });
  check(JSON.stringify(ninaMenu) === JSON.stringify(["menu-dashboard", "menu-rooms", "menu-players", "menu-audit"]), "the listed person signs in with support's screens", { ninaMenu });
  await nina.context.close();

  // adam: the audit trail, its staff actions and their reasons, the export.
  await adam.page.click("#menu-audit");
  await adam.page.selectOption("#audit-kind", "STAFF_ACTION");
  await adam.page.click("#audit-search");
  const hold = 'li.staff-action[data-method="HoldPlayer"][data-actor="rita"]';
  const askedRelease = 'li.staff-action[data-method="ReleasePlayer"][data-actor="rita"]';
  const decide = 'li.staff-action[data-method="DecideHouseFunding"][data-actor="fiona"]';
  const listing = 'li.staff-action[data-method="SetStaffMember"][data-actor="adam"][data-code="OK"]';
  await adam.page.waitForSelector(listing);
  check((await text(adam.page, `${listing} .why`)) === staffWhy, "the listing's reason in the trail");
  await adam.page.waitForSelector(hold);
  await adam.page.waitForSelector(decide);
  await adam.page.waitForSelector(askedRelease);
  const lines = {
    hold: await text(adam.page, hold),
    holdWhy: await text(adam.page, `${hold} .why`),
    decide: await text(adam.page, decide),
    decideWhy: await text(adam.page, `${decide} .why`),
    releaseWhy: await text(adam.page, `${askedRelease} .why`),
    refused: await adam.page.$$eval('li.staff-action[data-method="DecideHouseFunding"][data-actor="fedor"] .answer', (all) => all.map((a) => a.textContent)),
  };
  say("audit", lines);
  check(lines.holdWhy === holdWhy && lines.decideWhy === approveWhy && lines.releaseWhy === releaseWhy, "the reasons in the trail", lines);
  check(lines.hold.includes("risk") && lines.decide.includes("finance"), "the roles in the trail", lines);
  check(lines.refused.some((a) => a.includes("refused") && a.includes("FOUR_EYES_REQUIRED")), "fedor's forced approval refused in the trail", lines);
  await shot(adam.page, "audit");
  const [download] = await Promise.all([adam.page.waitForEvent("download"), adam.page.click("#audit-export")]);
  const saved = join(artefacts, "audit.jsonl");
  await download.saveAs(saved);
  await adam.page.waitForSelector("#audit-export-status.ok");
  say("exported", { file: saved, name: download.suggestedFilename(), status: await text(adam.page, "#audit-export-status") });
  check(/^audit-\d{8}T\d{6}Z\.jsonl$/.test(download.suggestedFilename()), "the export's file name", { name: download.suggestedFilename() });
  await adam.context.close();

  // A phone's width: the dashboard and the audit trail at 390x844, nothing wider than the screen.
  const phone = await open("adam at 390", { width: 390, height: 844 });
  await signIn(phone.page, "adam");
  await settled(phone.page);
  const wide = async () => phone.page.evaluate(() => document.documentElement.scrollWidth);
  check((await wide()) <= 390, "the dashboard fits 390 px", { width: await wide() });
  await shot(phone.page, "dashboard-390");
  await phone.page.click("#menu-audit");
  await phone.page.waitForSelector("li.staff-action");
  check((await wide()) <= 390, "the audit trail fits 390 px", { width: await wide() });
  await shot(phone.page, "audit-390");
  await phone.page.click("#menu-staff");
  await phone.page.waitForSelector("#staff-table");
  check((await wide()) <= 390, "the staff directory fits 390 px", { width: await wide() });
  await shot(phone.page, "staff-390");
  await phone.context.close();
}

async function releaseByFinance() {
  // rhea (risk and finance) asks to release the partner: her own request offers her no decision.
  const rhea = await open("rhea");
  await signIn(rhea.page, "rhea");
  await rhea.page.click("#menu-fairplay");
  await rhea.page.click(`button.open-case[data-players~="${dumper}"]`);
  await rhea.page.waitForSelector("#hold-form select[name=player_id]");
  await rhea.page.selectOption("#hold-form select[name=player_id]", partner);
  await rhea.page.selectOption("#hold-form select[name=hold]", "release");
  await rhea.page.fill("#hold-form textarea[name=reason]", "The partner only received: release asked for finance to decide");
  await rhea.page.click("#hold-form button[type=submit]");
  await rhea.page.waitForSelector(`#case-releases .release-state[data-subject="${partner}"][data-state="PENDING"]`, { timeout: 30_000 });
  await rhea.page.click("#menu-money");
  const hers = `#release-queue li.release[data-subject="${partner}"][data-by="rhea"]`;
  await rhea.page.waitForSelector(hers);
  const own = {
    approve: await rhea.page.$eval(`${hers} button[data-choice=approve]`, (b) => b.disabled),
    reject: await rhea.page.$eval(`${hers} button[data-choice=reject]`, (b) => b.disabled),
    words: await text(rhea.page, `${hers} .own-words`),
  };
  say("own release", own);
  check(own.approve && own.reject, "the asker's own release offers no decision", own);
  check(own.words === "This is your own request: another member of finance decides it.", "the words why", own);
  await shot(rhea.page, "money-own-release");
  await rhea.context.close();

  // fedor (finance): the dashboard counts it, the queue has it, he approves rita's release.
  const fedor = await open("fedor");
  await signIn(fedor.page, "fedor");
  await settled(fedor.page);
  const tile = await text(fedor.page, "#tile-releases");
  const count = Number((await text(fedor.page, "#pending-releases")).replace(/\D/g, ""));
  say("releases tile", { tile, count });
  check(count >= 2 && /releases await finance's approval/.test(tile), "the dashboard counts the releases awaiting approval", { tile, count });
  await fedor.page.click("#tile-releases a");
  const theirs = `#release-queue li.release[data-subject="${dumper}"][data-by="rita"]`;
  await fedor.page.waitForSelector(theirs);
  await settled(fedor.page);
  const requestId = await fedor.page.getAttribute(theirs, "data-request");
  const offered = {
    requestId,
    approve: await fedor.page.$eval(`${theirs} button[data-choice=approve]`, (b) => b.disabled),
    own: !!(await fedor.page.$(`${theirs} .own-words`)),
    line: await text(fedor.page, theirs),
  };
  say("release offered", offered);
  check(!offered.approve && !offered.own, "another member of finance may approve", offered);
  check(offered.line.includes("asked by rita") && offered.line.includes("Reviewed the hands again"), "who asked and why", offered);
  const approveWhy = "Approved: the review found no dumping";
  await fedor.page.fill(`${theirs} textarea[name=reason]`, approveWhy);
  await fedor.page.$eval("#release-queue-panel", (e) => e.scrollIntoView({ block: "start" }));
  await shot(fedor.page, "money-releases");
  await fedor.page.click(`${theirs} button[data-choice=approve]`);
  const approved = `Approved: ${dumper} is released.`;
  await fedor.page.waitForFunction((words) => document.querySelector(".toast.info .toast-text")?.textContent === words, approved, { timeout: 30_000 });
  await fedor.page.waitForFunction((id) => !document.querySelector(`#release-queue li.release[data-request="${id}"]`), requestId);
  const listed = `#recent-releases .release-state[data-request="${requestId}"][data-state="APPROVED"]`;
  await fedor.page.waitForSelector(listed);
  const decided = (await fedor.page.$eval(listed, (e) => e.closest("tr")?.textContent ?? "")).trim();
  say("release approved", { requestId, decided });
  check(decided.includes("fedor") && decided.includes(approveWhy), "the decision listed with who and why", { decided });
  await fedor.context.close();
}

// Words that read the same in Russian (the pools, Telegram's, the language switch's).
const SHARED = ["GRAM", "MPX", "Telegram", "RU", "EN", "English"];

async function notRussian(page) {
  return page.evaluate((shared) => {
    const visible = (e) => e instanceof Element && e.checkVisibility({ visibilityProperty: true });
    // Data, not the console's words: ids, names, the services' own texts, the staff's reasons.
    const data = (e) => !!e.closest("code, .data, .quote, .staff-name, .actor, .method, .why, [data-player], select[name=player_id], option");
    let text = "";
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const parent = node.parentElement;
      if (parent && visible(parent) && !data(parent)) text += `\n${node.textContent ?? ""}`;
    }
    for (const e of document.querySelectorAll("[placeholder], [aria-label], [title]")) {
      if (!visible(e)) continue;
      for (const attribute of ["placeholder", "aria-label", "title"]) text += `\n${e.getAttribute(attribute) ?? ""}`;
    }
    const foreign = new Set();
    for (const token of text.match(/[\p{L}\p{N}'’_.:-]+/gu) ?? []) {
      const word = token.replace(/^[.'’:-]+|[.'’:-]+$/g, "");
      if (!/[A-Za-z]{2,}/.test(word) || /\p{Script=Cyrillic}/u.test(word)) continue;
      if (shared.includes(word) || /\p{N}/u.test(word) || /^[A-Z0-9_]+$/.test(word) || /[-_.:]/.test(word)) continue; // ids and codes
      foreign.add(word);
    }
    return { foreign: [...foreign], braces: /\{\w*\}/.test(text), lang: document.documentElement.lang };
  }, SHARED);
}

const seen = [];
async function russian(page, where) {
  await settled(page);
  const found = await notRussian(page);
  say("russian", { where, ...found });
  check(found.lang === "ru", `<html lang> on ${where}`, found);
  check(found.foreign.length === 0 && !found.braces, `English or a key on ${where}`, found);
  seen.push(where);
}

async function inRussian() {
  const olga = await open("olga", { locale: "ru-RU" });
  await olga.page.goto(url);
  await olga.page.waitForSelector("#sign-in-button");
  check((await text(olga.page, "#sign-in-button")) === "Войти", "the sign-in button");
  check((await olga.page.title()) === "Бэк-офис покера", "the title in Russian", { title: await olga.page.title() });
  await russian(olga.page, "sign-in");
  await shot(olga.page, "ru-sign-in");
  await signIn(olga.page, "olga");
  await russian(olga.page, "dashboard (operations, support)");
  const figures = await playFigures(olga.page);
  say("russian figures", figures);
  check(/раздач/.test(figures.lines.hands) && /фиш/.test(figures.lines.rake), "the play figures' tiles in Russian", figures);
  await shot(olga.page, "ru-dashboard");
  await olga.page.click("#menu-rooms");
  await olga.page.waitForSelector("#rooms button.open-room");
  await russian(olga.page, "rooms");
  await olga.page.click("#rooms button.open-room");
  await olga.page.waitForSelector("#room-state");
  await olga.page.click("#room-detail details.fold summary");
  await russian(olga.page, "a room");
  await shot(olga.page, "ru-rooms");
  await olga.page.click('#rooms button.open-room[data-room="nlhe-gram-classic"]');
  await olga.page.waitForSelector("button.watch-table");
  await olga.page.click("button.watch-table");
  await olga.page.waitForSelector('#live-link[data-link="live"]', { timeout: 60_000 });
  await olga.page.waitForSelector("#live-state");
  await russian(olga.page, "a live table");
  await shot(olga.page, "ru-live-table");
  await olga.page.click("#menu-players");
  // A seated player (the lobby knows them by name; their notes panel holds the flow's note).
  const seated = (seatedNames ?? "").split(",").filter(Boolean);
  await olga.page.fill("#player-query", seated[0] ?? dumper.slice(0, 4));
  await olga.page.click("#player-search-button");
  await olga.page.waitForSelector("#player-results ul, #player-results p");
  await russian(olga.page, "players");
  const found = await olga.page.$(seated.length ? "button.open-player" : `button.open-player[data-player="${dumper}"]`);
  if (found) {
    await found.click();
    await olga.page.waitForSelector("#balances");
    await olga.page.waitForSelector("#player-notes, #notes-none");
    await russian(olga.page, "a player");
    await shot(olga.page, "ru-player");
  }
  await olga.page.click("#menu-audit");
  await olga.page.waitForSelector("#audit-events li");
  await russian(olga.page, "audit");
  await olga.context.close();

  const rita = await open("rita ru", { locale: "ru-RU" });
  await signIn(rita.page, "rita");
  await rita.page.click("#menu-fairplay");
  await rita.page.waitForSelector("button.open-case");
  await russian(rita.page, "case queue");
  await rita.page.click(`button.open-case[data-players~="${dumper}"]`);
  await rita.page.waitForSelector("#case-evidence table");
  await rita.page.waitForSelector("#case-releases table");
  await russian(rita.page, "a case");
  await rita.page.click("#case-hands button[data-hand]");
  await rita.page.waitForSelector("#case-hand #replayer .seat");
  await rita.page.click("#replay-next");
  await russian(rita.page, "a hand in the replayer");
  await shot(rita.page, "ru-fair-play-case");
  await rita.context.close();

  const fedor = await open("fedor ru", { locale: "ru-RU" });
  await signIn(fedor.page, "fedor");
  await fedor.page.waitForSelector("#pending-releases");
  await russian(fedor.page, "dashboard (finance)");
  await fedor.page.click("#menu-money");
  await fedor.page.waitForSelector("#conservation-verdict");
  // The release queue (rhea's request, pending) and the recent release decisions (fedor's).
  await fedor.page.waitForSelector("#release-queue li.release button[data-choice=approve]");
  await fedor.page.waitForSelector("#recent-releases .release-state");
  await russian(fedor.page, "money");
  await shot(fedor.page, "ru-money");
  // The switch: English at once.
  await fedor.page.click("#lang-en");
  await fedor.page.waitForFunction(() => document.documentElement.lang === "en");
  const english = await text(fedor.page, "#menu-money");
  check(english === "Money", "English after the switch", { english });
  await fedor.context.close();

  const adam = await open("adam ru", { locale: "ru-RU" });
  await signIn(adam.page, "adam");
  await adam.page.click("#menu-staff");
  await adam.page.waitForSelector("#staff-list table, #staff-list p");
  await russian(adam.page, "staff directory");
  await shot(adam.page, "ru-staff-directory");
  await adam.context.close();
}

try {
  if (mode === "russian") await inRussian();
  else if (mode === "release") await releaseByFinance();
  else await flow();
} finally {
  await finish();
}
clean();
say("done", { mode, seen });
