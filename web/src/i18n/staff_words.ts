// The staff console's words: `st(key, params)` from its catalogue (./staff.ts), as `t` does for the
// players' page (the same language, numbers and plural forms: ./index.ts), the codes of the services
// in words, and a refused call in words: the console's own sentence for a reason, else the players'
// (./refusals.ts), else the Connect code's, else a general one with the code.
import { STAFF } from "./staff";
import { REFUSALS } from "./refusals";
import { fill, language, pluralForm, type Params } from "./index";
import type { Entry, Plural } from "./entry";
import { CaseHoldState, CaseKind, CaseResolution, CaseRole, ReleaseRequestState } from "../gen/poker/history/v1/history_pb";
import { GameVariant } from "../gen/poker/common/v1/common_pb";
import { HouseAccount, TransferKind } from "../gen/poker/cashier/v1/cashier_pb";

export type StaffKey = keyof typeof STAFF;

function textOf(entry: Entry, params: Params): string {
  const text = entry[language()];
  if (typeof text === "string") return text;
  const count = params.count;
  const form = typeof count === "number" || typeof count === "bigint" ? pluralForm(count) : "other";
  return (text as Plural & Partial<Record<Intl.LDMLPluralRule, string>>)[form] ?? text.other;
}

/** The console's text for `key` in the page's language, its parameters filled in. */
export function st(key: StaffKey, params: Params = {}): string {
  return fill(textOf(STAFF[key], params), params);
}

export function staffKnown(key: string): key is StaffKey {
  return Object.prototype.hasOwnProperty.call(STAFF, key);
}

function refusalKnown(key: string): key is keyof typeof REFUSALS {
  return Object.prototype.hasOwnProperty.call(REFUSALS, key);
}

/** A refused call in the staff member's words (never the server's developer wording). */
export function staffRefusal(failure: { code: string; reason: string }): string {
  const reasonKey = `reason.${failure.reason}`;
  if (failure.reason && staffKnown(reasonKey)) return st(reasonKey);
  if (failure.reason && refusalKnown(reasonKey)) return fill(textOf(REFUSALS[reasonKey], {}), {});
  const statusKey = `status.${failure.code}`;
  if (!failure.reason && refusalKnown(statusKey)) return fill(textOf(REFUSALS[statusKey], {}), {});
  const unknown = { reason: failure.reason || failure.code };
  return fill(textOf(REFUSALS["refusal.unknown"], unknown), unknown);
}

function coded(prefix: string, code: string, fallback: string): string {
  const key = `${prefix}.${code}`;
  return staffKnown(key) ? st(key) : fallback;
}

export function roleName(role: string): string {
  return coded("role", role, role);
}

export function roleList(roles: readonly string[]): string {
  return roles.map(roleName).join(", ");
}

export function variantName(variant: GameVariant): string {
  return coded("variant", GameVariant[variant] ?? "", String(variant));
}

export function caseKindName(kind: CaseKind): string {
  return coded("case_kind", CaseKind[kind] ?? "", String(kind));
}

export function caseRoleName(role: CaseRole): string {
  return coded("case_role", CaseRole[role] ?? "", "—");
}

export function holdStateName(state: CaseHoldState): string {
  return coded("hold_state", CaseHoldState[state] ?? "", "—");
}

export function resolutionName(resolution: CaseResolution): string {
  return coded("resolution", CaseResolution[resolution] ?? "", "—");
}

/** Where a release of held chips stands (PENDING: it awaits finance). */
export function releaseStateName(state: ReleaseRequestState): string {
  return coded("release_state", ReleaseRequestState[state] ?? "", "—");
}

export function houseAccountName(account: HouseAccount): string {
  return coded("house_account", HouseAccount[account] ?? "", "—");
}

export function transferKindName(kind: TransferKind): string {
  return coded("transfer", TransferKind[kind] ?? "", st("transfer.other"));
}

/** A street or an action of a hand in words (a code this console does not know, in lower case). */
export function playWord(code: string): string {
  return coded("play", code, code.toLowerCase().replace(/_/g, " "));
}

/** An audit event's kind in words (a kind this console does not know, as its code). */
export function kindName(kind: string): string {
  return coded("audit_kind", kind, kind);
}
