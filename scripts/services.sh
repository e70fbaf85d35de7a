# shellcheck shell=bash
# Sourced by test.sh, run.sh and bench.sh: start the private services this
# invocation needs and stop, on exit, only the ones it started itself.
#
#   . scripts/services.sh; services_up pg [s3]

SERVICES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SERVICES_STARTED=()

services_down() {
	local s
	# make re-sends a fatal signal to its children; one arriving while we
	# clean up must not cut the clean-up short.
	trap '' INT TERM
	for s in "${SERVICES_STARTED[@]}"; do
		# services_up exported the URLs of what it started; without them the
		# scripts stop their own services instead of deferring to an
		# external one.
		env -u OML_TEST_DATABASE_URL -u OML_TEST_S3_ENDPOINT "$SERVICES_DIR/$s.sh" stop || true
	done
	SERVICES_STARTED=()
}

services_up() {
	local s
	trap services_down EXIT
	# An untrapped signal would end the shell without its EXIT trap. The
	# handlers ignore further signals before exiting: make re-sends a fatal
	# signal to its children, and a second one arriving before the EXIT
	# trap's first line would cut the clean-up short and leave a service
	# running.
	trap 'trap "" INT TERM; exit 130' INT
	trap 'trap "" INT TERM; exit 143' TERM
	for s in "$@"; do
		if ! "$SERVICES_DIR/$s.sh" status >/dev/null 2>&1; then
			"$SERVICES_DIR/$s.sh" start
			# An external service (OML_TEST_*) reports not running and is
			# never ours to stop.
			if "$SERVICES_DIR/$s.sh" status >/dev/null 2>&1; then
				SERVICES_STARTED+=("$s")
			fi
		else
			"$SERVICES_DIR/$s.sh" start
		fi
	done
	OML_TEST_DATABASE_URL=$("$SERVICES_DIR/pg.sh" url)
	export OML_TEST_DATABASE_URL
	if [[ " $* " == *" s3 "* ]]; then
		set -a
		eval "$("$SERVICES_DIR/s3.sh" env)"
		set +a
	fi
}
