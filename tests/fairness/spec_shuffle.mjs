// A third implementation of docs/fairness.md (shuffle version 1), in JavaScript with node:crypto,
// written from the spec alone to show it can be re-implemented outside Python.
// Usage: node spec_shuffle.mjs < vectors.json   -> prints one JSON line per vector: {name, commitment, deck}
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";

const hmac = (key, message) => createHmac("sha256", key).update(message).digest();
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; };

function deck(serverSeed, nonce, clientSeeds) {
  const ordered = [...clientSeeds].sort((a, b) => a.seat - b.seat);
  const parts = [Buffer.from("poker-fairness/v1/client-seeds"), u32(ordered.length)];
  for (const { seat, seed } of ordered) parts.push(u32(seat), u32(seed.length), seed);
  const digest = createHash("sha256").update(Buffer.concat(parts)).digest();
  const prk = hmac(nonce, serverSeed);
  const key = hmac(prk, Buffer.concat([Buffer.from("poker-fairness/v1/deck-key"), digest, Buffer.from([1])]));
  let counter = 0, block = Buffer.alloc(0), offset = 0;
  const nextWord = () => {
    if (offset === block.length) {
      block = hmac(key, Buffer.concat([Buffer.from("poker-fairness/v1/stream"), u64(counter++)]));
      offset = 0;
    }
    const word = block.readUInt32BE(offset);
    offset += 4;
    return word;
  };
  const cards = Array.from({ length: 52 }, (_, i) => i);
  for (let i = 51; i > 0; i--) {
    const n = i + 1;
    const limit = 2 ** 32 - (2 ** 32 % n);
    let word = nextWord();
    while (word >= limit) word = nextWord();
    const j = word % n;
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

const input = JSON.parse(readFileSync(0, "utf8"));
for (const v of input.shuffle_vectors) {
  const seed = Buffer.from(v.server_seed, "hex");
  const clientSeeds = v.client_seeds.map((c) => ({ seat: c.seat, seed: Buffer.from(c.client_seed, "hex") }));
  const commitment = createHash("sha256").update(seed).digest("hex");
  console.log(JSON.stringify({ name: v.name, commitment, deck: deck(seed, Buffer.from(v.nonce, "hex"), clientSeeds) }));
}
