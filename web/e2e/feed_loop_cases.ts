// Runs the table stream's reconnect loop (src/feed_loop.ts) in Node against scripted streams, read as
// JSON from stdin: per scenario, the streams the loop will open in turn, each a list of items: a
// message (`view`: the hand it shows, `stack`: my stack in it, `events`: how many events came with it;
// none is a full view), an `input` for the table's model (what the player does meanwhile), the
// stream's end (`end`) or failure (`error`: the Connect code and the platform's reason), or the network
// going away for a while (`offline`: ms). A stream whose items run out stays open until the loop
// aborts it. Timers are recorded and fire at once (the network's return is real time).
// Prints per scenario one JSON line: the trace (opens, link states, timers, updates), the loop's
// reconnect count, and the table model after every update (src/table_model.ts), as the screen has it.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ActionKind, LegalActionsSchema, SeatViewSchema, Street, TableEventSchema, TableNoticeSchema, TablePhase, TableViewSchema,
} from "../src/gen/poker/table/v1/table_pb";
import { useLanguage } from "../src/i18n";
import { FeedLoop, reconnectDelay, type FeedMessage } from "../src/feed_loop";
import { initialState, reduce, type TableInput, type TableState } from "../src/table_model";

const ME = "tg:1";
type Item =
  | { view: string; stack?: number; events?: number; turn?: boolean }
  | { input: TableInput }
  | { end: true }
  | { error: { code: keyof typeof Code; reason?: string } }
  | { offline: number };
interface Scenario { streams: Item[][]; delays?: number[] }

function viewOf(hand: string, stack: number, turn: boolean) {
  return create(TableViewSchema, {
    tableId: "t", handId: hand, phase: TablePhase.HAND_IN_PROGRESS, street: Street.FLOP, toActSeat: turn ? 2 : 1, buttonSeat: 1,
    seats: [
      create(SeatViewSchema, { seat: 1, playerId: "p-ann", displayName: "Ann", stack: 1000n, holeCards: [] }),
      create(SeatViewSchema, { seat: 2, playerId: ME, displayName: "Me", stack: BigInt(stack), holeCards: [{ text: "As" }, { text: "Kd" }] }),
    ],
    legalActions: turn ? create(LegalActionsSchema, { actions: [ActionKind.CHECK, ActionKind.BET], minAmount: 10n, maxAmount: BigInt(stack), step: 1n }) : undefined,
  });
}

function errorOf(code: keyof typeof Code, reason?: string): ConnectError {
  const error = new ConnectError("stream ended", Code[code]);
  if (reason) {
    const text = new TextEncoder().encode(reason);
    error.details.push({ type: "google.rpc.ErrorInfo", value: new Uint8Array([0x0a, text.length, ...text]) });
  }
  return error;
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

async function run(scenario: Scenario) {
  const trace: unknown[] = [];
  let model: TableState = initialState(ME, false);
  const models: { hand: string; stack: number; pre: string; heads: string[]; turn: boolean }[] = [];
  let online = true;
  let opened = 0;
  // Streams that went through all their scripted items (the last one thrown or returned, or the
  // stream left open): the run waits for these, not for a quiet spell alone, so a loaded machine
  // that runs a timer late cannot end a scenario before its last item (it once ended one before its
  // refusal was thrown).
  let drained = 0;
  let loop: FeedLoop;
  let changed = Date.now();
  const note = (entry: unknown) => {
    trace.push(entry);
    changed = Date.now();
  };
  async function* stream(items: Item[], signal: AbortSignal): AsyncGenerator<FeedMessage> {
    let ended = false;
    try {
      ended = yield* scripted(items, signal);
    } finally {
      drained += 1;
    }
    if (ended) return; // the server ended the stream
    // Open until the loop aborts it.
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    throw errorOf("Canceled");
  }
  async function* scripted(items: Item[], signal: AbortSignal): AsyncGenerator<FeedMessage, boolean> {
    for (const item of items) {
      await tick();
      if (signal.aborted) throw errorOf("Canceled");
      if ("view" in item) {
        const events = Array.from({ length: item.events ?? 0 }, () => create(TableEventSchema, { kind: { case: "notice", value: create(TableNoticeSchema, { code: "X", text: "x" }) } }));
        yield { view: viewOf(item.view, item.stack ?? 1000, item.turn ?? false), events };
      } else if ("input" in item) {
        model = reduce(model, item.input);
      } else if ("end" in item) {
        return true;
      } else if ("error" in item) {
        throw errorOf(item.error.code, item.error.reason);
      } else if ("offline" in item) {
        online = false;
        note({ network: "offline" });
        setTimeout(() => { online = true; note({ network: "online" }); loop.wake(); }, item.offline);
        loop.drop();
      }
    }
    return false;
  }
  loop = new FeedLoop(
    {
      open: (signal) => {
        const items = scenario.streams[opened] ?? [];
        opened += 1;
        note({ open: opened });
        return stream(items, signal);
      },
      setTimer: (fire, ms) => {
        note({ timer: ms });
        return setTimeout(fire, 0) as unknown as number;
      },
      clearTimer: (timer) => clearTimeout(timer),
      online: () => online,
    },
    (update) => {
      note({ update: update.view.handId, events: update.events.length });
      model = reduce(model, { type: "update", view: update.view, events: update.events });
      models.push({
        hand: model.view?.handId ?? "", stack: Number(model.view?.seats.find((s) => s.playerId === ME)?.stack ?? 0n),
        pre: model.preAction, heads: model.log.filter((l) => l.heading).map((l) => l.text), turn: !!model.view?.legalActions?.actions.length,
      });
    },
    (link) => note({ link: link.link, text: link.text, attempts: link.attempts }),
  );
  const done = loop.run().then(() => note({ ended: true }));
  // Until nothing happened for a while and every scripted stream was opened (or the loop ended; or
  // ten seconds, for a script that never gets there).
  const giveUp = Date.now() + 10_000;
  while (Date.now() < giveUp) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const ended = trace.some((e) => (e as { ended?: boolean }).ended);
    if (ended || (opened >= scenario.streams.length && drained >= opened && Date.now() - changed > 150)) break;
  }
  loop.stop();
  await done;
  return { trace, reconnects: loop.reconnects, models };
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const scenarios = JSON.parse(input) as Scenario[];
useLanguage("en");
for (const [index, scenario] of scenarios.entries()) {
  const result = await run(scenario);
  console.log(JSON.stringify({ scenario: index, delays: (scenario.delays ?? []).map(reconnectDelay), ...result }));
}
