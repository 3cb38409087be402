// Fair play (risk): the case queue by severity (the score against its threshold, the strongest
// first), a case's evidence (what it holds: the pair's totals, decision times, the signals, its hands,
// its holds), and the actions: hold a player or ask to release one, resolve the case with a verdict.
// A release is four-eyes on money (releases.ts): it waits for finance's approval, and the case shows
// its and its players' release requests with where they stand. Each action with the staff member's
// reason (whole in the audit trail; the services keep it as ASCII, reason.ts).
import { h } from "../ui";
import { formatNumber } from "../i18n";
import { caseKindName, caseRoleName, holdStateName, resolutionName, st, type StaffKey } from "../i18n/staff_words";
import { because, history } from "./api";
import { asciiReason } from "./reason";
import type { Signed } from "./session";
import { openHand, stopReplay } from "./hand_replay";
import { actionForm, field, load, panel, poolName, select, table, when } from "./widgets";
import { concerns, pendingFirst, releasesIn, releaseTable } from "./releases";
import { CaseResolution, ReleaseRequestState, type CaseEvidence, type FairPlayCase, type ReleaseRequest } from "../gen/poker/history/v1/history_pb";

/** How strong a case is: its score over its threshold (1 and more: the verdict holds). */
export function severity(c: Pick<FairPlayCase, "score" | "threshold">): number {
  return c.threshold > 0 ? c.score / c.threshold : c.score;
}

const bb = (hundredths: bigint): string => (Number(hundredths) / 100).toFixed(2);

/** The evidence lines that say something (a zero says nothing). */
function evidenceRows(e: CaseEvidence): (readonly [string, string])[] {
  const rows: (readonly [string, string])[] = [];
  const add = (label: string, value: bigint, text = formatNumber(value)): void => {
    if (value) rows.push([label, text]);
  };
  add(st("evidence.hands_together"), e.handsTogether);
  add(st("evidence.chips_given"), e.chipsGiven, st("evidence.chips_bb", { chips: e.chipsGiven, bb: bb(e.chipsGivenBbHundredths) }));
  add(st("evidence.chips_back"), e.chipsBack, st("evidence.chips_bb", { chips: e.chipsBack, bb: bb(e.chipsBackBbHundredths) }));
  add(st("evidence.gift_given"), e.giftGivenBbHundredths, st("evidence.bb", { bb: bb(e.giftGivenBbHundredths) }));
  add(st("evidence.gift_back"), e.giftBackBbHundredths, st("evidence.bb", { bb: bb(e.giftBackBbHundredths) }));
  add(st("evidence.blatant_given"), e.blatantGivenBbHundredths, st("evidence.bb", { bb: bb(e.blatantGivenBbHundredths) }));
  add(st("evidence.blatant_back"), e.blatantBackBbHundredths, st("evidence.bb", { bb: bb(e.blatantBackBbHundredths) }));
  add(st("evidence.blatant_hands_given"), e.blatantHandsGiven);
  add(st("evidence.blatant_hands_back"), e.blatantHandsBack);
  add(st("evidence.strong_folds_given"), e.strongFoldsGiven);
  add(st("evidence.strong_folds_back"), e.strongFoldsBack);
  add(st("evidence.heads_up_streets"), e.headsUpStreets);
  add(st("evidence.passive_streets"), e.passiveStreets);
  add(st("evidence.squeezes"), e.squeezes);
  add(st("evidence.multiway_hands"), e.multiwayHands);
  add(st("evidence.hands_with_others"), e.handsWithOthers);
  add(st("evidence.shared_device_hands"), e.sharedDeviceHands);
  add(st("evidence.shared_network_hands"), e.sharedNetworkHands);
  add(st("evidence.strong_raised_given"), e.strongFacingGiven, st("evidence.of", { part: e.strongRaisedGiven, whole: e.strongFacingGiven }));
  add(st("evidence.strong_raised_others_given"), e.strongFacingOthersGiven, st("evidence.of", { part: e.strongRaisedOthersGiven, whole: e.strongFacingOthersGiven }));
  add(st("evidence.strong_raised_back"), e.strongFacingBack, st("evidence.of", { part: e.strongRaisedBack, whole: e.strongFacingBack }));
  add(st("evidence.strong_raised_others_back"), e.strongFacingOthersBack, st("evidence.of", { part: e.strongRaisedOthersBack, whole: e.strongFacingOthersBack }));
  add(st("evidence.whipsaw_chances"), e.whipsawChances);
  add(st("evidence.whipsaws_given"), e.whipsawsGiven);
  add(st("evidence.whipsaws_back"), e.whipsawsBack);
  return rows;
}

const BUCKETS: readonly StaffKey[] = ["evidence.bucket_250", "evidence.bucket_500", "evidence.bucket_1s", "evidence.bucket_2s", "evidence.bucket_5s", "evidence.bucket_10s", "evidence.bucket_slower"];

