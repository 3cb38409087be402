// The staff console (the back office), served by the gateway's staff door: the sign-in (the Telegram
// Login Widget, or a development name outside production), then one screen at a time under the
// session bar (who, roles, language, sign out) and the screens' menu, each screen shown only to the
// roles that can use it (roles.ts). The screen is in the address's hash (#fairplay), so a reload or
// a link comes back to it.
import { applyToDocument, onLanguageChange } from "../i18n";
import { st, roleName, roleList } from "../i18n/staff_words";
import { h, languageSwitch, mount, toast } from "../ui";
import { SCREENS, screenRoles, screensOf, type ScreenName } from "./roles";
import { onSessionChange, resume, session, signOut, type Signed } from "./session";
import { showSignIn, takeWidgetRedirect } from "./sign_in";
import { showDashboard } from "./dashboard";
import { showRooms } from "./rooms";
import { showPlayers } from "./players";
import { showFairPlay } from "./fair_play";
import { showMoney } from "./money";
import { showAudit } from "./audit";
import { showStaffDirectory } from "./staff_directory";

type Leave = () => void;
const SHOW: Record<ScreenName, (root: HTMLElement, s: Signed) => Leave | void> = {
  dashboard: showDashboard,
  rooms: showRooms,
  players: showPlayers,
  fairplay: showFairPlay,
  money: showMoney,
  staff: showStaffDirectory,
  audit: showAudit,
};

let leave: Leave | null = null;

function title(): void {
  applyToDocument();
  document.title = st("app.title");
}

function route(s: Signed): ScreenName {
  const wanted = location.hash.replace(/^#\/?/, "").split("/")[0] as ScreenName;
  const allowed = screensOf(s.roles);
  return allowed.includes(wanted) ? wanted : "dashboard";
}

function sessionBar(s: Signed): HTMLElement {
  return h(
    "header",
    { class: "session-bar" },
    h("h1", {}, st("app.title")),
    h(
      "span",
      { class: "who", id: "who" },
      h("span", { class: "staff-name" }, s.staff),
      ...s.roles.map((r) => h("span", { class: "role", "data-role": r }, roleName(r))),
    ),
    languageSwitch(),
    h("button", { type: "button", class: "quiet", id: "sign-out", onclick: () => void signOut() }, st("session.sign_out")),
  );
}

/** Every screen of the console: the staff member's own as links, the others greyed out (no link)
 * naming the roles that open them. The page only shows; the services refuse the calls anyway. */
function menu(s: Signed, current: ScreenName): HTMLElement {
  const mine = screensOf(s.roles);
  return h(
    "nav",
    { class: "menu", "aria-label": st("menu.label") },
    ...SCREENS.map((name) => {
      if (mine.includes(name)) {
        return h("a", { href: `#${name}`, id: `menu-${name}`, class: name === current ? "current" : "", "aria-current": name === current ? "page" : undefined }, st(`menu.${name}`));
      }
      const readBy = st("dashboard.read_by", { roles: roleList(screenRoles(name)) });
      return h("span", { id: `menu-${name}`, class: "greyed", "aria-disabled": "true", title: readBy }, st(`menu.${name}`), h("small", { class: "greyed-why" }, readBy));
    }),
  );
}

function show(): void {
  const s = session();
  leave?.();
  leave = null;
  title();
  if (!s) {
    void showSignIn();
    return;
  }
  const name = route(s);
  const root = h("div", { class: "screen", id: `screen-${name}`, "data-screen": name });
  mount(sessionBar(s), menu(s, name), root);
  leave = SHOW[name](root, s) ?? null;
}

async function boot(): Promise<void> {
  title();
  onLanguageChange(() => show());
  window.addEventListener("hashchange", () => show());
  onSessionChange((s, why) => {
    if (why === "renewed") {
      // The roles may have changed at the renewal: the screen again if it is no longer theirs.
      if (s && !screensOf(s.roles).includes(route(s))) show();
      const who = document.getElementById("who");
      if (s && who) who.replaceWith(sessionBar(s).querySelector("#who")!);
      return;
    }
    if (why === "ended" && !s) toast(st("session.ended"));
    show();
  });
  if (await takeWidgetRedirect()) return;
  if (await resume()) return show();
  show();
}

void boot();
