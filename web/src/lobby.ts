// The lobby: balances, buying chips, the game tabs with the rooms of the chosen pool (stakes, buy-in,
// free seats, players and those waiting), and "Play now" at a chosen stake.
import { cashier, gateway, lobby, table, describe, failure, newRequestId } from "./api";
import { h, mount, toast, dismissToast, languageSwitch } from "./ui";
import { t } from "./i18n";
import { go, type Screen } from "./router";
import { signOut } from "./session";
import { changeDisplayName, onProfileChange, profileAvatar, profileName, showAvatar } from "./profile";
import { avatar } from "./avatar";
import { ChipPool, GameVariant } from "./gen/poker/common/v1/common_pb";
import type { Room } from "./gen/poker/lobby/v1/lobby_pb";
import { PurchaseMethod } from "./gen/poker/gateway/v1/gateway_pb";
import {
  POOLS, TABS, buyInRange, playNowBuyIn, playNowTarget, poolCode, readChoice, roomsOf, stakeGroups, tabCounts,
  type LobbyChoice, type PoolCode, type StakeGroup, type Tab, type TableChoice,
} from "./lobby_model";

/** The pool's name as the page shows it (also its code in `data-pool`). */
export const POOL = (pool: ChipPool): string => (pool === ChipPool.MPX ? t("pool.MPX") : t("pool.GRAM"));
const POOL_CODE = (pool: ChipPool): string => ChipPool[pool === ChipPool.MPX ? ChipPool.MPX : ChipPool.GRAM];

export function variantName(variant: GameVariant): string {
  switch (variant) {
    case GameVariant.NO_LIMIT_HOLDEM:
      return t("variant.no_limit");
    case GameVariant.FIXED_LIMIT_HOLDEM:
      return t("variant.fixed_limit");
    case GameVariant.CASINO_HOLDEM:
      return t("variant.casino_holdem");
    case GameVariant.RUSSIAN_POKER:
      return t("variant.russian_poker");
    default:
      return "";
  }
}

/** A room's name in the page's language: the operator's seeded rooms (lobby migration 0002) by their
 * form, so a list reads in one language; any other room as the operator named it. */
export function roomName(displayName: string): string {
  const seeded = /^(.+) (GRAM|MPX)$/.exec(displayName);
  if (!seeded) return displayName;
  const [, name, pool] = seeded;
  if (name === "Дуэль") return t("room_name.duel", { pool });
  if (name === "Casino Hold'em") return t("room_name.casino_holdem", { pool });
  if (name === "Русский покер") return t("room_name.russian_poker", { pool });
  const limit = /^Limit (\d+)\/(\d+) (\d+)-max$/.exec(name);
  if (limit) return t("room_name.limit", { small: BigInt(limit[1]), big: BigInt(limit[2]), seats: limit[3], pool });
  return displayName;
}

export function isHouse(variant: GameVariant): boolean {
  return variant === GameVariant.CASINO_HOLDEM || variant === GameVariant.RUSSIAN_POKER;
}

function stakes(room: Room): string {
  switch (room.stakes.case) {
    case "blinds":
      return t("stakes.blinds", { small: room.stakes.value.smallBlind, big: room.stakes.value.bigBlind });
    case "limits":
      return t("stakes.limits", { small: room.stakes.value.smallBet, big: room.stakes.value.bigBet });
    case "antes":
      return t("stakes.antes", { min: room.stakes.value.minAnte, max: room.stakes.value.maxAnte });
    default:
      return "";
  }
}

/** The wallets' balances in the line at the top of a screen; answers them by pool for the caller. */
export async function balancesLine(target: HTMLElement): Promise<Map<PoolCode, bigint>> {
  const balances = new Map<PoolCode, bigint>();
  try {
    const reply = await cashier.getBalances({});
    for (const w of reply.wallets) balances.set(poolCode(w.pool), w.balance);
    target.replaceChildren(
      ...reply.wallets.map((w) => h("span", { class: "balance", "data-pool": POOL_CODE(w.pool) }, t("lobby.balance", { pool: POOL(w.pool), amount: w.balance }))),
    );
  } catch (error) {
    target.textContent = describe(error);
  }
  return balances;
}

