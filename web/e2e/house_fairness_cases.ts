// Runs the page's house-round check (src/fairness/house.ts) on cases read as JSON from stdin: a
// HandRecord's bytes (base64) and the card indexes opened to the player; prints one JSON line per case.
import { fromBinary } from "@bufbuild/protobuf";
import { HandRecordSchema } from "../src/gen/poker/history/v1/history_pb";
import { houseCardsProblem, shownCards } from "../src/fairness/house";
import { useLanguage } from "../src/i18n";

useLanguage("en");

let input = "";
for await (const chunk of process.stdin) input += chunk;
for (const c of JSON.parse(input) as { record: string; opened: number[] }[]) {
  const record = fromBinary(HandRecordSchema, Buffer.from(c.record, "base64"));
  const openings = c.opened.map((card, i) => ({ dealPosition: i, committedPosition: i, card, salt: new Uint8Array(32), proof: [] }));
  const shown = shownCards(record);
  console.log(JSON.stringify({ shown, ...houseCardsProblem(shown, openings) }));
}
