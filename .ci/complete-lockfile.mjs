#!/usr/bin/env node
// Adds lockfile entries for platform-specific optional packages the registry reachable from our machines
// does not serve (e.g. @biomejs/cli-darwin-arm64 answers 404 there), so npm cannot record them and `npm ci`
// then rejects its own lockfile ("Missing: … from lock file"; npm/cli#4828, #8320). Each entry carries the
// os/cpu/libc of its platform, so npm skips it wherever it does not apply, as with a complete lockfile.
// Run after any `npm install` that changes the lockfile: node .ci/complete-lockfile.mjs
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const CPUS = {
  x64: "x64",
  arm64: "arm64",
  armv7: "arm",
  arm: "arm",
  ia32: "ia32",
  ppc64: "ppc64",
  s390x: "s390x",
};
const OSES = ["linux", "darwin", "win32", "freebsd", "android", "openbsd", "netbsd", "sunos", "aix"];

function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = parts.find((p) => OSES.includes(p));
  const cpu = parts.map((p) => CPUS[p]).find(Boolean);
  if (!os || !cpu) throw new Error(`cannot tell the platform of ${name}`);
  return { os: [os], cpu: [cpu], ...(parts.includes("musl") ? { libc: ["musl"] } : {}) };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (lock.packages[target] || lock.packages[`${key}/${target}`]) continue;
    lock.packages[target] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platformOf(name),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