/** Buying chips: one compact row per way to buy (pool, method, amount, Buy), closed with ×. */
function buyDialog(onBought: () => void, onClose: () => void): HTMLElement {
  const close = h("button", { type: "button", class: "quiet sheet-close", "aria-label": t("message.close"), title: t("message.close"), onclick: onClose }, "×");
  const head = h("div", { class: "buy-head" }, h("h3", {}, t("purchase.title")), close);
  const dialog = h("div", { class: "card-panel buy-panel", id: "buy" }, head, h("p", { class: "muted" }, t("app.loading")));
  void gateway.listPurchaseOptions({}).then((reply) => {
    const rows = reply.options.map((option) => {
      const amount = h("input", { type: "number", min: 1, step: 1, value: 5000, inputmode: "numeric", "aria-label": t("purchase.chips"), class: "amount" });
      const button = h(
        "button",
        {
          disabled: !option.available,
          "data-pool": POOL_CODE(option.pool),
          "data-method": PurchaseMethod[option.method],
          onclick: async () => {
            try {
              const result = await gateway.startPurchase({
                requestId: newRequestId(),
                method: option.method,
                pool: option.pool,
                chips: BigInt(Math.max(1, Math.floor(Number(amount.value)))),
              });
              if (result.outcome.case === "credited") toast(t("purchase.credited", { count: result.outcome.value.amount }));
              else if (result.outcome.case === "paymentUrl") window.open(result.outcome.value, "_blank", "noopener");
              onBought();
            } catch (error) {
              toast(describe(error), "error");
            }
          },
        },
        t("purchase.buy"),
      );
      return h(
        "div",
        { class: option.available ? "buy-row" : "buy-row unavailable" },
        h("span", { class: `pool pool-${POOL_CODE(option.pool)}` }, POOL(option.pool)),
        h("span", { class: "buy-method" }, methodName(option.method, option.text),
          option.available ? null : h("span", { class: "muted" }, t("purchase.unavailable_note", { why: unavailableText(option.method, option.unavailableText) }))),
        option.available ? amount : null,
        button,
      );
    });
    dialog.replaceChildren(head, ...rows);
  }).catch((error: unknown) => dialog.replaceChildren(head, h("p", { class: "error" }, describe(error))));
  return dialog;
}

/** A purchase method's name: ours in words, an operator's flow's as it names it. */
function methodName(method: PurchaseMethod, text: string): string {
  if (method === PurchaseMethod.DEVELOPMENT) return t("purchase.development");
  if (method === PurchaseMethod.TELEGRAM_STARS) return t("purchase.stars");
  return text;
}

function unavailableText(method: PurchaseMethod, text: string): string {
  return method === PurchaseMethod.DEVELOPMENT || method === PurchaseMethod.TELEGRAM_STARS || !text ? t("purchase.not_available") : text;
}

/** The player's name in the header: the profile's (the name the other players see). */
function whoText(): string {
  return profileName() || t("profile.unknown");
}

/** A screen's header: its title, the player's name, the screen's buttons and the language switch. */
export function header(title: string, ...extra: Node[]): HTMLElement {
  return headerWith(title, h("span", { class: "who", id: "who" }, whoText()), extra);
}

function headerWith(title: string, who: HTMLElement, extra: Node[]): HTMLElement {
  return h("header", { class: "top" }, h("h1", {}, title), who, ...extra, languageSwitch());
}

// The profile's name, once the lobby answers (after a sign-in) or after a change, in the header shown.
onProfileChange(() => {
  const who = document.getElementById("who");
  if (who) who.textContent = whoText();
});

/** The switch of the player's Telegram photo at the tables (SetShowAvatar, applied at once): the photo
 * (or the initials the seats show instead) beside it, and a refusal in words under it. */
function avatarSwitch(): HTMLElement {
  const photo = profileAvatar();
  const box = h("input", { type: "checkbox", id: "show-avatar", checked: photo.shown, "aria-describedby": "show-avatar-hint" });
  const picture = h("span", { class: "avatar-preview" }, avatar(photo.shown ? photo.url : "", profileName()));
  const status = h("p", { class: "error", id: "show-avatar-status", role: "alert" });
  box.addEventListener("change", async () => {
    const wanted = box.checked;
    box.disabled = true;
    status.textContent = "";
    try {
      const shown = await showAvatar(wanted);
      box.checked = shown;
      picture.replaceChildren(avatar(shown ? profileAvatar().url : "", profileName()));
    } catch (error) {
      box.checked = !wanted;
      status.textContent = describe(error);
    } finally {
      box.disabled = false;
    }
  });
  return h(
    "div",
    { class: "avatar-switch", id: "avatar-switch" },
    h("label", { class: "pre" }, box, picture, t("profile.show_avatar")),
    h("p", { class: "muted", id: "show-avatar-hint" }, photo.url ? t("profile.show_avatar_hint") : t("profile.no_avatar")),
    status,
  );
}

/** The name editor (the player's profile): the name, its rules, Save and Cancel; each refusal in
 * words under the field; the switch of the player's photo; and the way to the player's limits. */