function decisionTimes(e: CaseEvidence): HTMLElement | null {
  if (!e.decisionsTimed) return null;
  const total = Number(e.decisionsTimed) || 1;
  return h(
    "div",
    { class: "buckets", id: "decision-times" },
    h("h4", {}, st("evidence.decision_times", { count: e.decisionsTimed })),
    table(
      BUCKETS.map((k) => st(k)),
      [e.decisionTimeBuckets.map((n) => `${formatNumber(n)} (${Math.round((Number(n) * 100) / total)}%)`)], // i18n-neutral: figures
    ),
  );
}

/** The words of an asked release, from where the request stands (a retry may find it decided). */
function askedWords(release: ReleaseRequest | undefined, pending: string, released: string): string {
  if (!release || release.state === ReleaseRequestState.APPROVED) return released;
  return release.state === ReleaseRequestState.REJECTED ? st("hold.release_rejected") : pending;
}

function caseDetail(out: HTMLElement, s: Signed, caseId: string, refreshQueue: () => void): void {
  const reload = (): void => caseDetail(out, s, caseId, refreshQueue);
  // The release requests are read beside the case; a refusal shows in their panel only.
  const asked = releasesIn();
  const known = asked.catch(() => [] as ReleaseRequest[]);
  void load(out, async () => {
    const c = (await history.getCase({ caseId })).case!;
    const players = c.players.map((p) => p.playerId);
    const caseReleasePending = (await known).some((r) => r.caseRelease && r.caseId === c.caseId && r.state === ReleaseRequestState.PENDING);
    const releases = h("div", { id: "case-release-list" });
    void load(releases, async () => {
      const mine = pendingFirst((await asked).filter((r) => concerns(r, c.caseId, players))).slice(0, 30);
      return mine.length ? releaseTable(mine, "case-release-table") : h("p", { class: "muted" }, st("case.releases_none"));
    });
    const opened = h("div", { id: "case-hand" });
    const e = c.evidence;
    const rows = e ? evidenceRows(e) : [];
    const parts: (HTMLElement | null)[] = [
      h("h3", { id: "case-title" }, st("case.title", { kind: caseKindName(c.kind), id: c.caseId })),
      h("p", { class: "case-summary data", id: "case-summary" }, c.summary),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, st("case.score")), h("dd", { id: "case-score" }, st("case.score_value", { score: c.score.toFixed(2), threshold: c.threshold.toFixed(2) })),
        h("dt", {}, st("case.pool")), h("dd", {}, poolName(c.pool)),
        h("dt", {}, st("case.opened")), h("dd", {}, when(c.openTime)),
        h("dt", {}, st("case.last_seen")), h("dd", {}, when(c.lastSeenTime)),
        h("dt", {}, st("case.updates")), h("dd", {}, formatNumber(c.updates)),
        h("dt", {}, st("case.resolution")),
        h(
          "dd",
          { id: "case-resolution" },
          ...(caseReleasePending
            ? [st("case.release_pending"), " ", h("span", { class: "data" }, `${c.resolvedBy}, ${when(c.resolveTime)}: ${c.resolutionReason}`)]
            : [
                c.resolution === CaseResolution.UNSPECIFIED
                  ? st("case.open")
                  : st("case.resolved", { verdict: resolutionName(c.resolution), by: c.resolvedBy, time: when(c.resolveTime), reason: c.resolutionReason }),
              ]),
        ),
      ),
      panel(
        "case-players",
        st("case.players"),
        table(
          [st("case.player"), st("case.role"), st("case.why")],
          c.players.map((p) => [h("code", { "data-player": p.playerId }, p.playerId), caseRoleName(p.role), h("span", { class: "data" }, p.why)]),
        ),
      ),
      panel("case-evidence", st("case.evidence"), rows.length ? table([st("evidence.what"), st("evidence.value")], rows) : h("p", { class: "muted" }, st("evidence.none"))),
      e ? decisionTimes(e) : null,
      c.holds.length
        ? panel("case-holds", st("case.holds"), table([st("case.player"), st("case.role"), st("case.hold_state"), st("case.hold_time"), st("case.note")], c.holds.map((hd) => [hd.playerId, caseRoleName(hd.role), holdStateName(hd.state), when(hd.holdTime) || when(hd.dueTime), h("span", { class: "data" }, hd.note)])))
        : null,
      panel("case-releases", st("case.releases"), releases),
      panel(
        "case-hands",
        st("case.hands", { count: c.handIds.length }),
        h("p", { class: "muted" }, st("case.tables", { tables: c.tableIds.join(", ") || "—" })),
        h(
          "ul",
          { class: "hands-list inline" },
          ...c.handIds.map((id) => h("li", {}, h("button", { type: "button", class: "link-button", "data-hand": id, onclick: () => openHand(opened, id) }, id))),
        ),
        opened,
      ),
    ];
    // The actions: hold or release one of the case's players, resolve the case.
    const who = select("player_id", c.players.map((p) => [p.playerId, `${p.playerId} · ${caseRoleName(p.role)}`] as const));
    const verb = select("hold", [["hold", st("hold.hold")], ["release", st("hold.release")]]);
    parts.push(
      panel(
        "case-actions",
        st("case.actions"),
        actionForm({
          id: "hold-form",
          submit: st("hold.apply"),
          danger: true,
          fields: [h("div", { class: "row" }, field(st("case.player"), who), field(st("hold.what"), verb)), h("p", { class: "muted" }, st("hold.hint"))],
          run: async (reason, requestId) => {
            const request = { requestId, playerId: who.value, reason: asciiReason(reason), caseId: c.caseId };
            if (verb.value === "hold") {
              await history.holdPlayer(request, because(reason));
              return st("hold.held", { player: who.value });
            }
            // Four-eyes: the release waits for finance (the hold stays until approved).
            const reply = await history.releasePlayer(request, because(reason));
            return askedWords(reply.release, st("hold.release_asked", { player: request.playerId }), st("hold.released", { player: request.playerId }));
          },
          then: reload,
        }),
        c.resolution === CaseResolution.UNSPECIFIED
          ? actionForm({
              id: "resolve-form",
              submit: st("resolve.button"),
              fields: [
                field(
                  st("resolve.verdict"),
                  select("resolution", [[String(CaseResolution.CONFIRM), st("resolve.confirm")], [String(CaseResolution.RELEASE), st("resolve.release")]]),
                  st("resolve.hint"),
                ),
              ],
              run: async (reason, requestId) => {
                const chosen = Number((document.querySelector("#resolve-form select[name=resolution]") as HTMLSelectElement).value) as CaseResolution;
                const reply = await history.resolveCase({ requestId, caseId: c.caseId, resolution: chosen, reason: asciiReason(reason) }, because(reason));
                refreshQueue();
                const done = st("resolve.done", { verdict: resolutionName(chosen) });
                return chosen === CaseResolution.RELEASE ? askedWords(reply.release, st("resolve.release_asked"), done) : done;
              },
              then: reload,
            })
          : null,
      ),
    );
    return parts;
  });
}

