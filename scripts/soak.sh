#!/usr/bin/env bash
# The soak (docs/BENCHMARKS.md, not CI): three oml-server replicas on one
# fresh database of the private Postgres and one bucket of the private S3,
# driven by oml-load at a fixed rate for SOAK_DURATION (30m), a line per
# SOAK_EVERY (60s). Writes var/soak/result.json (the intervals, the
# operation table and the check) and var/soak/soak.svg (p99, p50 and each
# replica's RSS over time); the replicas' logs are var/soak/replica-N.log.
# Recall searches a corpus of SOAK_CORPUS (2000) approved memories written
# before the run (oml-load -corpus), so its working set does not grow with
# the run's approvals and the latency over time shows the servers.
#
#   scripts/soak.sh                       # 30 minutes at 40 operations/s
#   SOAK_DURATION=2m SOAK_RATE=20 scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh

DURATION=${SOAK_DURATION:-30m}
RATE=${SOAK_RATE:-40}
EVERY=${SOAK_EVERY:-60s}
WORKERS=${SOAK_WORKERS:-32}
CORPUS=${SOAK_CORPUS:-2000}
BASE_PORT=${SOAK_PORT:-18501}
say() { printf 'soak: %s\n' "$*" >&2; }

services_up pg s3
go build -o bin/ ./cmd/oml-server ./cmd/oml-load
out=var/soak
rm -rf "$out"
mkdir -p "$out/keys"
chmod 700 "$out"

run=$(date +%s)
db=oml_soak_$run
psql -q "$OML_TEST_DATABASE_URL" -c "CREATE DATABASE $db" # template1 has vector and ltree
base=${OML_TEST_DATABASE_URL%%\?*}
query=${OML_TEST_DATABASE_URL#"$base"}
export OML_DATABASE_URL=${base%/*}/$db$query
bin/oml-server keygen --dir "$out/keys" >/dev/null
export OML_SIGNING_KEY_FILE=$PWD/$out/keys/signing.key OML_MASTER_KEY_FILE=$PWD/$out/keys/master.key
export OML_BLOB_STORE="s3://oml-soak-$run?endpoint=$OML_TEST_S3_ENDPOINT&region=${AWS_REGION:-us-east-1}"
export OML_REPLICAS=3 OML_DRAIN_DELAY=0 OML_LOG_LEVEL=warn
# oml-load reads each replica's RSS from /metrics with the same token.
OML_METRICS_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d " \n")
export OML_METRICS_TOKEN
bin/oml-server migrate
admin=$(bin/oml-server bootstrap --tenant soak | sed -E 's/.*"admin_key":"([^"]+)".*/\1/')

pids=()
urls=()
cleanup() {
	trap '' INT TERM
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	psql -q "$OML_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $db" || true
	services_down
}
trap cleanup EXIT
for i in 1 2 3; do
	listen=127.0.0.1:$((BASE_PORT + i - 1))
	OML_LISTEN=$listen bin/oml-server serve >"$out/replica-$i.log" 2>&1 &
	pids+=($!)
	urls+=("http://$listen")
done
for u in "${urls[@]}"; do
	for _ in $(seq 1 100); do curl -fs "$u/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
	curl -fs "$u/readyz" >/dev/null || { say "$u is not ready"; exit 1; }
done
say "3 replicas up; $RATE ops/s for $DURATION with $WORKERS workers, recall over $CORPUS memories"
status=0
bin/oml-load -urls "$(IFS=,; echo "${urls[*]}")" -key "$admin" -duration "$DURATION" -rate "$RATE" \
	-corpus "$CORPUS" -concurrency "$WORKERS" -every "$EVERY" -plot "$out/soak.svg" -json >"$out/result.json" || status=$?
say "result in $out/result.json, plot in $out/soak.svg (oml-load exit $status)"
exit $status