function nameEditor(onDone: () => void): HTMLElement {
  const input = h("input", {
    id: "display-name", name: "display-name", value: profileName(), maxlength: 32, autocomplete: "nickname",
    autocapitalize: "words", spellcheck: "false", "aria-label": t("profile.name"), "aria-describedby": "display-name-hint",
  });
  const hint = h("p", { class: "muted", id: "display-name-hint" }, t("profile.hint"));
  const status = h("p", { class: "error", id: "display-name-status", role: "alert" });
  const save = h("button", { type: "submit", id: "display-name-save" }, t("profile.save"));
  const cancel = h("button", { type: "button", class: "quiet", id: "display-name-cancel", onclick: onDone }, t("profile.cancel"));
  let saving = false;
  const form = h(
    "form",
    {
      class: "card-panel name-panel",
      id: "name-editor",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        if (saving) return;
        const wanted = input.value.trim();
        if (wanted === profileName()) {
          onDone();
          return;
        }
        if (!wanted) {
          status.textContent = t("reason.DISPLAY_NAME_INVALID");
          return;
        }
        saving = true;
        save.disabled = true;
        status.className = "muted";
        status.textContent = t("profile.saving");
        try {
          const name = await changeDisplayName(wanted);
          onDone();
          toast(t("profile.saved", { name }));
        } catch (error) {
          status.className = "error";
          status.textContent = describe(error);
        } finally {
          saving = false;
          save.disabled = false;
        }
      },
    },
    h("h3", {}, t("profile.title")),
    input,
    hint,
    status,
    h("div", { class: "name-actions" }, save, cancel),
    avatarSwitch(),
    // The limits the player sets on themself (limits_screen.ts), from their profile.
    h("div", { class: "profile-links" }, h("button", { type: "button", class: "quiet", id: "open-limits", onclick: () => go({ name: "limits" }) }, t("limits.open"))),
  );
  window.setTimeout(() => input.focus(), 0);
  return form;
}

const CHOICE_KEY = "poker.lobby";

function keptChoice(): LobbyChoice {
  try {
    return readChoice(localStorage.getItem(CHOICE_KEY));
  } catch {
    return readChoice(null); // storage refused (a WebView's privacy settings): the defaults
  }
}

function keepChoice(choice: LobbyChoice): void {
  try {
    localStorage.setItem(CHOICE_KEY, JSON.stringify(choice));
  } catch {
    // Not kept: the choice lasts for the page.
  }
}

function tabName(tab: Tab): string {
  return tab === "no_limit" ? t("lobby.tab.no_limit") : tab === "fixed_limit" ? t("lobby.tab.fixed_limit") : t("lobby.tab.house");
}

/** The lobby: the balances, the game tabs (no-limit, fixed-limit, casino; swiped or tapped, each a
 * panel of its own, so the page is as tall as one tab), the pool the rooms are in, and per cash tab
 * "Play now" at a picked stake. The tab and pool are kept for next time. */
