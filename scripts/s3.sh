#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Versity S3 Gateway (posix backend) on loopback for tests.
#
#   scripts/s3.sh start|stop|status|env
#
# State lives under var/s3/ (bucket data, generated credentials, pid, log).
# The gateway listens on 127.0.0.1:${OML_S3_PORT:-59000} only. When
# OML_TEST_S3_ENDPOINT is set nothing is started: the endpoint is only checked
# (start), printed with the caller's AWS_* settings (env) or left alone (stop).
#
# 'env' prints KEY=value lines; to use them:
#   set -a; eval "$(scripts/s3.sh env)"; set +a
set -euo pipefail

LOG_PREFIX=s3
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VGW_PKG=github.com/versity/versitygw/cmd/versitygw
VGW_VERSION=v1.8.0
PORT=${OML_S3_PORT:-59000}
REGION=us-east-1
S3VAR=$ROOT/var/s3
DATA=$S3VAR/data
SIDECAR=$S3VAR/meta
CREDS=$S3VAR/credentials
PIDFILE=$S3VAR/versitygw.pid
LOGFILE=$S3VAR/versitygw.log
METAMODE=$S3VAR/metamode
ENDPOINT=http://127.0.0.1:$PORT

[[ $PORT =~ ^[0-9]+$ ]] || die "OML_S3_PORT must be a number, got '$PORT'"

usage() {
	echo "usage: $0 start|stop|status|env" >&2
	exit 2
}

# HTTP status of URL, or 000 when nothing answers. Any real status (403 for an
# unsigned request is normal for S3) means the server is up.
http_code() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$1" 2>/dev/null || true
}

answers() { [[ $(http_code "$1") != 000 ]]; }

# ---------------------------------------------------------------- external endpoint

external_env() {
	local v
	printf 'OML_TEST_S3_ENDPOINT=%q\n' "$OML_TEST_S3_ENDPOINT"
	while IFS= read -r v; do
		printf '%s=%q\n' "$v" "${!v}"
	done < <(compgen -e | grep '^AWS_' || true)
}

# ---------------------------------------------------------------- local gateway

# versitygw lives in the first GOPATH entry's bin; install it when missing.
vgw_bin() {
	local gopath
	command -v go >/dev/null 2>&1 || die "go is not installed; it is needed to install versitygw"
	gopath=$(go env GOPATH)
	echo "${gopath%%:*}/bin/versitygw"
}

ensure_vgw() {
	VGW=$(vgw_bin)
	[[ -x $VGW ]] && return 0
	local log=$S3VAR/install.log
	say "installing versitygw $VGW_VERSION into $(dirname "$VGW") (first run; takes a minute)"
	# GOBIN pins the destination; run outside the repo so its go.mod is irrelevant.
	if ! (cd / && GOBIN=$(dirname "$VGW") go install "$VGW_PKG@$VGW_VERSION") >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "go install $VGW_PKG@$VGW_VERSION failed (log: $log)"
	fi
	[[ -x $VGW ]] || die "go install succeeded but $VGW is missing"
}

ensure_creds() {
	if [[ ! -s $CREDS ]]; then
		printf 'access_key=%s\nsecret_key=%s\n' "$(rand_hex 10)" "$(rand_hex 20)" | write_secret "$CREDS"
	fi
	chmod 0600 "$CREDS"
	ACCESS_KEY=$(sed -n 's/^access_key=//p' "$CREDS")
	SECRET_KEY=$(sed -n 's/^secret_key=//p' "$CREDS")
	[[ -n $ACCESS_KEY && -n $SECRET_KEY ]] || die "$CREDS is malformed; delete it (and restart) to regenerate"
}

# True when PID is a live versitygw serving our data dir (not a recycled pid).
is_ours() {
	local pid=$1 cmd
	[[ $pid =~ ^[0-9]+$ ]] && [[ -r /proc/$pid/cmdline ]] || return 1
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ $cmd == *versitygw* && $cmd == *" $DATA "* ]]
}

# Print the pid of our running gateway, or fail.
running_pid() {
	local pid
	[[ -f $PIDFILE ]] || return 1
	pid=$(<"$PIDFILE")
	is_ours "$pid" || return 1
	echo "$pid"
}

