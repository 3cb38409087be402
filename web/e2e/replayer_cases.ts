// Runs the hand replayer's model (src/replayer.ts) on hands read as JSON from stdin: each a HandRecord
// in the protobuf JSON form (as history gives it to the reader), the reader's player id and the page's
// language. Prints one JSON line per step of each hand: the frame as the replayer draws it (chips as
// numbers). Steps outside the hand (`probe`) are asked too, to see them clamped.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { HandRecordSchema } from "../src/gen/poker/history/v1/history_pb";
import { useLanguage } from "../src/i18n";
import { replayFrame, replaySteps, type ReplayFrame } from "../src/replayer";

interface Case { record: JsonValue; me: string; lang?: "ru" | "en"; probe?: number[] }

function shown(frame: ReplayFrame) {
  return {
    step: frame.step,
    steps: frame.steps,
    street: frame.street,
    board: frame.board,
    pot: Number(frame.pot),
    rake: Number(frame.rake),
    acting: frame.acting,
    lines: frame.lines,
    seats: frame.seats.map((s) => ({
      seat: s.seat, name: s.name, you: s.you, stack: Number(s.stack), bet: Number(s.bet), cards: s.cards,
      folded: s.folded, allIn: s.allIn, button: s.button, net: s.net === null ? null : Number(s.net),
    })),
  };
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input) as Case[];
for (const [index, c] of cases.entries()) {
  useLanguage(c.lang ?? "en");
  const record = fromJson(HandRecordSchema, c.record, { ignoreUnknownFields: true });
  const steps = replaySteps(record);
  for (let step = 0; step < steps; step++) console.log(JSON.stringify({ case: index, ...shown(replayFrame(record, c.me, step)) }));
  for (const step of c.probe ?? []) console.log(JSON.stringify({ case: index, probe: step, ...shown(replayFrame(record, c.me, step)) }));
}
