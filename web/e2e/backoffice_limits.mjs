// The staff console's block of a player's self-set limits (responsible gaming), read only, in real
// headless Chromium against the gateway's staff door (tests/web/test_browser_limits.py runs it after
// web/e2e/browser_limits.mjs set the player's limits; staff_browser.mjs is the harness): sofia
// (support) finds the player by name on the players screen, opens them, and reads the block: the
// limits by pool and kind with what is left and the raise pending, the reminder and the break; the
// block holds no form, input or button (staff cannot change a player's limits).
// Usage: node backoffice_limits.mjs <staff door url> <artefacts dir> <player name>
import { staffBrowser } from "./staff_browser.mjs";

const [url, artefacts, name] = process.argv.slice(2);
const { say, check, open, signIn, shot, settled, finish, clean } = await staffBrowser(url, artefacts);

const sofia = await open("sofia");
await signIn(sofia.page, "sofia");
await sofia.page.click("#menu-players");
await sofia.page.fill("#player-query", name);
await sofia.page.click("#player-search-button");
await sofia.page.waitForSelector("button.open-player");
const player = await sofia.page.getAttribute("button.open-player", "data-player");
await sofia.page.click("button.open-player");
await sofia.page.waitForSelector("#player-self-limits #self-limits");
await settled(sofia.page);
const block = await sofia.page.evaluate(() => {
  const section = document.querySelector("#player-self-limits");
  return {
    title: section.querySelector("h2")?.textContent,
    rows: [...section.querySelectorAll("#self-limits tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
    reminder: section.querySelector("#self-reminder")?.textContent,
    pause: section.querySelector("#self-break")?.getAttribute("data-kind"),
    controls: section.querySelectorAll("form, input, select, textarea, button").length,
  };
});
const row = block.rows.find((r) => r[0] === "GRAM" && r[1] === "Bought per day") ?? [];
say("self limits", { player, row, ...block });
await sofia.page.locator("#player-self-limits").screenshot({ path: `${artefacts}/staff-self-limits.png` });
await shot(sofia.page, "staff-player");
check(block.title === "Self-set limits", "the block's title", block);
check(row[2] === "20,000" && row[4] === "15,000" && /^50,000 from /.test(row[5] ?? ""), "the limit, what is left and the raise pending", { row });
check(block.reminder === "Session reminder: every 15 min." && block.pause === "COOLING_OFF", "the reminder and the break", block);
check(block.controls === 0, "read only: no form and no control", block);
await finish();
clean();
say("done");