# Wait up to 30 s for PID to answer HTTP; fail early if it dies.
wait_ready() {
	local pid=$1 i
	for ((i = 0; i < 60; i++)); do
		answers "$ENDPOINT/" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# Start the gateway in its own session with a clean environment (stray VGW_*
# or ROOT_ACCESS_KEY_ID variables would silently change its behaviour).
# 9>&- : it must not inherit our lock descriptor.
launch() {
	local mode=$1 meta=()
	if [[ $mode == sidecar ]]; then
		mkdir -p "$SIDECAR"
		meta=(--sidecar "$SIDECAR")
	fi
	setsid nohup env -i PATH="$PATH" HOME="${HOME:-/}" \
		ROOT_ACCESS_KEY="$ACCESS_KEY" ROOT_SECRET_KEY="$SECRET_KEY" \
		"$VGW" --port "127.0.0.1:$PORT" --region "$REGION" --quiet \
		posix "${meta[@]}" "$DATA" \
		</dev/null >>"$LOGFILE" 2>&1 9>&- &
	echo $! >"$PIDFILE"
}

start_failed() {
	local pid=$1 logsize=$2 reason
	if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
	rm -f "$PIDFILE"
	echo "---- last 30 lines of $LOGFILE ----" >&2
	tail -n 30 "$LOGFILE" >&2
	reason=$(tail -c +"$((logsize + 1))" "$LOGFILE" | grep -v '^[[:space:]]*$' | tail -n 1 || true)
	die "versitygw did not start: ${reason:-no answer on $ENDPOINT within 30 s} (log: $LOGFILE)"
}

local_start() {
	mkdir -p "$S3VAR" "$DATA"
	chmod 0700 "$S3VAR"
	ensure_vgw
	ensure_creds

	local pid
	if pid=$(running_pid); then
		wait_ready "$pid" || die "versitygw (pid $pid) is running but does not answer on $ENDPOINT; run '$0 stop' and start again"
		say "already running on $ENDPOINT (pid $pid)"
		return 0
	fi
	rm -f "$PIDFILE"
	if answers "$ENDPOINT/"; then
		die "something else already answers on $ENDPOINT; stop it or set OML_S3_PORT"
	fi

	# The posix backend keeps object metadata in xattrs and refuses to start on a
	# filesystem without them; then we fall back to a sidecar metadata dir. The
	# choice is remembered so existing data is always read the same way.
	local mode logsize
	mode=$(cat "$METAMODE" 2>/dev/null || echo xattr)
	rotate_log "$LOGFILE"
	logsize=$(stat -c %s "$LOGFILE" 2>/dev/null || echo 0)
	say "starting versitygw on $ENDPOINT (data $DATA, metadata: $mode)"
	launch "$mode"
	pid=$(<"$PIDFILE")
	if ! wait_ready "$pid"; then
		if [[ $mode == xattr ]] && ! kill -0 "$pid" 2>/dev/null &&
			tail -c +"$((logsize + 1))" "$LOGFILE" | grep -q 'xattr check failed'; then
			say "filesystem under $DATA has no xattr support; using sidecar metadata in $SIDECAR"
			mode=sidecar
			logsize=$(stat -c %s "$LOGFILE")
			launch "$mode"
			pid=$(<"$PIDFILE")
			wait_ready "$pid" || start_failed "$pid" "$logsize"
		else
			start_failed "$pid" "$logsize"
		fi
	fi
	is_ours "$pid" || start_failed "$pid" "$logsize"
	echo "$mode" >"$METAMODE"
	say "running on $ENDPOINT (pid $pid)"
}

local_stop() {
	local pid i
	if pid=$(running_pid); then
		kill "$pid"
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			warn "versitygw (pid $pid) ignored SIGTERM for 10 s; killing it"
			kill -9 "$pid" 2>/dev/null || true
		fi
		rm -f "$PIDFILE"
		say "stopped"
	else
		rm -f "$PIDFILE"
		say "not running"
	fi
}

local_env() {
	[[ -s $CREDS ]] || die "no credentials yet; run: $0 start"
	ensure_creds
	running_pid >/dev/null || warn "versitygw is not running; run: $0 start"
	printf 'OML_TEST_S3_ENDPOINT=%s\n' "$ENDPOINT"
	printf 'AWS_ACCESS_KEY_ID=%s\n' "$ACCESS_KEY"
	printf 'AWS_SECRET_ACCESS_KEY=%s\n' "$SECRET_KEY"
	printf 'AWS_REGION=%s\n' "$REGION"
}

# ---------------------------------------------------------------- main

main() {
	[[ $# -eq 1 ]] || usage
	local external=${OML_TEST_S3_ENDPOINT:-}
	case $1 in
	start)
		if [[ -n $external ]]; then
			answers "$external" || die "OML_TEST_S3_ENDPOINT ($external) does not answer HTTP"
			say "using external S3 endpoint $external"
		else
			lock s3
			local_start
		fi
		;;
	stop)
		if [[ -n $external ]]; then
			say "OML_TEST_S3_ENDPOINT is set; nothing of ours to stop"
		else
			lock s3
			local_stop
		fi
		;;
	status)
		if [[ -n $external ]]; then
			if answers "$external"; then echo "running (external)"; else
				echo "unreachable (external)"
				exit 1
			fi
		elif running_pid >/dev/null && answers "$ENDPOINT/"; then
			echo running
		else
			echo stopped
			exit 1
		fi
		;;
	env)
		if [[ -n $external ]]; then external_env; else local_env; fi
		;;
	*) usage ;;
	esac
}

main "$@"
