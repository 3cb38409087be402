// Runs the page's fairness verifier (src/fairness/verifier.ts) on the known-answer vectors of
// docs/fairness.md, read as JSON from stdin; prints one JSON line per vector: whether the hand
// verifies with all 52 cards as the vector deals them, and whether it fails with one card moved.
import { fromHex, verify, type PublishedHand } from "../src/fairness/verifier";

interface Vector {
  name: string;
  shuffle_version: number;
  server_seed: string;
  nonce: string;
  client_seeds: { seat: number; client_seed: string }[];
  table_id: string;
  hand_id: string;
  sequence: number;
  previous_commitment: string;
  server_seed_hash: string;
  commitment: string;
  deck: number[];
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const vectors = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { shuffle_vectors: Vector[] }).shuffle_vectors;
for (const v of vectors) {
  const hand: PublishedHand = {
    version: v.shuffle_version,
    tableId: v.table_id ?? "",
    handId: v.hand_id ?? "",
    sequence: BigInt(v.sequence ?? 0),
    previousCommitment: v.previous_commitment ?? "",
    nonce: v.nonce,
    serverSeed: fromHex(v.server_seed),
    serverSeedHash: v.server_seed_hash ?? "",
    commitment: v.commitment,
    clientSeeds: v.client_seeds.map((c) => ({ seat: c.seat, seed: fromHex(c.client_seed) })),
  };
  const seen = v.deck.map((card, position) => ({ position, card }));
  const good = await verify(hand, seen, v.commitment);
  const moved = seen.map((s, i) => (i === 0 ? { position: 0, card: v.deck[1] } : s));
  const bad = await verify(hand, moved, v.commitment);
  const otherCommitment = await verify(hand, seen, "0".repeat(64));
  console.log(JSON.stringify({ name: v.name, ok: good.ok, checked: good.checkedCards, computed: good.computedCommitment, movedCardCaught: !bad.ok, wrongCommitmentCaught: !otherCommitment.ok }));
}
