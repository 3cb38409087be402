// Runs the page's version 3 verifier (src/fairness/verifier.ts) on the version 3 known-answer
// vectors of docs/fairness.md, read as JSON from stdin ({"hands": [...]}); prints one JSON line per
// vector: whether the opening of deal position 0 verifies with the card dealt there, and whether a
// changed salt, a changed card, a card at a position not opened and a wrong root are each caught;
// and the client-seed hash of each client seed (the hash a player sends first), and whether the
// check against a kept hash set catches a seed at a seat not in it and a seed that does not match;
// and whether the verdict itself refuses a seed that does not give its seat's published hash or
// comes without one, and leaves a withheld seat (a hash and no seed) out of the deal.
import { clientSeedHash, fromHex, hashSetProblem, verify, type CardOpening, type ClientSeed, type PublishedHand } from "../src/fairness/verifier";

interface Vector {
  name: string;
  server_seed: string;
  nonce: string;
  client_seeds: { seat: number; client_seed: string }[];
  table_id: string;
  hand_id: string;
  sequence: number;
  previous_commitment: string;
  deck_root: string;
  commitment: string;
  dealt: number[];
  opening_of_deal_position_0: { committed_position: number; card: number; salt: string; proof: string[] };
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const vectors = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { hands: Vector[] }).hands;
const sha256 = async (data: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
for (const v of vectors) {
  const o = v.opening_of_deal_position_0;
  const seeds = v.client_seeds.map((c) => ({ seat: c.seat, seed: fromHex(c.client_seed) }));
  const seedHashes = await Promise.all(seeds.map((c) => clientSeedHash(v.commitment, c.seat, c.seed)));
  const published = seeds.map((c, i) => ({ ...c, hash: seedHashes[i] }));
  const opening: CardOpening = {
    dealPosition: 0,
    committedPosition: o.committed_position,
    card: o.card,
    salt: fromHex(o.salt),
    proof: o.proof.map(fromHex),
  };
  const hand = (openings: CardOpening[], root = v.deck_root, clientSeeds: ClientSeed[] = published): PublishedHand => ({
    version: 3,
    tableId: v.table_id,
    handId: v.hand_id,
    sequence: BigInt(v.sequence),
    previousCommitment: v.previous_commitment,
    nonce: v.nonce,
    serverSeed: fromHex(v.server_seed),
    serverSeedHash: "",
    commitment: v.commitment,
    clientSeeds,
    deckRoot: root,
    openings,
  });
  const seedHash = hex(await sha256(fromHex(v.server_seed)));
  const withHash = (h: PublishedHand) => ({ ...h, serverSeedHash: seedHash });
  const seen = [{ position: 0, card: v.dealt[0] }];
  const good = await verify(withHash(hand([opening])), seen, v.commitment);
  const salt = fromHex(o.salt);
  salt[0] ^= 1;
  const badSalt = await verify(withHash(hand([{ ...opening, salt }])), seen, v.commitment);
  const badCard = await verify(withHash(hand([opening])), [{ position: 0, card: (v.dealt[0] + 1) % 52 }], v.commitment);
  const notOpened = await verify(withHash(hand([opening])), [...seen, { position: 1, card: v.dealt[1] }], v.commitment);
  const wrongRoot = await verify(withHash(hand([opening], "00".repeat(32))), seen, v.commitment);
  const kept = seeds.map((c, i) => ({ seat: c.seat, hash: seedHashes[i] }));
  const keptPasses = (await hashSetProblem(kept, seeds, v.commitment)) === "";
  const missingCaught = seeds.length === 0 || (await hashSetProblem(kept.slice(1), seeds, v.commitment)) !== "";
  const changedCaught = seeds.length === 0 || (await hashSetProblem(kept, [{ ...seeds[0], seed: Uint8Array.of(...seeds[0].seed, 1) }], v.commitment)) !== "";
  // The seed at a seat does not give the hash published for it / has none; a withheld seat.
  const otherHash = published.map((c, i) => (i === 0 ? { ...c, hash: seedHashes[0].replace(/^./, (d) => (d === "0" ? "1" : "0")) } : c));
  const seedHashCaught = seeds.length === 0 || !(await verify(withHash(hand([opening], v.deck_root, otherHash)), seen, v.commitment)).ok;
  const noHash = published.map((c, i) => (i === 0 ? { seat: c.seat, seed: c.seed } : c));
  const missingHashCaught = seeds.length === 0 || !(await verify(withHash(hand([opening], v.deck_root, noHash)), seen, v.commitment)).ok;
  const withheld = [...published, { seat: 1023, seed: new Uint8Array(0), hash: "ab".repeat(32) }];
  const withheldPasses = (await verify(withHash(hand([opening], v.deck_root, withheld)), seen, v.commitment)).ok;
  const upper = published.map((c) => ({ ...c, hash: c.hash.toUpperCase() }));
  const upperPasses = (await verify(withHash(hand([opening], v.deck_root, upper)), seen, v.commitment)).ok;
  console.log(JSON.stringify({
    name: v.name, ok: good.ok, problems: good.problems, checked: good.checkedCards, computed: good.computedCommitment,
    saltCaught: !badSalt.ok, cardCaught: !badCard.ok, notOpenedCaught: !notOpened.ok, rootCaught: !wrongRoot.ok,
    seedHashes, keptPasses, missingCaught, changedCaught, seedHashCaught, missingHashCaught, withheldPasses, upperPasses,
  }));
}
