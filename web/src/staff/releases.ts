// Releases of held chips, four-eyes on money: risk asks (ReleasePlayer for a hold, ResolveCase RELEASE
// for a case's automatic withdrawal holds), which records a pending release request and lifts nothing;
// another staff member, of finance, approves it (the release is carried out at once) or rejects it
// (nothing changes) with DecideRelease. Here: the requests (ListReleaseRequests, finance and risk), what
// one releases in words, the answer to an ask, the table of them, and finance's decision form (the
// asker's own request shows both buttons disabled with the words why; the service refuses it anyway,
// FOUR_EYES_REQUIRED).
import { h } from "../ui";
import { releaseStateName, st } from "../i18n/staff_words";
import { because, history } from "./api";
import { asciiReason } from "./reason";
import { actionForm, table, when } from "./widgets";
import { ReleaseRequestState, type ReleaseRequest } from "../gen/poker/history/v1/history_pb";

const PAGE = 200;
const PAGES = 5;

/** The release requests in `state` (every state when unspecified), newest first: up to 1000. */
export async function releasesIn(state = ReleaseRequestState.UNSPECIFIED): Promise<ReleaseRequest[]> {
  const found: ReleaseRequest[] = [];
  let token = "";
  for (let page = 0; page < PAGES; page++) {
    const reply = await history.listReleaseRequests({ state, page: { pageSize: PAGE, pageToken: token } });
    found.push(...reply.releases);
    token = reply.page?.nextPageToken ?? "";
    if (!token) break;
  }
  return found;
}

/** Whether `staff` asked for `release` (four-eyes tells people apart ignoring case). */
export function ownRelease(release: Pick<ReleaseRequest, "askedBy">, staff: string): boolean {
  return release.askedBy.trim().toLowerCase() === staff.trim().toLowerCase();
}

/** The player, or the case, a request is about (the key the pages find it by). */
export function releaseSubject(release: Pick<ReleaseRequest, "caseRelease" | "caseId" | "playerId">): string {
  return release.caseRelease ? release.caseId : release.playerId;
}

/** Whether a request concerns the case `caseId` or one of `players` (a ReleasePlayer of them). */
export function concerns(release: ReleaseRequest, caseId: string, players: readonly string[]): boolean {
  return (!!caseId && release.caseId === caseId) || (!release.caseRelease && players.includes(release.playerId));
}

/** Pending first, then newest first. */
export function pendingFirst(releases: readonly ReleaseRequest[]): ReleaseRequest[] {
  const pending = (r: ReleaseRequest): number => Number(r.state !== ReleaseRequestState.PENDING);
  const time = (r: ReleaseRequest): bigint => r.decideTime?.seconds ?? r.askTime?.seconds ?? 0n;
  return [...releases].sort((a, b) => pending(a) - pending(b) || Number(time(b) - time(a)));
}

/** What a request releases, in words (the ids as data). */
export function releaseWhat(release: ReleaseRequest): HTMLElement {
  if (release.caseRelease) {
    return h("span", { class: "release-what" }, st("release.case_holds"), " ", h("code", {}, release.caseId));
  }
  return h(
    "span",
    { class: "release-what" },
    st("release.player_hold"),
    " ",
    h("code", {}, release.playerId),
    release.caseId ? h("span", { class: "muted" }, ` · ${st("release.in_case")} `, h("code", {}, release.caseId)) : null,
  );
}

/** A release's state, findable by the pages (and the tests) by its request and subject. */
export function releaseState(release: ReleaseRequest): HTMLElement {
  const state = ReleaseRequestState[release.state] ?? "";
  return h(
    "span",
    {
      class: `release-state ${release.state === ReleaseRequestState.PENDING ? "warn" : release.state === ReleaseRequestState.APPROVED ? "ok" : "muted"}`,
      "data-request": release.requestId,
      "data-subject": releaseSubject(release),
      "data-state": state,
    },
    releaseStateName(release.state),
  );
}

/** The requests as a table: what, who asked and when, why, where it stands, who decided and why. */
export function releaseTable(releases: readonly ReleaseRequest[], id: string): HTMLElement {
  return table(
    [st("release.what"), st("release.asked_by"), st("release.asker_why"), st("release.state"), st("release.decided_by"), st("release.decision_why")],
    releases.map((r) => [
      releaseWhat(r),
      h("span", { class: "data" }, st("release.by_when", { by: r.askedBy, time: when(r.askTime) })),
      h("span", { class: "data" }, r.reason),
      releaseState(r),
      r.decidedBy ? h("span", { class: "data" }, st("release.by_when", { by: r.decidedBy, time: when(r.decideTime) })) : "—",
      r.decisionReason ? h("span", { class: "data" }, r.decisionReason) : "—",
    ]),
    { id },
  );
}

/** The words of a decided (or just asked) request, as the one who acted reads them. */
export function decidedWords(release: ReleaseRequest): string {
  if (release.state === ReleaseRequestState.REJECTED) return st("release.rejected");
  if (release.caseRelease) return st("release.approved_case", { case: release.caseId });
  return st("release.approved_player", { player: release.playerId });
}

/** Finance's decision on a pending request: approve or reject, with a reason; the asker's own request
 * offers neither (four-eyes: another member of finance decides), with the words why. */
export function releaseDecision(release: ReleaseRequest, staff: string, then: () => void): HTMLFormElement {
  const mine = ownRelease(release, staff);
  const own = `own-release-${release.requestId}`;
  const form = actionForm({
    id: `release-${release.requestId}`,
    choices: [
      { choice: "approve", label: st("release.approve"), disabled: mine },
      { choice: "reject", label: st("release.reject"), danger: true, disabled: mine },
    ],
    fields: mine ? [h("p", { class: "warn own-words", id: own }, st("release.own_request"))] : [],
    run: async (reason, decisionId, choice) => {
      const reply = await history.decideRelease(
        { decisionId, requestId: release.requestId, approve: choice === "approve", reason: asciiReason(reason) },
        because(reason),
      );
      return decidedWords(reply.release ?? release);
    },
    then,
  });
  form.classList.add("decision");
  form.dataset.request = release.requestId;
  if (mine) for (const b of form.querySelectorAll("button[data-choice]")) b.setAttribute("aria-describedby", own);
  return form;
}
