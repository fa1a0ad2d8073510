#!/usr/bin/env node
// Part of the SDK's build (`npm run build -w bridge-sdk`): `npm pack` of the freshly built
// package into bridge-sdk/pack/ (apphost-bridge-sdk-<version>.tgz, older tarballs removed). The
// root build.rs embeds it in `apphost`, whose `apphost sdk --out DIR --pack` writes it out: the
// SDK in hand with no registry. The tarball is made here, by npm itself, because the Rust tree
// has no tar writer (the `tar` crate is not in Cargo.lock).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SDK = join(dirname(fileURLToPath(import.meta.url)), "..", "bridge-sdk");
const PACK = join(SDK, "pack");
mkdirSync(PACK, { recursive: true });
for (const f of readdirSync(PACK)) if (f.endsWith(".tgz")) rmSync(join(PACK, f));
const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", PACK], {
  cwd: SDK,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
});
console.log(`bridge-sdk: packed ${JSON.parse(out)[0].filename}`);
