#!/usr/bin/env bash
# CI check of `make run`: it sets up, serves, prints an MCP config, and the
# key in that config works. Runs make run on its own port, then stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

export OML_LISTEN=${OML_SMOKE_LISTEN:-127.0.0.1:18480}
log=$(mktemp)
setsid make run >"$log" 2>&1 &
pid=$!
cleanup() {
	kill -TERM -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$log"
}
trap cleanup EXIT

for _ in $(seq 1 600); do
	grep -q 'OML is serving' "$log" && break
	kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "run_smoke: make run exited" >&2; exit 1; }
	sleep 0.5
done
grep -q 'OML is serving' "$log" || { cat "$log"; echo "run_smoke: make run did not serve within 5 minutes" >&2; exit 1; }

key=$(sed -nE 's/.*"Authorization": "Bearer (oml_k_[0-9A-Z]+)".*/\1/p' "$log" | head -1)
[[ -n $key ]] || { cat "$log"; echo "run_smoke: no key in the printed MCP config" >&2; exit 1; }
out=$(OML_URL=http://$OML_LISTEN OML_API_KEY=$key bin/oml call oml_workarea_info '{"workarea":"universe.procurement"}')
grep -q '"remember"' <<<"$out" || { echo "$out"; echo "run_smoke: the printed key cannot write" >&2; exit 1; }
# The printed sign-in link signs a browser in (a session cookie), once.
link=$(grep -oE 'http://[^ ]+/sign-in/code\?code=oml_c_[0-9A-Z]+' "$log" | head -1)
[[ -n $link ]] || { cat "$log"; echo "run_smoke: no sign-in link printed" >&2; exit 1; }
jar=$(mktemp)
page=$(curl -fsS -c "$jar" "$link")
csrf=$(sed -nE 's/.*name="csrf" value="([^"]+)".*/\1/p' <<<"$page" | head -1)
code=${link##*code=}
[[ -n $csrf ]] || { rm -f "$jar"; echo "run_smoke: the sign-in link's page asks nothing" >&2; exit 1; }
headers=$(curl -fsS -o /dev/null -D - -b "$jar" -H "Origin: http://$OML_LISTEN" --data-urlencode "csrf=$csrf" --data-urlencode "code=$code" "http://$OML_LISTEN/sign-in/code")
rm -f "$jar"
grep -qi '^set-cookie: oml_session=' <<<"$headers" || { echo "run_smoke: the sign-in link did not sign in" >&2; exit 1; }
echo "run_smoke: make run served on $OML_LISTEN; its printed key works and its sign-in link signs in"