export function showLobby(): Screen {
  const choice = keptChoice();
  const chosenStake = new Map<Tab, string>();
  let rooms: Room[] = [];
  let wallets = new Map<PoolCode, bigint>();
  let seating = false;
  const balances = h("div", { class: "balances", id: "balances" });
  const buyArea = h("div", {});
  const closeBuy = (): void => buyArea.replaceChildren();
  // The player's name, tapped: its editor under the header (tapped again: closed).
  const nameArea = h("div", {});
  const who = h("button", { type: "button", class: "who", id: "who", title: t("profile.edit"), "aria-expanded": "false", "aria-controls": "name-editor" }, whoText());
  const closeName = (): void => {
    nameArea.replaceChildren();
    who.setAttribute("aria-expanded", "false");
  };
  who.addEventListener("click", () => {
    if (nameArea.firstChild) return closeName();
    nameArea.replaceChildren(nameEditor(closeName));
    who.setAttribute("aria-expanded", "true");
  });

  const tabButtons = TABS.map((tab) =>
    h("button", {
      type: "button", role: "tab", id: `tab-${tab}`, class: "tab", "data-tab": tab, "aria-controls": `panel-${tab}`,
      onclick: () => showTab(tab, true),
    }, h("span", { class: "tab-name" }, tabName(tab)), h("span", { class: "tab-count" })));
  const tabBar = h("div", { class: "tabs", role: "tablist", id: "lobby-tabs", "aria-label": t("lobby.tabs") }, ...tabButtons);
  const poolButtons = POOLS.map((pool) =>
    h("button", { type: "button", id: `pool-${pool}`, class: "pool-choice", "data-pool": pool, onclick: () => choosePool(pool) }, pool === "MPX" ? t("pool.MPX") : t("pool.GRAM")));
  const poolBar = h("div", { class: "pool-filter", role: "group", id: "pool-filter", "aria-label": t("lobby.pool_filter") }, ...poolButtons);
  const panels = TABS.map((tab) => h("div", { role: "tabpanel", id: `panel-${tab}`, class: "tab-panel", "data-tab": tab, "aria-labelledby": `tab-${tab}` }, h("p", { class: "muted" }, t("lobby.loading_rooms"))));
  const track = h("div", { class: "tab-track", id: "rooms" }, ...panels);

  function markChoice(): void {
    tabButtons.forEach((button, i) => {
      const on = TABS[i] === choice.tab;
      button.setAttribute("aria-selected", String(on));
      button.tabIndex = on ? 0 : -1;
    });
    poolButtons.forEach((button, i) => button.setAttribute("aria-pressed", String(POOLS[i] === choice.pool)));
  }

  function showTab(tab: Tab, scroll: boolean): void {
    choice.tab = tab;
    keepChoice(choice);
    markChoice();
    if (scroll) {
      const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      scrollingTo = tab;
      window.clearTimeout(scrollTimer);
      scrollTimer = window.setTimeout(() => { scrollingTo = null; }, 1500);
      track.scrollTo({ left: TABS.indexOf(tab) * track.clientWidth, behavior: still ? "auto" : "smooth" });
    }
  }

  function choosePool(pool: PoolCode): void {
    choice.pool = pool;
    keepChoice(choice);
    markChoice();
    draw();
  }

  // A swipe between panels chooses the tab it ends on; a tapped tab's panels sliding past on the way
  // to it choose nothing.
  let scrollingTo: Tab | null = null;
  let scrollTimer = 0;
  const panelShown = (): Tab | undefined => TABS[Math.round(track.scrollLeft / Math.max(1, track.clientWidth))];
  track.addEventListener("scroll", () => {
    const tab = panelShown();
    if (scrollingTo) {
      if (tab === scrollingTo && Math.abs(track.scrollLeft - TABS.indexOf(tab) * track.clientWidth) < 2) scrollingTo = null;
      return;
    }
    if (tab && tab !== choice.tab) showTab(tab, false);
  }, { passive: true });
  track.addEventListener("scrollend", () => {
    scrollingTo = null;
    const tab = panelShown();
    if (tab && tab !== choice.tab) showTab(tab, false);
  });

  async function playNow(group: StakeGroup, button: HTMLButtonElement): Promise<void> {
    if (seating) return;
    seating = true;
    button.disabled = true;
    button.textContent = t("lobby.seating");
    try {
      const tables: TableChoice[] = [];
      await Promise.all(group.rooms.map(async (room) => {
        try {
          const reply = await lobby.listTables({ roomId: room.roomId });
          for (const s of reply.tables) tables.push({ roomId: room.roomId, tableId: s.tableId, seated: s.seatedPlayers, seats: s.seats, waiting: s.waitingPlayers });
        } catch {
          // A room whose tables cannot be listed now: the lobby picks its table on JoinTable.
        }
      }));
      const target = playNowTarget(group.rooms, tables);
      const room = group.rooms.find((r) => r.roomId === target?.roomId);
      if (!target || !room) return;
      wallets = await balancesLine(balances);
      const buyIn = playNowBuyIn(room, wallets.get(choice.pool) ?? 0n);
      let joined = await lobby.joinTable({ roomId: room.roomId, tableId: target.tableId }).catch(() => lobby.joinTable({ roomId: room.roomId }));
      try {
        await table.sitDown({ requestId: newRequestId(), tableId: joined.tableId, buyIn });
      } catch (error) {
        const reason = failure(error).reason;
        if (reason === "TABLE_FULL" || reason === "SEAT_TAKEN") {
          // Taken between the list and the seat: the lobby picks the room's next table, once.
          joined = await lobby.joinTable({ roomId: room.roomId });
          await table.sitDown({ requestId: newRequestId(), tableId: joined.tableId, buyIn });
        } else if (reason !== "ALREADY_SEATED") {
          throw error;
        }
      }
      go({ name: "table", roomId: room.roomId, tableId: joined.tableId, spectate: false });
    } catch (error) {
      toast(describe(error), "error");
    } finally {
      seating = false;
      if (!button.isConnected) draw();
      else {
        button.disabled = false;
        button.textContent = t("lobby.play_now");
      }
    }
  }

  function playNowBar(tab: Tab): HTMLElement | null {
    const groups = stakeGroups(rooms, tab, choice.pool);
    if (!groups.length) return null;
    const picked = groups.find((g) => g.key === chosenStake.get(tab)) ?? groups[0];
    const play = h("button", { type: "button", class: "play play-now", id: `play-now-${tab}`, "data-stake": picked.key, disabled: seating }, seating ? t("lobby.seating") : t("lobby.play_now"));
    play.addEventListener("click", () => void playNow(picked, play));
    const chips = groups.map((g) =>
      h("button", {
        type: "button", class: g === picked ? "stake" : "stake quiet", "data-stake": g.key, "aria-pressed": String(g === picked),
        onclick: () => { chosenStake.set(tab, g.key); draw(); },
      }, t("lobby.stake", { small: g.small, big: g.big })));
    return h("div", { class: "play-now-bar", "data-tab": tab }, h("div", { class: "stakes", role: "group", "aria-label": t("lobby.stakes") }, ...chips), play);
  }

  function draw(): void {
    const counts = tabCounts(rooms, choice.pool);
    tabButtons.forEach((button, i) => { button.querySelector(".tab-count")!.textContent = String(counts[TABS[i]]); });
    TABS.forEach((tab, i) => {
      const listed = roomsOf(rooms, tab, choice.pool);
      panels[i].replaceChildren(
        playNowBar(tab) ?? h("span", {}),
        ...(listed.length ? listed.map(roomCard) : [h("p", { class: "muted" }, t("lobby.no_rooms"))]),
      );
    });
  }

  let timer = 0;
  const refresh = async (): Promise<void> => {
    void balancesLine(balances).then((found) => { wallets = found; });
    try {
      const reply = await lobby.listRooms({ page: { pageSize: 500 } });
      rooms = reply.rooms;
      draw();
    } catch (error) {
      panels.forEach((panel) => panel.replaceChildren(h("p", { class: "error" }, describe(error))));
    }
  };
  mount(
    headerWith(t("lobby.title"), who, [
      h("button", { id: "buy-chips", onclick: () => buyArea.replaceChildren(buyDialog(() => void refresh(), closeBuy)) }, t("lobby.buy_chips")),
      h("button", { id: "my-hands", onclick: () => go({ name: "hands" }) }, t("lobby.my_hands")),
      h("button", { class: "quiet", id: "sign-out", onclick: () => void signOut() }, t("sign_out")),
    ]),
    nameArea,
    balances,
    buyArea,
    h("div", { class: "lobby-bar" }, tabBar, poolBar),
    track,
  );
  markChoice();
  track.scrollLeft = TABS.indexOf(choice.tab) * track.clientWidth;
  void refresh();
  timer = window.setInterval(() => void refresh(), 5000);
  // The lobby's news ("5,000 chips credited") goes with it, so it never covers the next screen.
  return { leave: () => { window.clearInterval(timer); dismissToast(); } };
}

