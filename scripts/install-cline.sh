#!/usr/bin/env bash
# Cline CLI (npm `cline`), pinned, one folder per version: .agents/cline/<VERSION>/ (git-ignored).
# Usage: bash scripts/install-cline.sh [VERSION]   (default 3.0.65; idempotent)
#
# - npm's own client, nothing else: `npm install --prefix .agents/cline/<VERSION> cline@<VERSION>`
#   (about 2 minutes and 434 MB the first time; seconds once installed).
# - The CLI is a compiled binary in a per-platform package (@cline/cli-<os>-<arch>/bin/cline), so it
#   runs under Node 20 although the @cline/* packages ask for Node 22 (npm's EBADENGINE warning).
# - What was installed is written to .agents/cline/<VERSION>/install.json: the package's own version
#   (from its package.json), the binary's path inside the folder, its sha256 (the install hash a
#   results header names) and npm's integrity for the tarball. Reader: evalkit.agents.cline.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="${1:-3.0.65}"
if ! [[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z.]+)?$ ]]; then
  echo "install-cline: '$VERSION' is not a release number (e.g. 3.0.65)" >&2
  exit 2
fi
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install-cline: '$tool' is not on PATH: install Node.js 20 or later (with npm) first" >&2
    exit 2
  fi
done
PREFIX=".agents/cline/$VERSION"
INFO="$PREFIX/install.json"

# The record names this version and its binary still has the recorded sha256.
installed() {
  [ -f "$INFO" ] && node - "$INFO" "$VERSION" <<'JS' >/dev/null 2>&1
const fs = require("fs"), crypto = require("crypto"), path = require("path");
const [info, version] = process.argv.slice(2);
const rec = JSON.parse(fs.readFileSync(info, "utf8"));
const bin = path.join(path.dirname(info), rec.binary);
const sha = crypto.createHash("sha256").update(fs.readFileSync(bin)).digest("hex");
if (rec.version !== version || sha !== rec.sha256) process.exit(1);
fs.accessSync(bin, fs.constants.X_OK);
JS
}

if installed; then
  echo "install-cline: cline $VERSION already installed in $PREFIX"
  exit 0
fi

echo "install-cline: cline@$VERSION into $PREFIX (npm $(npm --version), node $(node --version))"
mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error "cline@$VERSION"

node - "$PREFIX" "$VERSION" <<'JS'
const fs = require("fs"), crypto = require("crypto"), path = require("path");
const [prefix, version] = process.argv.slice(2);
const modules = path.join(prefix, "node_modules");
const pkg = JSON.parse(fs.readFileSync(path.join(modules, "cline", "package.json"), "utf8"));
if (pkg.version !== version) {
  console.error(`install-cline: npm installed cline ${pkg.version}, not ${version}`);
  process.exit(1);
}
const platform = `cli-${process.platform}-${process.arch}`;
const binary = path.join("node_modules", "@cline", platform, "bin", "cline");
if (!fs.existsSync(path.join(prefix, binary))) {
  console.error(`install-cline: no ${binary} in ${prefix}: is there a Cline build for ${platform}?`);
  process.exit(1);
}
const sha256 = crypto.createHash("sha256").update(fs.readFileSync(path.join(prefix, binary))).digest("hex");
const lock = JSON.parse(fs.readFileSync(path.join(prefix, "package-lock.json"), "utf8"));
const entry = (lock.packages || {})["node_modules/cline"] || {};
const record = {
  package: "cline",
  version: pkg.version,
  binary,
  sha256,
  integrity: entry.integrity || null,
  node: process.version,
};
fs.writeFileSync(path.join(prefix, "install.json"), JSON.stringify(record, null, 2) + "\n");
console.log(`install-cline: ${binary} sha256 ${sha256}`);
JS
installed || { echo "install-cline: $INFO does not match the binary after installing" >&2; exit 1; }
echo "install-cline: done. Binary: $PREFIX/node_modules/.bin/cline"
