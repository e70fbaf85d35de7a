#!/usr/bin/env bash
# make run: everything a fresh machine needs to try OML. Starts the private
# Postgres, builds and migrates, bootstraps a demo tenant (workarea tree and
# admin/writer/reviewer/reader keys saved under var/demo, mode 0600), serves
# on OML_LISTEN (127.0.0.1:8080) and prints a ready-to-paste MCP config.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/services.sh

say() { printf 'run: %s\n' "$*" >&2; }

services_up pg
export OML_DATABASE_URL=${OML_DATABASE_URL:-$OML_TEST_DATABASE_URL}
export OML_LISTEN=${OML_LISTEN:-127.0.0.1:8080}
URL=${OML_PUBLIC_URL:-http://$OML_LISTEN}
export OML_URL=$URL

say "building"
go build -o bin/ ./cmd/oml-server ./cmd/oml

umask 077
mkdir -p var/keys var/demo var/blobs
if [[ ! -f var/keys/signing.key ]]; then
	bin/oml-server keygen --dir var/keys >/dev/null
fi
export OML_SIGNING_KEY_FILE=$PWD/var/keys/signing.key OML_MASTER_KEY_FILE=$PWD/var/keys/master.key
export OML_BLOB_STORE=${OML_BLOB_STORE:-file://$PWD/var/blobs}
# One replica, no load balancer: stop at once on Ctrl-C.
export OML_DRAIN_DELAY=${OML_DRAIN_DELAY:-0}

bin/oml-server migrate

bin/oml-server serve &
SERVER=$!
cleanup() {
	trap '' INT TERM # see services_down
	kill -TERM "$SERVER" 2>/dev/null || true # it may have stopped already
	wait "$SERVER" 2>/dev/null || true
	services_down
}
trap cleanup EXIT
for _ in $(seq 1 100); do
	curl -fs "$URL/readyz" >/dev/null 2>&1 && break
	kill -0 $SERVER 2>/dev/null || { say "oml-server exited during start-up"; exit 1; }
	sleep 0.1
done
curl -fs "$URL/readyz" >/dev/null || { say "oml-server is not ready at $URL"; exit 1; }

# The demo tenant, made once. Its keys live in var/demo/keys.env.
if [[ -f var/demo/keys.env ]] && . var/demo/keys.env && OML_API_KEY=$OML_ADMIN_KEY bin/oml whoami >/dev/null 2>&1; then
	say "demo tenant already set up (var/demo/keys.env)"
else
	say "bootstrapping the demo tenant"
	boot=$(bin/oml-server bootstrap --tenant demo) || {
		say "bootstrap failed; if the demo tenant exists but var/demo/keys.env was lost, run 'make db/reset'"
		exit 1
	}
	OML_ADMIN_KEY=$(sed -E 's/.*"admin_key":"([^"]+)".*/\1/' <<<"$boot")
	export OML_API_KEY=$OML_ADMIN_KEY
	bin/oml workarea create --parent universe --name procurement >/dev/null
	bin/oml workarea create --parent universe.procurement --name metals-crew --status committed --crew-name metals-crew >/dev/null
	bin/oml workarea create --parent universe --name research >/dev/null
	issue() { # principal role → key_id token
		bin/oml --json key issue --principal "$1" --role "$2" | tr -d '\n' | sed -E 's/.*"key_id": *"([^"]+)".*"token": *"([^"]+)".*/\1 \2/'
	}
	read -r wid OML_WRITER_KEY <<<"$(issue demo-writer writer)"
	read -r rid OML_REVIEWER_KEY <<<"$(issue demo-reviewer dreamer)"
	read -r qid OML_READER_KEY <<<"$(issue demo-reader reader)"
	for scope in reader writer; do bin/oml grant add --key "$wid" --workarea universe.procurement --scope "$scope" >/dev/null; done
	for scope in reader dreamer.review dreamer.propose; do bin/oml grant add --key "$rid" --workarea universe --scope "$scope" >/dev/null; done
	bin/oml grant add --key "$qid" --workarea universe --scope reader >/dev/null
	cat >var/demo/keys.env <<KEYS
OML_ADMIN_KEY=$OML_ADMIN_KEY
OML_WRITER_KEY=$OML_WRITER_KEY
OML_REVIEWER_KEY=$OML_REVIEWER_KEY
OML_READER_KEY=$OML_READER_KEY
KEYS
	chmod 600 var/demo/keys.env
	. var/demo/keys.env
fi

# A one-time link that signs a browser in as the demo reviewer: it carries
# a code (one use, 10 minutes), never the key.
signin=$(OML_URL=$URL OML_API_KEY=$OML_REVIEWER_KEY bin/oml web link | head -1) || signin="(no link: run bin/oml web link with the reviewer's key)"

cat <<CONFIG

OML is serving on $URL (Ctrl-C stops it).
Reviewer and inbox pages: open $URL/ in a browser. To sign in as the demo reviewer, open
  $signin
(one use, within 10 minutes; later, paste a key on the sign-in page or run bin/oml web link).
Demo keys: var/demo/keys.env (admin, writer, reviewer, reader; mode 0600).

MCP client config for the demo writer (paste into your agent's settings):
{
  "mcpServers": {
    "oml": {
      "type": "http",
      "url": "$URL/mcp",
      "headers": { "Authorization": "Bearer $OML_WRITER_KEY" }
    }
  }
}

For a harness that speaks MCP over stdio only, run the CLI as a proxy (it forwards every
request to $URL with the key):
{
  "mcpServers": {
    "oml": {
      "command": "$PWD/bin/oml",
      "args": ["mcp"],
      "env": { "OML_URL": "$URL", "OML_API_KEY": "$OML_WRITER_KEY" }
    }
  }
}

Try it:  OML_API_KEY=\$(grep WRITER var/demo/keys.env | cut -d= -f2) bin/oml call oml_workarea_info '{"workarea":"universe.procurement"}'
Review in a terminal:  OML_API_KEY=\$(grep REVIEWER var/demo/keys.env | cut -d= -f2) bin/oml review
CONFIG

wait $SERVER