function roomCard(room: Room): HTMLElement {
  const o = room.occupancy;
  const house = isHouse(room.variant);
  const range = buyInRange(room);
  const figures = house
    ? [t("room.boxes", { count: room.seatsPerTable })]
    : [
        ...(range ? ["amount" in range ? t("room.buy_in_fixed", range) : t("room.buy_in", range)] : []),
        t("room.free_seats", { count: o?.seatsFree ?? 0 }),
        t("room.playing", { count: o?.seatsTaken ?? 0 }),
        t("room.waiting", { count: o?.playersWaiting ?? 0 }),
      ];
  const join = async (spectate: boolean): Promise<void> => {
    try {
      const joined = await lobby.joinTable({ roomId: room.roomId, spectate });
      if (house) go({ name: "house", roomId: room.roomId, tableId: joined.tableId });
      else go({ name: "table", roomId: room.roomId, tableId: joined.tableId, spectate });
    } catch (error) {
      toast(describe(error), "error");
    }
  };
  return h(
    "article",
    { class: "room", "data-room": room.roomId, "data-busy": String((o?.seatsTaken ?? 0) > 0) },
    h("div", { class: "room-name" }, roomName(room.displayName), h("span", { class: `pool pool-${POOL_CODE(room.pool)}` }, POOL(room.pool))),
    h("div", { class: "room-game" }, t("room.game", { variant: variantName(room.variant), stakes: stakes(room) })),
    h("div", { class: "room-figures" }, figures.join(" · ")),
    h(
      "div",
      { class: "room-actions" },
      h("button", { class: "play", onclick: () => void join(false) }, house ? t("room.play") : t("room.sit_down")),
      house ? null : h("button", { class: "watch quiet", onclick: () => void join(true) }, t("room.watch")),
    ),
  );
}
