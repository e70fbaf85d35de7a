#!/usr/bin/env bash
# make test: start Postgres and S3 (or use OML_TEST_DATABASE_URL and
# OML_TEST_S3_ENDPOINT), then run every test, e2e included. A service that
# cannot start fails the run; no test skips for lack of one. scripts/node.sh
# provides Node >= 22 and the npm clients of e2e/interop; scripts/browser.sh
# Debian's chromium for the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh

services_up pg s3
# Node and the independent MCP clients e2e/interop_test.go runs.
# An assignment keeps node.sh's exit status under set -e (eval of a failed
# command substitution would not).
node_env=$(scripts/node.sh)
eval "$node_env"
export OML_NODE OML_INTEROP_DIR
# Chromium for the browser tests (e2e/web_test.go); axe-core comes with the
# interop clients above.
browser_env=$(scripts/browser.sh)
eval "$browser_env"
export OML_CHROMIUM
echo "test: go vet ./..." >&2
go vet ./...
echo "test: go test -race ./..." >&2
go test -race -count=1 -timeout 20m "$@" ./...
# A short run of every fuzz target beyond its committed corpus (which go
# test ran above); make fuzz runs them for a minute each.
# OML_TEST_FUZZTIME=off leaves it out (CI's second run, from a clone
# elsewhere, which tests the set-up, not the code again).
fuzztime=${OML_TEST_FUZZTIME:-2s}
if [[ $fuzztime != off ]]; then
	echo "test: every fuzz target for $fuzztime" >&2
	FUZZTIME=$fuzztime scripts/fuzz.sh
fi
