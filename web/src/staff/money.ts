// Money (finance): the conservation audit per pool, the house balances, the rake taken per pool, the
// payouts (chips bought in and paid out per pool today, in 7 and 30 days; the latest withdrawals
// applied, player by player, to reconcile with the payments system), the funding approval queue
// (four-eyes: the asker's own request shows its approval disabled, with the words why; the cashier
// refuses it anyway, FOUR_EYES_REQUIRED) and asking for a funding; the releases of held chips risk
// asked for, awaiting finance's approval (releases.ts: four-eyes too), and the recent decisions on
// them. Each change with the staff member's reason (whole in the audit trail; the services keep it as
// ASCII, reason.ts).
import { h, chips, signedChips } from "../ui";
import { formatNumber } from "../i18n";
import { houseAccountName, st } from "../i18n/staff_words";
import { because, cashier, history } from "./api";
import { pendingFirst, releaseDecision, releaseSubject, releasesIn, releaseTable, releaseWhat } from "./releases";
import { asciiReason } from "./reason";
import type { Signed } from "./session";
import { POOLS, UTC, playFigures, startOfTodayUtc } from "./dashboard";
import { actionForm, field, input, load, panel, poolName, select, table, when } from "./widgets";
import { ChipPool } from "../gen/poker/common/v1/common_pb";
import { HouseAccount, HouseFundingState, PaymentSource, type HouseFunding } from "../gen/poker/cashier/v1/cashier_pb";
import { ReleaseRequestState } from "../gen/poker/history/v1/history_pb";

const DAY_MS = 86_400_000;

/** Whether `staff` asked for `funding` (four-eyes: the cashier tells people apart ignoring case). */
export function ownRequest(funding: Pick<HouseFunding, "requestedBy">, staff: string): boolean {
  return funding.requestedBy.trim().toLowerCase() === staff.trim().toLowerCase();
}

function decision(funding: HouseFunding, s: Signed, then: () => void): HTMLElement {
  const mine = ownRequest(funding, s.staff);
  const form = actionForm({
    id: `decide-${funding.requestId}`,
    // Four-eyes: the asker's own request offers no approval (another member of finance decides).
    choices: [
      { choice: "approve", label: st("funding.approve"), disabled: mine },
      { choice: "reject", label: st("funding.reject"), danger: true },
    ],
    fields: mine ? [h("p", { class: "warn own-words", id: `own-${funding.requestId}` }, st("funding.own_request"))] : [],
    run: async (reason, requestId, choice) => {
      const approve = choice === "approve";
      const reply = await cashier.decideHouseFunding(
        { decisionId: requestId, requestId: funding.requestId, approve, reason: asciiReason(reason) },
        because(reason),
      );
      return approve ? st("funding.approved", { balance: reply.balanceAfter }) : st("funding.rejected");
    },
    then,
  });
  form.classList.add("decision");
  form.dataset.request = funding.requestId;
  if (mine) form.querySelector("button[data-choice=approve]")?.setAttribute("aria-describedby", `own-${funding.requestId}`);
  return form;
}

function queue(out: HTMLElement, s: Signed, refreshAll: () => void): void {
  void load(out, async () => {
    const { fundings } = await cashier.listHouseFunding({ state: HouseFundingState.PENDING, page: { pageSize: 100 } });
    if (!fundings.length) return h("p", { class: "muted", id: "queue-empty" }, st("funding.queue_empty"));
    return h(
      "ul",
      { class: "funding-queue", id: "funding-queue" },
      ...fundings.map((f) =>
        h(
          "li",
          { class: "funding", "data-request": f.requestId, "data-by": f.requestedBy },
          h(
            "p",
            {},
            h("strong", {}, st("funding.line", { amount: signedChips(f.amount), pool: poolName(f.pool), account: houseAccountName(f.account) })),
            " ",
            h("span", { class: "data" }, st("funding.asked", { by: f.requestedBy, time: when(f.requestTime) })), // a staff name: data
          ),
          h("p", { class: "quote" }, f.reason),
          decision(f, s, refreshAll),
        ),
      ),
    );
  });
}

function recent(out: HTMLElement): void {
  void load(out, async () => {
    const [approved, rejected] = await Promise.all(
      [HouseFundingState.APPROVED, HouseFundingState.REJECTED].map((state) => cashier.listHouseFunding({ state, page: { pageSize: 20 } })),
    );
    const decided = [...approved.fundings, ...rejected.fundings]
      .sort((a, b) => Number((b.decisionTime?.seconds ?? 0n) - (a.decisionTime?.seconds ?? 0n)))
      .slice(0, 20);
    if (!decided.length) return h("p", { class: "muted" }, st("funding.none_decided"));
    return table(
      [st("funding.amount"), st("funding.account"), st("funding.asked_by"), st("funding.state"), st("funding.decided_by"), st("funding.why")],
      decided.map((f) => [
        signedChips(f.amount),
        `${poolName(f.pool)} · ${houseAccountName(f.account)}`,
        h("span", { class: "data" }, f.requestedBy),
        f.state === HouseFundingState.APPROVED ? st("funding.state_approved") : st("funding.state_rejected"),
        h("span", { class: "data" }, st("funding.decided", { by: f.decidedBy, time: when(f.decisionTime) })),
        h("span", { class: "data" }, f.decisionReason),
      ]),
      { id: "recent-fundings" },
    );
  });
}

