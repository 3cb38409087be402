// Runs the table screen's words (src/table_words.ts) on cases read as JSON from stdin and prints one
// JSON line per case: the hand log line of an action, or the text of each pot (and the initials a
// seat without a photo shows, src/avatar.ts). In English unless the cases say `lang` ("ru"); the
// subject "You" (or "Вы") is the player reading.
import { create } from "@bufbuild/protobuf";
import { ActionKind, ActionTakenSchema, PotAwardSchema, PotSchema, TableNoticeSchema } from "../src/gen/poker/table/v1/table_pb";
import { actionText, awardTexts, noticeText, potTexts, type Who } from "../src/table_words";
import { useLanguage } from "../src/i18n";
import { initials } from "../src/avatar";

interface ActionCase { subject: string; action: keyof typeof ActionKind; amount: number; to: number; timedOut?: boolean }
interface AwardsCase { awards: { pot: number; seats: number[]; amounts: number[]; hand: string }[]; names: Record<string, string> }
interface NoticeCase { subject: string; code: string; text: string }
interface PotsCase { pots: { amount: number; seats: number[] }[]; names: Record<string, string> }

let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input) as { lang?: "ru" | "en"; actions: ActionCase[]; pots: PotsCase[]; notices?: NoticeCase[]; awards?: AwardsCase[]; initials?: string[] };
useLanguage(cases.lang ?? "en");
const who = (name: string): Who => ({ name, you: name === "You" || name === "Вы" });
for (const c of cases.actions) {
  const taken = create(ActionTakenSchema, { action: ActionKind[c.action], amount: BigInt(c.amount), to: BigInt(c.to), timedOut: !!c.timedOut });
  console.log(JSON.stringify({ line: actionText(who(c.subject), taken) }));
}
for (const c of cases.pots) {
  const pots = c.pots.map((p) => create(PotSchema, { amount: BigInt(p.amount), eligibleSeats: p.seats }));
  console.log(JSON.stringify({ pots: potTexts(pots, (seat) => c.names[String(seat)] ?? `seat ${seat}`) }));
}
for (const c of cases.notices ?? []) {
  console.log(JSON.stringify({ notice: noticeText(c.subject, create(TableNoticeSchema, { code: c.code, text: c.text })) }));
}
for (const c of cases.awards ?? []) {
  const awards = c.awards.map((a) => create(PotAwardSchema, { potIndex: a.pot, seats: a.seats, amounts: a.amounts.map(BigInt), handDescription: a.hand }));
  console.log(JSON.stringify({ awards: awardTexts(awards, (seat) => who(c.names[String(seat)] ?? `seat ${seat}`)) }));
}
for (const name of cases.initials ?? []) {
  console.log(JSON.stringify({ initials: initials(name) }));
}
