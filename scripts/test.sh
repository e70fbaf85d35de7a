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
