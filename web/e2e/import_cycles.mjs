// Finds every import circle among the page's modules (src/, the generated code included): each file's
// imports and re-exports as the TypeScript compiler reads them (`import type` too: a circle of types
// is a circle of modules all the same), the relative ones resolved to files, then the strongly
// connected components of that graph (Tarjan). A component of more than one file, or a file that
// imports itself, is a circle.
// Usage: node e2e/import_cycles.mjs [root]  (root: src). Prints {"files": n, "edges": n, "cycles": [...]}:
// per circle its modules (relative to the root) and one circle through them, in import order.
import ts from "typescript";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(process.argv[2] ?? "src");

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file a relative specifier names (`./lobby`, `./i18n`, `./gen/x_pb.js`), or null. */
function resolveImport(from, specifier) {
  if (!specifier.startsWith(".")) return null; // a package: not the page's own module
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|ts|mts)$/, "");
  for (const candidate of [base, `${stem}.ts`, `${stem}.mts`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

const files = sources(root);
const graph = new Map();
let edges = 0;
for (const file of files) {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const targets = new Set(info.importedFiles.map((i) => resolveImport(file, i.fileName)).filter((f) => f !== null));
  graph.set(file, [...targets].sort());
  edges += targets.size;
}

// Tarjan's strongly connected components.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
function connect(v) {
  index.set(v, counter);
  low.set(v, counter);
  counter += 1;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v), index.get(w)));
    }
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    components.push(component);
  }
}
for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file);

/** One circle through a component's files, from its first (by name) back to it: what to read to break it. */
function circleOf(component) {
  const members = new Set(component);
  const start = [...component].sort()[0];
  // Breadth first from the start's imports back to the start, inside the component.
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        for (let p = previous.get(v); p !== null && p !== undefined; p = previous.get(p)) path.unshift(p);
        return path;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

const cycles = components
  .filter((c) => c.length > 1 || (graph.get(c[0]) ?? []).includes(c[0]))
  .map((c) => ({ modules: c.map((f) => relative(root, f)).sort(), circle: circleOf(c).map((f) => relative(root, f)) }));
console.log(JSON.stringify({ files: files.length, edges, cycles }));
