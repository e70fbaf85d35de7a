#!/usr/bin/env bash
# make bench: run the benchmarks against the private Postgres and print the
# tables committed to docs/BENCHMARKS.md. Medians of COUNT runs (default 3).
# The numbers there were measured with the shared buffers in huge pages, so
# the cluster it starts reserves them (as root; OML_PG_HUGE_PAGES=on, given
# back when it stops). A cluster already running is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh

export OML_PG_HUGE_PAGES=${OML_PG_HUGE_PAGES:-on}

services_up pg s3
mkdir -p var/bench
COUNT=${COUNT:-3}
N=${N:-3000}

echo "## oml_workarea_info over MCP vs GET /v1/workareas/{id} vs SELECT 1"
echo
echo "\`go test -run '^\$' -bench WorkareaInfo -benchtime ${N}x -count $COUNT ./cmd/oml-server\` — $(date -u +%Y-%m-%d), $(nproc) cores, $(go version | cut -d' ' -f3)"
echo
go test -run '^$' -bench WorkareaInfo -benchtime "${N}x" -count "$COUNT" ./cmd/oml-server | tee var/bench/workarea_info.txt | awk -f scripts/benchtable.awk

echo
echo "## Real tools: oml_recall and oml_remember over MCP vs POST /v1/recall and POST /v1/memories"
echo
echo "\`go test -run '^\$' -bench RealTools -benchtime ${N_REAL:-2000}x -count $COUNT ./cmd/oml-server\`"
echo
go test -run '^$' -bench RealTools -benchtime "${N_REAL:-2000}x" -count "$COUNT" ./cmd/oml-server | tee var/bench/real_tools.txt | awk -f scripts/benchtable.awk

echo
echo "## Admission: held submissions/s and serve + verdict round trips (HTTP API and the reviewer's pages) beside the journal append alone"
echo
echo "\`go test -run '^\$' -bench Admission -benchtime ${N_ADMISSION:-2000}x -count $COUNT ./cmd/oml-server\`"
echo
go test -run '^$' -bench Admission -benchtime "${N_ADMISSION:-2000}x" -count "$COUNT" ./cmd/oml-server | tee var/bench/admission.txt | awk -f scripts/benchtable.awk

echo
echo "## Serve + verdict, statement by statement"
echo
echo "\`go test -v -run '^\$' -bench ReviewStatements -benchtime ${N_REVIEW:-1000}x ./cmd/oml-server\`"
echo
go test -v -run '^$' -bench ReviewStatements -benchtime "${N_REVIEW:-1000}x" ./cmd/oml-server | tee var/bench/review_statements.txt | sed -n 's/^ *\(a round trip\||\)/\1/p'

echo
echo "## remember, statement by statement"
echo
echo "\`go test -v -run '^\$' -bench RememberStatements -benchtime ${N_REMEMBER:-2000}x ./cmd/oml-server\`"
echo
go test -v -run '^$' -bench RememberStatements -benchtime "${N_REMEMBER:-2000}x" ./cmd/oml-server | tee var/bench/remember_statements.txt | sed -n 's/^ *\(a write\||\)/\1/p'

echo
echo "## recall, round trip by round trip"
echo
echo "\`go test -v -run '^\$' -bench RecallStatements -benchtime ${N_RECALL:-1000}x ./cmd/oml-server\`"
echo
go test -v -run '^$' -bench RecallStatements -benchtime "${N_RECALL:-1000}x" ./cmd/oml-server | tee var/bench/recall_statements.txt | sed -n 's/^ *\(a recall\||\)/\1/p'

echo
echo "## Quotas: what the check costs a write"
echo
echo "\`go test -run '^\$' -bench QuotaCheck -benchtime ${N_ADMISSION:-2000}x -count $COUNT ./cmd/oml-server\` and \`go test -run '^\$' -bench Limiter -benchtime 200000x -count $COUNT ./contexts/access/internal/app\`"
echo
go test -run '^$' -bench QuotaCheck -benchtime "${N_ADMISSION:-2000}x" -count "$COUNT" ./cmd/oml-server | tee var/bench/quota.txt | awk -f scripts/benchtable.awk
go test -run '^$' -bench Limiter -benchtime 200000x -count "$COUNT" ./contexts/access/internal/app | tee var/bench/limiter.txt | grep '^Benchmark'

echo
echo "## Session brains: brain_put and brain_get over MCP"
echo
echo "\`go test -run '^\$' -bench Brain -benchtime ${N_BRAIN:-1000}x -count $COUNT ./cmd/oml-server\`"
echo
go test -run '^$' -bench Brain -benchtime "${N_BRAIN:-1000}x" -count "$COUNT" ./cmd/oml-server | tee var/bench/brain.txt | awk -f scripts/benchtable.awk

