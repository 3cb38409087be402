// Bundles src/ into dist/ with esbuild; `npm run build` first generates src/gen and type-checks. Two
// pages: the players' client (src/main.ts: dist/index.html, app.js, app.css), served by the gateway's
// players' address, and the staff console (src/staff/main.ts: dist/staff/index.html, app.js,
// app.css), served only by the gateway's staff door.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";

const common = {
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  sourcemap: false,
  logLevel: "warning",
};

rmSync("dist", { recursive: true, force: true });
mkdirSync("dist/staff", { recursive: true });
await build({ ...common, entryPoints: ["src/main.ts"], outfile: "dist/app.js" });
copyFileSync("src/index.html", "dist/index.html");
copyFileSync("src/style.css", "dist/app.css");
await build({ ...common, entryPoints: ["src/staff/main.ts"], outfile: "dist/staff/app.js" });
copyFileSync("src/staff/index.html", "dist/staff/index.html");
copyFileSync("src/staff/style.css", "dist/staff/app.css");
