#!/usr/bin/env bash
# Provides the headless browser web/'s browser tests drive (Debian's
# chromium package) and prints one shell-sourceable line for them:
#
#   OML_CHROMIUM=/abs/path/to/chromium
#
# A chromium already on PATH (or named by OML_CHROMIUM) is used as it is;
# otherwise the distribution's chromium package is installed with apt, as
# pg.sh installs PostgreSQL's build dependencies. axe-core, which the tests
# inject into the page, comes from npm with e2e/interop's clients.
set -euo pipefail
LOG_PREFIX=browser
. "$(dirname "$0")/lib.sh"

lock browser

find_chromium() {
	local c
	for c in "${OML_CHROMIUM:-}" chromium chromium-browser; do
		[[ -n $c ]] || continue
		if c=$(command -v "$c" 2>/dev/null) && "$c" --version >/dev/null 2>&1; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

if ! bin=$(find_chromium); then
	command -v apt-get >/dev/null 2>&1 || die "chromium is missing and this is not an apt-based system; install chromium or set OML_CHROMIUM"
	say "installing chromium (apt) for the browser tests"
	log=$ROOT/var/log/browser-apt.log
	mkdir -p "$(dirname "$log")"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >"$log" 2>&1 || {
		say "apt-get install failed; running apt-get update and retrying"
		as_root apt-get update -q >>"$log" 2>&1 || true
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >>"$log" 2>&1 ||
			die "apt-get install chromium failed (log: $log)"
	}
	bin=$(find_chromium) || die "chromium installed but does not run (log: $log)"
fi
printf 'OML_CHROMIUM=%q\n' "$bin"
