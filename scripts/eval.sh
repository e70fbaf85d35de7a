#!/usr/bin/env bash
# make eval: promote the Cranfield collection (../shared/data/cranfield)
# through the real pipeline, score recall on its 225 queries, and write the
# table into docs/BENCHMARKS.md between the eval markers.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh

data=${CRANFIELD_DIR:-../shared/data/cranfield}
if [[ ! -f $data/cran.all.1400 ]]; then
	echo "eval: the Cranfield collection is not at $data (set CRANFIELD_DIR)" >&2
	exit 1
fi
services_up pg
mkdir -p var/bench
# The built-in embedder's own sanity check on the collection (build tag eval).
CRANFIELD_DIR=$(cd "$data" && pwd -P) go test -tags eval -count=1 -run CranfieldSanity ./contexts/retrieval/internal/embed
out=var/bench/cranfield.txt
CRANFIELD_DIR=$(cd "$data" && pwd -P) go test -run '^$' -bench Cranfield -benchtime 1x -timeout 20m ./cmd/oml-server | tee "$out"
table=$(grep '^|' "$out")
if [[ -z $table ]]; then
	echo "eval: the benchmark printed no table" >&2
	exit 1
fi

section=$(mktemp)
trap 'rm -f "$section"; services_down' EXIT
{
	echo "<!-- eval:begin (written by make eval; edits here are overwritten) -->"
	echo "\`make eval\` — $(date -u +%Y-%m-%d), $(nproc) cores, $(go version | cut -d' ' -f3), built-in embedder (384 dimensions)"
	echo
	echo "$table"
	echo "<!-- eval:end -->"
} >"$section"
doc=docs/BENCHMARKS.md
if grep -q '^<!-- eval:begin' "$doc"; then
	awk -v f="$section" '
		/^<!-- eval:begin/ { while ((getline line < f) > 0) print line; skip = 1; next }
		/^<!-- eval:end/ { skip = 0; next }
		!skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
else
	{ echo; echo "## Recall quality on Cranfield"; echo; cat "$section"; } >>"$doc"
fi
echo "eval: wrote the table to $doc"
