// My hands and balance changes, each hand's replay (replayer_screen.ts), and the fairness check of each
// hand done here in the browser.
import { fairness, history, lobby, describe } from "./api";
import { h, mount, signedChips } from "./ui";
import { formatDateTime, t } from "./i18n";
import { changeWords } from "./i18n/words";
import { go, type Screen } from "./router";
import { me } from "./session";
import { header, isHouse, POOL, roomName } from "./lobby";
import { replayerView, type ReplayerView } from "./replayer_screen";
import { ChipPool } from "./gen/poker/common/v1/common_pb";
import type { HandRecord } from "./gen/poker/history/v1/history_pb";
import { hashSetProblem, verify, type PublishedHand, type SeenCard } from "./fairness/verifier";
import { houseCardsProblem, shownCards } from "./fairness/house";
import { handSeeds, hashSets } from "./seeds";

/** (deck position, card) of every card the player saw (docs/engine.md, dealing order). */
export function dealtPositions(record: HandRecord): SeenCard[] {
  if (record.houseGame) return [];
  const seats = record.seats.map((s) => s.seat).sort((a, b) => a - b);
  if (!seats.length) return [];
  let start = seats.findIndex((s) => s > record.buttonSeat);
  if (start < 0) start = 0;
  const order = [...seats.slice(start), ...seats.slice(0, start)];
  const n = order.length;
  const seen: SeenCard[] = [];
  order.forEach((seat, k) => {
    const holes = record.seats.find((s) => s.seat === seat)?.holeCards ?? [];
    holes.forEach((c, round) => {
      if (!c.hidden && c.text) seen.push({ position: round * n + k, card: c.index });
    });
  });
  const boardPositions = [2 * n + 1, 2 * n + 2, 2 * n + 3, 2 * n + 5, 2 * n + 7];
  record.board.forEach((c, i) => seen.push({ position: boardPositions[i], card: c.index }));
  return seen;
}

async function check(handId: string, out: HTMLElement): Promise<void> {
  out.textContent = t("fairness.checking");
  try {
    const record = (await history.getHand({ handId })).hand!;
    const reveal = (await fairness.getReveal({ handId })).reveal!;
    const c = reveal.commitment!;
    const published: PublishedHand = {
      version: c.shuffleVersion || 1,
      tableId: c.tableId,
      handId: c.handId,
      sequence: c.sequence,
      previousCommitment: c.previousCommitment,
      nonce: c.nonce,
      serverSeed: reveal.serverSeed,
      serverSeedHash: c.serverSeedHash,
      commitment: c.commitment,
      clientSeeds: c.clientSeeds.map((s) => ({ seat: s.seat, seed: s.clientSeed, hash: s.clientSeedHash })),
      deckRoot: c.deckRoot,
      openings: reveal.openings.map((o) => ({
        dealPosition: o.dealPosition,
        committedPosition: o.committedPosition,
        card: o.card?.index ?? -1,
        salt: o.salt,
        proof: o.proof,
      })),
    };
    const verdict = await verify(published, dealtPositions(record), record.seedCommitment);
    // A house round (version 3): every card its record shows me must be one of the cards opened to
    // me, each of which the verifier has just held against the commitment made before the deal.
    if (record.houseGame && published.version === 3 && verdict.problems.length === 0) {
      const house = houseCardsProblem(shownCards(record), published.openings ?? []);
      if (house.problem) verdict.problems.push(house.problem);
      verdict.checkedCards = house.checked;
    }
    // My own seed, if I sent one from this tab: at my seat exactly as sent; and (version 3) every
    // seed in the deal was in the hash set the table closed before any seed was sent.
    const mine = handSeeds.get(handId);
    if (mine?.sent) {
      const entry = c.clientSeeds.find((s) => s.playerId === me());
      if (!entry || new TextDecoder().decode(entry.clientSeed) !== mine.seed) verdict.problems.push(t("fairness.own_seed_missing"));
    }
    const kept = hashSets.get(handId);
    const late = kept ? await hashSetProblem(kept, published.clientSeeds, c.commitment) : "";
    if (late) verdict.problems.push(late);
    verdict.ok = verdict.problems.length === 0;
    // Never "fair" over nothing: a check that compared no card the player saw proves nothing.
    if (verdict.ok && verdict.checkedCards === 0) {
      out.className = "verdict bad";
      out.textContent = t("fairness.nothing_checked");
      return;
    }
    out.className = verdict.ok ? "verdict ok" : "verdict bad";
    out.textContent = verdict.ok
      ? published.version === 3
        ? t("fairness.fair_v3", { count: verdict.checkedCards })
        : t("fairness.fair_seed", { count: verdict.checkedCards, version: String(published.version) })
      : t("fairness.not_verified", { problems: verdict.problems.join(t("fairness.problem_separator")) });
  } catch (error) {
    out.className = "verdict bad";
    out.textContent = describe(error);
  }
}

