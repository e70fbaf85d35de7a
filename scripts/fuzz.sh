#!/usr/bin/env bash
# make fuzz: run every Go fuzz target for FUZZTIME each (default 60s), one
# after the other, against the private Postgres (the surface fuzzers drive
# the assembled server on a real database), and print a table of what each
# ran. A crasher is written under the target's testdata/fuzz/ and fails the
# run: commit it, fix the bug, and it stays as a regression test (make
# test runs every committed corpus). FUZZ=regexp picks targets by name.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh

services_up pg
FUZZTIME=${FUZZTIME:-60s}
mkdir -p var/fuzz
echo "| target | package | execs | new corpus entries | result |"
echo "| --- | --- | ---: | ---: | --- |"
fail=0
while read -r file name; do
	[[ -z ${FUZZ:-} || $name =~ $FUZZ ]] || continue
	pkg=./$(dirname "$file")
	log=var/fuzz/$name.log
	# go's fuzzing coordinator can itself fail at the end of a short
	# -fuzztime on a loaded machine ("context deadline exceeded", no input
	# found): that run proves nothing either way, so it runs once more. A
	# failing input is never retried.
	ok=0
	for attempt in 1 2; do
		if go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
			ok=1
			break
		fi
		if ! grep -q 'context deadline exceeded' "$log" || grep -q 'Failing input written' "$log"; then
			break
		fi
		echo "fuzz: $name: the fuzzer's own deadline failed the run (no input found); running it again" >&2
	done
	if ((ok)); then
		result=ok
	else
		result="FAILED (see $log)"
		fail=1
	fi
	last=$(grep -E '^fuzz: elapsed' "$log" | tail -1 || true)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	interesting=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	echo "| $name | ${pkg#./} | ${execs:-?} | ${interesting:-?} | $result |"
done < <(grep -rlE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' --include='*_test.go' contexts platform cmd web |
	sort | xargs grep -hoE '^func Fuzz[A-Za-z0-9_]+' /dev/null --with-filename |
	sed -E 's/:func / /')
exit $fail