export function showFairPlay(root: HTMLElement, s: Signed): () => void {
  const queue = h("div", { id: "case-queue" });
  const detail = h("div", { id: "case-detail", class: "detail" });
  const refreshQueue = (): void => {
    void load(queue, async () => {
      // The cases whose release awaits finance (a queue without them if the list is refused).
      const [{ cases }, pending] = await Promise.all([
        history.listCases({ page: { pageSize: 200 } }),
        releasesIn(ReleaseRequestState.PENDING).catch(() => [] as ReleaseRequest[]),
      ]);
      if (!cases.length) return h("p", { class: "muted" }, st("cases.none"));
      const awaiting = new Set(pending.filter((r) => r.caseRelease).map((r) => r.caseId));
      const decided = (c: FairPlayCase): boolean => c.resolution !== CaseResolution.UNSPECIFIED && !awaiting.has(c.caseId);
      const sorted = [...cases].sort((a, b) => Number(decided(a)) - Number(decided(b)) || severity(b) - severity(a));
      return table(
        [st("cases.severity"), st("cases.kind"), st("cases.players"), st("cases.score"), st("cases.hands"), st("cases.last_seen"), st("cases.state"), ""],
        sorted.map((c) => [
          h("span", { class: severity(c) >= 1 ? "badge strong" : "badge" }, severity(c) >= 1 ? st("cases.strong") : st("cases.weak")),
          caseKindName(c.kind),
          c.players.map((p) => `${p.playerId} (${caseRoleName(p.role)})`).join(", "),
          st("case.score_value", { score: c.score.toFixed(2), threshold: c.threshold.toFixed(2) }),
          formatNumber(c.evidence?.handsTogether ?? BigInt(c.handIds.length)),
          when(c.lastSeenTime),
          awaiting.has(c.caseId) ? h("span", { class: "warn" }, st("cases.release_pending")) : c.resolution === CaseResolution.UNSPECIFIED ? st("case.open") : resolutionName(c.resolution),
          h("button", { type: "button", class: "quiet open-case", "data-case": c.caseId, "data-players": c.players.map((p) => p.playerId).join(" "), onclick: () => { caseDetail(detail, s, c.caseId, refreshQueue); detail.scrollIntoView({ block: "start" }); } }, st("common.open")),
        ]),
        { id: "cases" },
      );
    });
  };
  refreshQueue();
  root.append(h("h2", {}, st("menu.fairplay")), panel("case-queue-panel", st("cases.queue"), queue), detail);
  return stopReplay;
}
