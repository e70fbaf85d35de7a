#!/usr/bin/env bash
# make test: start Postgres and S3 (or use OML_TEST_DATABASE_URL and
# OML_TEST_S3_ENDPOINT), then run every test, e2e included. A service that
# cannot start fails the run; no test skips for lack of one. scripts/node.sh
# provides Node >= 22 and the npm clients of e2e/interop.
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
echo "test: go vet ./..." >&2
go vet ./...
echo "test: go test -race ./..." >&2
go test -race -count=1 -timeout 20m "$@" ./...