echo
echo "## Search over ${SEARCH_ROWS:-100000} mixed rows (events, pages, own brains) at three scope widths"
echo
echo "\`SEARCH_ROWS=${SEARCH_ROWS:-100000} go test -run '^\$' -bench Search -benchtime ${N_SEARCH:-500}x -count $COUNT ./cmd/oml-server\`"
echo
SEARCH_ROWS=${SEARCH_ROWS:-100000} go test -run '^$' -bench 'Search$' -benchtime "${N_SEARCH:-500}x" -count "$COUNT" ./cmd/oml-server | tee var/bench/search.txt | awk -f scripts/benchtable.awk

echo
echo "## The evidence export of ${EVIDENCE_EVENTS:-100000} journal events"
echo
echo "\`EVIDENCE_EVENTS=${EVIDENCE_EVENTS:-100000} go test -run '^\$' -bench EvidenceExport -benchtime 1x ./cmd/oml-server\`"
echo
EVIDENCE_EVENTS=${EVIDENCE_EVENTS:-100000} go test -run '^$' -bench EvidenceExport -benchtime 1x ./cmd/oml-server | tee var/bench/evidence.txt | grep '^Benchmark'

echo
echo "## Statements per serve (constant, not one batch per candidate) and per verdict"
echo
echo "\`go test -run TestServeStatementCount -v ./cmd/oml-server\`"
echo
go test -count=1 -run TestServeStatementCount -v ./cmd/oml-server | tee var/bench/statements.txt | grep -o 'statements: .*'

echo
echo "## Transport overhead in process (no database): one trivial call"
echo
echo "\`go test -run '^\$' -bench TransportOverhead -benchtime 20000x -count $COUNT ./platform/transport\`"
echo
echo "| route | ns/op | B/op | allocs/op |"
echo "| --- | ---: | ---: | ---: |"
GOGC=400 go test -run '^$' -bench TransportOverhead -benchtime 20000x -count "$COUNT" ./platform/transport | tee var/bench/transport.txt |
	awk '/^Benchmark/ { n = $1; sub(/-[0-9]+$/, "", n); sub(/.*route=/, "", n); ns[n] = ns[n] " " $3; bo[n] = $5; al[n] = $7; if (!(n in s)) { s[n] = 1; o[++k] = n } }
	function med(x,  a, m, i, j, t) { m = split(x, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((m + 1) / 2)] }
	END { for (i = 1; i <= k; i++) printf "| %s | %d | %d | %d |\n", o[i], med(ns[o[i]]), bo[o[i]], al[o[i]] }'

echo
echo "## Recall latency and vector-leg recall by corpus size, scope width and concurrency"
echo
echo "\`RECALL_SIZES=${RECALL_SIZES:-10000,100000} go test -run '^\$' -bench Recall -benchtime 1x -timeout 2h ./contexts/retrieval\`"
RECALL_SIZES=${RECALL_SIZES:-10000,100000} go test -run '^$' -bench Recall -benchtime 1x -timeout 2h ./contexts/retrieval | tee var/bench/recall.txt | awk '/^[|]/ || /^Median/ || /^CPU per/ || /^The baseline/ { print; t = 1; next } t && /^$/ { print; t = 0 }'

echo
echo "## The read log: rows of concurrent recalls written together vs one INSERT each (16 writers)"
echo
echo "\`go test -run '^\$' -bench ReadLog -benchtime 20000x -count $COUNT ./contexts/retrieval\`"
go test -run '^$' -bench ReadLog -benchtime 20000x -count "$COUNT" ./contexts/retrieval | tee var/bench/read_log.txt | grep '^BenchmarkReadLog'

echo
echo "## The notification trailer on a call with nothing pending"
echo
echo "\`go test -run '^\$' -bench Trailer -benchtime 3000x -count $COUNT ./cmd/oml-server\`"
go test -run '^$' -bench Trailer -benchtime 3000x -count "$COUNT" ./cmd/oml-server | tee var/bench/trailer.txt | awk -f scripts/benchtable.awk

echo
echo "## Coordination: inbox_wait woken across replicas; feed_read beside oml_workarea_info"
echo
echo "\`go test -run '^\$' -bench Coordination -benchtime 1x ./e2e\`"
go test -run '^$' -bench Coordination -benchtime 1x -timeout 30m ./e2e | tee var/bench/coordination.txt | awk '/^[|]/ { print; t = 1; next } t && /^$/ { print; t = 0 }'

echo
echo "## Attachment upload throughput and server memory"
echo
echo "\`go test -run '^\$' -bench UploadThroughput -benchtime 1x ./e2e\` (${UPLOAD_BENCH_BYTES:-268435456,1073741824} bytes)"
go test -run '^$' -bench UploadThroughput -benchtime 1x -timeout 30m ./e2e | tee var/bench/upload.txt | awk '/^[|]/ || /RSS/ { print; t = 1; next } t && /^$/ { print; t = 0 }'
