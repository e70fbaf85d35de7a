# shellcheck shell=bash
# Shared helpers for scripts/pg.sh and scripts/s3.sh. Sourced, never run.
# The sourcing script sets LOG_PREFIX ("pg" / "s3") before sourcing.

: "${LOG_PREFIX:?LOG_PREFIX must be set before sourcing lib.sh}"

# Repo root = parent of the scripts directory, whatever the caller's cwd.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

say() { printf '%s: %s\n' "$LOG_PREFIX" "$*" >&2; }
warn() { printf '%s: WARNING: %s\n' "$LOG_PREFIX" "$*" >&2; }
die() {
	printf '%s: %s\n' "$LOG_PREFIX" "$*" >&2
	exit 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# Run a privileged command: directly as root, via sudo otherwise.
as_root() {
	if is_root; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root privileges for '$*' but not root and sudo is not installed"
	fi
}

# Print N random bytes as lowercase hex (URL- and shell-safe secrets).
rand_hex() {
	local n=$1
	if command -v openssl >/dev/null 2>&1; then
		openssl rand -hex "$n"
	else
		od -An -tx1 -N"$n" /dev/urandom | tr -d ' \n'
		echo
	fi
}

# Write stdin to FILE with mode 0600 from the first byte (no window where
# a secret is world-readable).
write_secret() {
	local file=$1 tmp
	tmp=$(umask 077 && mktemp "$file.XXXXXX")
	cat >"$tmp"
	chmod 0600 "$tmp"
	mv -f "$tmp" "$file"
}

# Rotate a log file once it passes 50 MiB so dev sessions do not fill the disk.
rotate_log() {
	local f=$1
	if [[ -f $f ]] && (($(stat -c %s "$f") > 50 * 1024 * 1024)); then
		mv -f "$f" "$f.1"
	fi
}

# Take an exclusive lock on var/NAME.lock on fd 9 for the rest of the script:
# parallel test packages may all run 'start' at the same moment. Children
# that outlive us (servers) must be started with 9>&- so they do not hold it.
lock() {
	mkdir -p "$ROOT/var"
	exec 9>"$ROOT/var/$1.lock"
	flock 9
}

# Hide the password part of a URL before printing it in a message.
redact_url() { sed -E 's#(://[^:/@]*:)[^@]*@#\1***@#' <<<"$1"; }
