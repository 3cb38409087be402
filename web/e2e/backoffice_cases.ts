// The staff console's pure parts on cases read as JSON from stdin; one JSON line per answer:
//   {"staff_catalogue": {...}}  the console's catalogue (src/i18n/staff.ts), for the catalogue's checks
//                               (e2e/i18n_cases.ts takes it as its `catalogue`);
//   {"lines": "..."}            audit events as JSON lines (src/staff/audit_lines.ts);
//   {"ascii": "..."}            a reason as the services keep it (src/staff/reason.ts);
//   {"screens": [...]}          the screens a set of roles sees (src/staff/roles.ts);
//   {"refusal": "..."}          a refusal in the console's words (src/i18n/staff_words.ts);
//   {"text": "..."}             an entry of the console's catalogue in a language.
import { STAFF } from "../src/i18n/staff";
import { useLanguage, type Language } from "../src/i18n";
import { st, staffRefusal, type StaffKey } from "../src/i18n/staff_words";
import { auditLines, type AuditEventLike } from "../src/staff/audit_lines";
import { asciiReason } from "../src/staff/reason";
import { screensOf, type Role } from "../src/staff/roles";

interface Cases {
  events?: (Omit<AuditEventLike, "time"> & { time?: { seconds: number; nanos?: number } })[];
  reasons?: string[];
  roles?: Role[][];
  refusals?: { lang: Language; code: string; reason: string }[];
  texts?: { lang: Language; key: string; params?: Record<string, number | string> }[];
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input) as Cases;

console.log(JSON.stringify({ staff_catalogue: STAFF }));
if (cases.events) console.log(JSON.stringify({ lines: auditLines(cases.events) }));
for (const reason of cases.reasons ?? []) console.log(JSON.stringify({ ascii: asciiReason(reason) }));
for (const roles of cases.roles ?? []) console.log(JSON.stringify({ screens: screensOf(roles) }));
for (const c of cases.refusals ?? []) {
  useLanguage(c.lang);
  console.log(JSON.stringify({ refusal: staffRefusal(c) }));
}
for (const c of cases.texts ?? []) {
  useLanguage(c.lang);
  const params = Object.fromEntries(Object.entries(c.params ?? {}).map(([k, v]) => [k, typeof v === "number" ? BigInt(v) : v]));
  console.log(JSON.stringify({ text: st(c.key as StaffKey, params) }));
}