export function showHands(): Screen {
  const hands = h("ol", { class: "hands", id: "hands" }, h("li", { class: "muted" }, t("app.loading")));
  const changes = h("ol", { class: "changes", id: "changes" });
  const lists = h("div", { id: "hands-lists" }, h("h3", {}, t("hands.hands")), hands, h("h3", {}, t("hands.balance_changes")), changes);
  const replay = h("div", { id: "replay-area" });
  let replayer: ReplayerView | null = null;
  mount(header(t("hands.title"), h("button", { id: "back", onclick: () => go({ name: "lobby" }) }, t("hands.back"))), replay, lists);

  function closeReplay(): void {
    replayer?.stop();
    replayer = null;
    replay.replaceChildren();
    lists.hidden = false;
  }

  // A hand step by step (replayer_screen.ts), in place of the lists until it is closed.
  async function openReplay(handId: string, out: HTMLElement): Promise<void> {
    out.className = "verdict";
    out.textContent = t("app.loading");
    try {
      const record = (await history.getHand({ handId })).hand!;
      out.textContent = "";
      closeReplay();
      replayer = replayerView(record, me(), closeReplay);
      replay.replaceChildren(replayer.element);
      lists.hidden = true;
      window.scrollTo(0, 0);
    } catch (error) {
      out.className = "verdict bad";
      out.textContent = describe(error);
    }
  }

  // The rooms' names (a hand names its room by id); without them, the ids.
  const names = lobby.listRooms({ page: { pageSize: 500 } })
    .then((reply) => new Map(reply.rooms.map((room) => [room.roomId, roomName(room.displayName)])))
    .catch(() => new Map<string, string>());
  void Promise.all([history.listMyHands({ page: { pageSize: 20 } }), names]).then(([reply, rooms]) => {
    hands.replaceChildren(...(reply.hands.length ? reply.hands.map((hand) => {
      const verdict = h("div", { class: "verdict" });
      const line = t("hands.line", { time: formatDateTime(Number(hand.endTime?.seconds ?? 0n) * 1000), room: rooms.get(hand.roomId) ?? hand.roomId, pool: POOL(hand.pool) });
      return h("li", { "data-hand": hand.handId, "data-room": hand.roomId },
        h("span", {}, line, h("b", { class: hand.netResult >= 0n ? "won" : "lost" }, signedChips(hand.netResult))),
        isHouse(hand.variant) ? null : h("button", { class: "quiet replay", onclick: () => void openReplay(hand.handId, verdict) }, t("hands.replay")),
        h("button", { class: "quiet check-fairness", onclick: () => void check(hand.handId, verdict) }, t("hands.check")),
        verdict);
    }) : [h("li", { class: "muted" }, t("hands.none"))]));
  }).catch((error) => hands.replaceChildren(h("li", { class: "error" }, describe(error))));
  void Promise.all([ChipPool.GRAM, ChipPool.MPX].map((pool) => history.listBalanceChanges({ pool, page: { pageSize: 20 } })))
    .then((replies) => {
      const all = replies.flatMap((r) => r.changes).sort((a, b) => Number((b.time?.seconds ?? 0n) - (a.time?.seconds ?? 0n)));
      changes.replaceChildren(...all.filter((c) => c.accountId.startsWith("wallet:")).map((c) =>
        h("li", { "data-reason": c.reason }, t("hands.change", { reason: changeWords(c.reason), change: signedChips(c.change?.amount ?? 0n), pool: POOL(c.change?.pool ?? ChipPool.GRAM), balance: c.balanceAfter }))));
    })
    .catch((error) => changes.replaceChildren(h("li", { class: "error" }, describe(error))));
  return {
    // Telegram's BackButton: out of the replayer first, then to the lobby.
    back: () => (replayer ? closeReplay() : go({ name: "lobby" })),
    leave: () => replayer?.stop(),
  };
}