/** The releases awaiting approval, oldest first (the longest wait on top), each with its decision. */
function releaseQueue(out: HTMLElement, s: Signed, refresh: () => void): void {
  void load(out, async () => {
    const pending = (await releasesIn(ReleaseRequestState.PENDING)).reverse();
    if (!pending.length) return h("p", { class: "muted", id: "release-queue-empty" }, st("release.queue_empty"));
    return h(
      "ul",
      { class: "funding-queue release-queue", id: "release-queue" },
      ...pending.map((r) =>
        h(
          "li",
          { class: "funding release", "data-request": r.requestId, "data-by": r.askedBy, "data-subject": releaseSubject(r) },
          h(
            "p",
            {},
            h("strong", {}, releaseWhat(r)),
            " ",
            h("span", { class: "data" }, st("release.asked", { by: r.askedBy, time: when(r.askTime) })), // a staff name: data
          ),
          h("p", { class: "quote" }, r.reason),
          releaseDecision(r, s.staff, refresh),
        ),
      ),
    );
  });
}

/** The releases decided lately (approved and rejected), newest first. */
function recentReleases(out: HTMLElement): void {
  void load(out, async () => {
    const [approved, rejected] = await Promise.all(
      [ReleaseRequestState.APPROVED, ReleaseRequestState.REJECTED].map((state) => history.listReleaseRequests({ state, page: { pageSize: 20 } })),
    );
    const decided = pendingFirst([...approved.releases, ...rejected.releases]).slice(0, 20);
    if (!decided.length) return h("p", { class: "muted" }, st("release.none_decided"));
    return releaseTable(decided, "recent-releases");
  });
}

const PAYOUTS_PAGE = 20;

/** The latest payouts (withdrawals applied), newest first, a page at a time: "More" appends the next. */
function payoutList(into: HTMLElement, token: string): void {
  const page = h("div", { class: "payout-page" });
  if (!token) into.replaceChildren(page);
  else into.append(page);
  void load(page, async () => {
    const reply = await cashier.listWithdrawals({ page: { pageSize: PAYOUTS_PAGE, pageToken: token } });
    if (!reply.withdrawals.length && !token) return h("p", { class: "muted", id: "payouts-none" }, st("payouts.none"));
    const rows = table(
      [st("payouts.when"), st("payouts.player"), st("player.pool"), st("payouts.source"), st("payouts.amount"), st("payouts.reference")],
      reply.withdrawals.map((w) => [
        when(w.createTime),
        h("span", { class: "payout-player" }, w.playerId),
        poolName(w.pool),
        PaymentSource[w.source] ?? "",
        h("span", { class: "payout-amount", "data-value": w.amount.toString() }, chips(w.amount)),
        h("code", {}, w.paymentReference),
      ]),
      { class: "payouts-table" },
    );
    const next = reply.page?.nextPageToken ?? "";
    const more = next ? h("button", { type: "button", class: "more", onclick: () => { more?.remove(); payoutList(into, next); } }, st("payouts.more")) : null;
    return more ? [rows, more] : rows;
  });
}

export function showMoney(root: HTMLElement, s: Signed): void {
  const audit = h("div", { id: "conservation" });
  const house = h("div", { id: "house-balances" });
  const rake = h("div", { id: "rake-figures" });
  const flows = h("div", { id: "payment-figures" });
  const payouts = h("div", { id: "payouts" });
  const pending = h("div", { id: "funding-pending" });
  const decided = h("div", { id: "funding-decided" });
  const releases = h("div", { id: "release-pending" });
  const releasesDecided = h("div", { id: "release-decided" });
  const refreshReleases = (): void => {
    releaseQueue(releases, s, refreshReleases);
    recentReleases(releasesDecided);
  };
  const refreshAll = (): void => {
    void load(audit, async () => {
      const reply = await cashier.auditConservation({});
      return [
        h("p", { class: reply.balanced ? "ok" : "bad", id: "conservation-verdict" }, reply.balanced ? st("audit_money.balanced", { time: when(reply.auditTime) }) : st("audit_money.unbalanced", { time: when(reply.auditTime) })),
        table(
          [st("player.pool"), st("audit_money.minted"), st("audit_money.burned"), st("audit_money.accounts_total"), st("audit_money.journal"), st("audit_money.negative"), st("audit_money.accounts"), st("audit_money.verdict")],
          reply.pools.map((p) => [
            poolName(p.pool),
            chips(p.minted),
            chips(p.burned),
            chips(p.accountsTotal),
            p.journalTotal === p.debitsPosted && p.debitsPosted === p.creditsPosted ? st("audit_money.journal_agrees") : st("audit_money.journal_differs"),
            formatNumber(p.negativeAccounts),
            formatNumber(p.accountCount),
            h("span", { class: p.balanced ? "ok" : "bad" }, p.balanced ? st("audit_money.pool_ok") : st("audit_money.pool_bad")),
          ]),
        ),
      ];
    });
    void load(house, async () => {
      const pools = await Promise.all(POOLS.map((pool) => cashier.getHouseBalances({ pool })));
      return table(
        [st("player.pool"), st("house.bank"), st("house.jackpot"), st("house.reserved")],
        pools.map((p) => [poolName(p.pool), h("span", { class: "bank", "data-pool": ChipPool[p.pool] }, chips(p.bankBalance)), chips(p.jackpotBalance), chips(p.reservedBalance)]),
        { id: "house-table" },
      );
    });
    void load(rake, async () => {
      const now = new Date();
      const periods = [startOfTodayUtc(now), new Date(now.getTime() - 7 * DAY_MS), new Date(now.getTime() - 30 * DAY_MS)];
      const figures = await Promise.all(periods.map((since) => playFigures(since)));
      return table(
        [st("player.pool"), st("rake.today"), st("rake.week"), st("rake.month")],
        POOLS.map((pool, i) => [poolName(pool), ...figures.map((f) => h("span", { class: "rake", "data-pool": ChipPool[pool], "data-value": f[i].rake.toString() }, chips(f[i].rake)))]),
        { id: "rake-table" },
      );
    });
    void load(flows, async () => {
      const now = new Date();
      const periods = [startOfTodayUtc(now), new Date(now.getTime() - 7 * DAY_MS), new Date(now.getTime() - 30 * DAY_MS)];
      const figures = await Promise.all(periods.map((since) => playFigures(since)));
      // A cell: the chips and how many payments (`data-value` holds the chips whole).
      const cell = (kind: string, pool: ChipPool, chipsOf: bigint, count: bigint): HTMLElement =>
        h("span", { class: kind, "data-pool": ChipPool[pool], "data-value": chipsOf.toString() }, st("payouts.cell", { chips: chips(chipsOf), count: formatNumber(count) }));
      return table(
        [st("player.pool"), st("payouts.flow"), st("rake.today"), st("rake.week"), st("rake.month")],
        POOLS.flatMap((pool, i) => [
          [poolName(pool), st("payouts.purchased"), ...figures.map((f) => cell("purchased", pool, f[i].chipsPurchased, f[i].purchases))],
          [poolName(pool), st("payouts.withdrawn"), ...figures.map((f) => cell("withdrawn", pool, f[i].chipsWithdrawn, f[i].withdrawals))],
        ]),
        { id: "payment-flows" },
      );
    });
    payoutList(payouts, "");
    queue(pending, s, refreshAll);
    recent(decided);
    refreshReleases();
  };
  const pool = select("pool", POOLS.map((p) => [String(p), poolName(p)] as const));
  const account = select("account", [[String(HouseAccount.BANK), houseAccountName(HouseAccount.BANK)], [String(HouseAccount.JACKPOT), houseAccountName(HouseAccount.JACKPOT)]]);
  const amount = input("amount", { id: "funding-amount", type: "number", required: true, step: 1, value: "" });
  const ask = actionForm({
    id: "request-funding",
    submit: st("funding.request"),
    fields: [h("div", { class: "row" }, field(st("player.pool"), pool), field(st("funding.account"), account), field(st("funding.amount"), amount, st("funding.amount_hint")))],
    run: async (reason, requestId) => {
      const reply = await cashier.requestHouseFunding(
        { requestId, pool: Number(pool.value) as ChipPool, account: Number(account.value) as HouseAccount, amount: BigInt(Math.trunc(Number(amount.value) || 0)), reason: asciiReason(reason) },
        because(reason),
      );
      amount.value = "";
      return st("funding.requested", { amount: signedChips(reply.funding?.amount ?? 0n) });
    },
    then: refreshAll,
  });
  refreshAll();
  root.append(
    h("h2", {}, st("menu.money")),
    panel("funding-queue-panel", st("funding.queue"), h("p", { class: "muted" }, st("funding.four_eyes")), pending),
    panel("release-queue-panel", st("release.queue"), h("p", { class: "muted" }, st("release.four_eyes")), releases),
    panel("funding-request-panel", st("funding.request_title"), ask),
    panel("house-panel", st("house.title"), house),
    panel("rake-panel", st("rake.title"), h("p", { class: "muted" }, st("rake.note", { zone: UTC })), rake),
    panel("payouts-panel", st("payouts.title"), h("p", { class: "muted" }, st("payouts.note", { zone: UTC })), flows, payouts),
    panel("conservation-panel", st("audit_money.title"), audit),
    panel("funding-decided-panel", st("funding.recent"), decided),
    panel("release-decided-panel", st("release.recent"), releasesDecided),
  );
}
