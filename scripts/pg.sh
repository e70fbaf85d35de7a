#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Private PostgreSQL 15 cluster with pgvector and ltree for development and tests.
#
#   scripts/pg.sh start|stop|status|url|socket-url
#
# State lives under var/pg/ (data, socket dir, log, generated password). Run
# as root, postgres runs as another user; when that user cannot reach var/
# (a checkout in a mode-0700 home directory, say), the state lives in
# /var/lib/oml/pg-<hash of the checkout's path> instead and var/pg is a link
# to it. The server listens on 127.0.0.1:${OML_PG_PORT:-55432} and on a unix
# socket in var/pg/run only. When OML_TEST_DATABASE_URL is set nothing is
# started: the given server is only checked (start), printed (url) or left
# alone (stop). socket-url prints a URL for the unix socket: on the same
# machine it saves the TCP stack's work on every round trip (see
# docs/OPERATIONS.md, "Connecting on the same machine").
#
# Huge pages: the cluster always has huge_pages = try (it uses what the
# administrator set aside). OML_PG_HUGE_PAGES=on (make bench) also reserves,
# as root, the pages its shared buffers need while it runs, which changes
# vm.nr_hugepages for the whole machine; OML_PG_HUGE_PAGES=off turns them off.
set -euo pipefail

LOG_PREFIX=pg
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_MAJOR=15
PGBIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PGBIN/pg_config
PORT=${OML_PG_PORT:-55432}
HUGE=${OML_PG_HUGE_PAGES:-try}
HANDLE=$ROOT/var/pg
# Where the state goes when the postgres user cannot reach var/: a system
# state directory, not /var/tmp, which systemd's default tmpfiles rule
# empties of files unused for 30 days and where anyone could create the
# name first.
STATE_BASE=/var/lib/oml
STATE_DIR=$STATE_BASE/pg-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)
BUILD=$ROOT/var/build
SUPERUSER=oml
DBNAME=oml

# Where pgvector's source comes from on Debian 12, which has no binary package:
# the next release (trixie) ships pgvector 0.8.x, which builds fine against 15.
SRC_MIRROR=http://deb.debian.org/debian
SRC_SUITE=trixie
# bookworm's debian-archive-keyring already carries the trixie archive keys
# (debian-archive-trixie-*.gpg), so the trixie Release file verifies normally.
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

[[ $PORT =~ ^[0-9]+$ ]] || die "OML_PG_PORT must be a number, got '$PORT'"
[[ $HUGE == on || $HUGE == off || $HUGE == try ]] || die "OML_PG_HUGE_PAGES must be on, off or try, got '$HUGE'"

# ---------------------------------------------------------------- where the state lives

# set_pgvar DIR: the cluster's state directory and the paths inside it.
set_pgvar() {
	PGVAR=$1
	DATA=$PGVAR/data
	SOCKDIR=$PGVAR/run
	LOGFILE=$PGVAR/postgres.log
	PWFILE=$PGVAR/password
	HUGE_ADDED=$PGVAR/hugepages.added
	OWNER_FILE=$PGVAR/checkout
}

# The checkout a state directory outside var/ belongs to (its 'checkout' file).
state_owner() { cat "$1/checkout" 2>/dev/null || true; }

# var/pg is the handle: a directory, or a link to this checkout's directory
# under $STATE_BASE. Without var/pg, root still finds this checkout's state
# directory there (var/ was deleted, not the cluster); start links it again.
locate_pgvar() {
	local target owner
	if [[ -L $HANDLE ]]; then
		target=$(readlink "$HANDLE")
		[[ $target == /* ]] || target=$ROOT/var/$target
		# Root chowns what var/pg names: only a cluster directory of ours,
		# never whatever a link in a writable checkout points at.
		if [[ ! $target =~ ^$STATE_BASE/pg-[0-9a-f]{12}$ ]]; then
			die "var/pg links to $target, which is not a cluster directory ($STATE_BASE/pg-<hash>); delete var/pg and start again"
		fi
		owner=$(state_owner "$target")
		if [[ -n $owner && $owner != "$ROOT" ]]; then
			die "var/pg links to $target, the cluster of the checkout $owner, and two checkouts must not share one; delete var/pg (this checkout then gets its own) or, if $owner was moved here, write $ROOT into $target/checkout"
		fi
		set_pgvar "$target"
	elif [[ ! -e $HANDLE ]] && is_root && [[ $(state_owner "$STATE_DIR") == "$ROOT" ]]; then
		set_pgvar "$STATE_DIR"
	else
		set_pgvar "$HANDLE"
	fi
}

# What to delete to start over.
state_desc() {
	if [[ $PGVAR == "$HANDLE" ]]; then echo "$HANDLE"; else echo "$PGVAR and $HANDLE"; fi
}

# At the first start as root: keep the state in var/pg when the postgres user
# can reach it, else in $STATE_DIR with var/pg linking to it. Unix socket
# paths are limited to 107 bytes, so a checkout too deep for one moves too.
place_cluster() {
	[[ -e $HANDLE || -L $HANDLE ]] && return 0
	is_root || return 0
	local why="" owner
	mkdir -p "$ROOT/var"
	if [[ $PGVAR != "$HANDLE" ]]; then
		say "using this checkout's cluster in $PGVAR again (var/pg links to it)"
	else
		if ! runuser -u "$PGUSER_OS" -- test -x "$ROOT/var" 2>/dev/null; then
			why="user $PGUSER_OS cannot reach $ROOT/var"
		elif ((${#HANDLE} + 24 > 107)); then
			why="$HANDLE is too long a path for a unix socket"
		fi
		[[ -n $why ]] || return 0
		owner=$(state_owner "$STATE_DIR")
		if [[ -n $owner && $owner != "$ROOT" ]]; then
			die "$why, and $STATE_DIR belongs to the checkout $owner; delete it if that checkout is gone"
		fi
		say "$why; keeping the cluster in $STATE_DIR (var/pg links to it)"
	fi
	# The base must be searchable by the postgres user whatever root's umask.
	mkdir -p "$STATE_BASE" "$STATE_DIR"
	chmod 0755 "$STATE_BASE"
	printf '%s\n' "$ROOT" >"$STATE_DIR/checkout"
	ln -s "$STATE_DIR" "$HANDLE"
	set_pgvar "$STATE_DIR"
	resolve_pg_user create
}

usage() {
	echo "usage: $0 start|stop|status|url|socket-url" >&2
	exit 2
}

# ---------------------------------------------------------------- external server

psql_bin() {
	if command -v psql >/dev/null 2>&1; then command -v psql; else echo "$PGBIN/psql"; fi
}

ext_psql() {
	PGOPTIONS='-c client_min_messages=warning' \
		"$(psql_bin)" "$OML_TEST_DATABASE_URL" -X -q -At -v ON_ERROR_STOP=1 -c "$1"
}

external_start() {
	local shown out missing
	shown=$(redact_url "$OML_TEST_DATABASE_URL")
	if ! out=$(ext_psql 'select 1' 2>&1); then
		die "OML_TEST_DATABASE_URL ($shown) is not reachable: $out"
	fi
	missing=$(ext_psql "select coalesce(string_agg(e, ', '), '')
		from unnest(array['vector','ltree']) e
		where e not in (select name from pg_available_extensions)")
	if [[ -n $missing ]]; then
		die "OML_TEST_DATABASE_URL ($shown) cannot CREATE EXTENSION $missing: not available on that server (install pgvector / postgresql-contrib there)"
	fi
	say "using external database $shown (vector and ltree available)"
}

# ---------------------------------------------------------------- extensions

pkg_installed() {
	# shellcheck disable=SC2016 # ${Status} is a dpkg-query format, not a shell expansion
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

apt_install() {
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

ensure_build_deps() {
	local log=$1 p missing=()
	for p in "postgresql-server-dev-$PG_MAJOR" dpkg-dev build-essential; do
		pkg_installed "$p" || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	say "installing build dependencies: ${missing[*]}"
	if ! apt_install "${missing[@]}" >>"$log" 2>&1; then
		# Stale package lists are the usual cause; refresh only when needed.
		say "apt-get install failed; running apt-get update and retrying"
		as_root apt-get update -q >>"$log" 2>&1 || true
		if ! apt_install "${missing[@]}" >>"$log" 2>&1; then
			tail -n 30 "$log" >&2
			die "could not install ${missing[*]} (log: $log)"
		fi
	fi
}

# Fetch Debian's pgvector source package through a private apt configuration
# (own sources list, lists and cache under var/build/apt) so /etc/apt and the
# system's package lists are never touched, then build and install it.
build_pgvector() {
	local log=$BUILD/pgvector-build.log apt=$BUILD/apt src=$BUILD/pgvector
	local signed="" out dir dsc
	command -v apt-get >/dev/null 2>&1 ||
		die "pgvector is missing and this is not an apt-based system; install pgvector for PostgreSQL $PG_MAJOR by hand"
	mkdir -p "$BUILD"
	: >"$log"
	ensure_build_deps "$log"

	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/sources.list.d" "$apt/etc/preferences.d"
	[[ -f $KEYRING ]] && signed="[signed-by=$KEYRING] "
	printf 'deb-src %s%s %s main\n' "$signed" "$SRC_MIRROR" "$SRC_SUITE" >"$apt/etc/sources.list"
	local aptopts=(
		-o "Dir::Etc::SourceList=$apt/etc/sources.list"
		-o "Dir::Etc::SourceParts=$apt/etc/sources.list.d"
		-o "Dir::Etc::Preferences=$apt/etc/preferences"
		-o "Dir::Etc::PreferencesParts=$apt/etc/preferences.d"
		-o "Dir::State::Lists=$apt/lists"
		-o "Dir::Cache=$apt/cache"
		-o "Acquire::Languages=none"
	)

	say "fetching $SRC_SUITE source index from $SRC_MIRROR (private apt state in $apt)"
	if ! out=$(apt-get "${aptopts[@]}" update 2>&1); then
		printf '%s\n' "$out" >>"$log"
		tail -n 20 <<<"$out" >&2
		if grep -qE 'NO_PUBKEY|EXPKEYSIG|KEYEXPIRED|is not signed|GPG error|signatures were invalid' <<<"$out"; then
			# Never build and install unauthenticated source as root.
			die "cannot verify the $SRC_SUITE archive signature with $KEYRING; update debian-archive-keyring (apt-get install debian-archive-keyring) and retry (log: $log)"
		fi
		die "apt-get update for $SRC_SUITE sources failed (network? log: $log)"
	fi
	printf '%s\n' "$out" >>"$log"

	rm -rf "$src"
	mkdir -p "$src"
	# apt fetches as the unprivileged _apt user when run as root; let it write here.
	if is_root && id _apt >/dev/null 2>&1; then chown _apt "$src"; fi
	say "downloading and unpacking the pgvector source package"
	if ! (cd "$src" && apt-get "${aptopts[@]}" source pgvector) >>"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "apt-get source pgvector failed (log: $log)"
	fi
	dsc=$(find "$src" -maxdepth 1 -name 'pgvector_*.dsc' -print -quit)
	dir=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' -print -quit)
	[[ -n $dir ]] || die "no unpacked pgvector source under $src (log: $log)"

	say "building $(basename "${dsc:-$dir}") against PostgreSQL $PG_MAJOR"
	if ! make -C "$dir" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "pgvector build failed (log: $log)"
	fi
	if ! as_root make -C "$dir" install PG_CONFIG="$PG_CONFIG" >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "pgvector install failed (log: $log)"
	fi
}

ensure_extensions_installed() {
	local extdir
	extdir="$("$PG_CONFIG" --sharedir)/extension"
	[[ -f $extdir/ltree.control ]] ||
		die "ltree is missing ($extdir/ltree.control); it ships with postgresql-$PG_MAJOR on Debian (postgresql-contrib elsewhere) — reinstall that package"
	[[ -f $extdir/vector.control ]] && return 0

	say "pgvector is not installed for PostgreSQL $PG_MAJOR"
	# Ubuntu and the PGDG repository have a binary package; Debian 12 does not.
	if command -v apt-get >/dev/null 2>&1 &&
		apt_install "postgresql-$PG_MAJOR-pgvector" >/dev/null 2>&1; then
		say "installed postgresql-$PG_MAJOR-pgvector from apt"
	else
		say "no postgresql-$PG_MAJOR-pgvector package available; building from Debian's source package"
		build_pgvector
	fi
	[[ -f $extdir/vector.control ]] || die "pgvector install finished but $extdir/vector.control is missing"
	say "pgvector $(sed -nE "s/^default_version *= *'([^']*)'.*/\1/p" "$extdir/vector.control") installed"
}

# ---------------------------------------------------------------- cluster

# The OS user that owns and runs the cluster. Postgres refuses to run as root,
# so root uses the distribution's 'postgres' user (or a private system user).
resolve_pg_user() {
	local create=$1
	if ! is_root; then
		PGUSER_OS=$(id -un)
	elif [[ -d $DATA ]]; then
		PGUSER_OS=$(stat -c %U "$DATA") # keep whoever initialised it
	elif id postgres >/dev/null 2>&1; then
		PGUSER_OS=postgres
	else
		PGUSER_OS=omlpg
		if ! id omlpg >/dev/null 2>&1 && [[ $create == create ]]; then
			say "creating system user omlpg to run postgres"
			useradd --system --user-group --no-create-home --home-dir "$PGVAR" --shell /usr/sbin/nologin omlpg
		fi
	fi
	[[ $PGUSER_OS != root ]] || die "$DATA is owned by root; postgres cannot run as root — delete $(state_desc) and start again"
}

# Run a command as the cluster's OS user (from a directory it can read).
as_pg() {
	if is_root; then
		(cd "$PGVAR" && runuser -u "$PGUSER_OS" -- "$@")
	else
		"$@"
	fi
}

is_running() {
	[[ -f $DATA/PG_VERSION ]] || return 1
	resolve_pg_user nocreate
	id "$PGUSER_OS" >/dev/null 2>&1 || return 1
	as_pg "$PGBIN/pg_ctl" status -D "$DATA" >/dev/null 2>&1
}

# Port of the running server (line 4 of postmaster.pid), else the configured one.
live_port() {
	local p=""
	if is_running; then p=$(sed -n 4p "$DATA/postmaster.pid" 2>/dev/null || true); fi
	echo "${p:-$PORT}"
}

prepare_dirs() {
	local fix
	if is_root; then
		fix="stop it, delete $HANDLE and start again: the cluster then lives in $STATE_BASE"
	else
		fix="move the checkout"
	fi
	if [[ $PGVAR != "$HANDLE" ]]; then
		# A state directory outside var/ (deleted and made again, maybe).
		mkdir -p "$STATE_BASE"
		chmod 0755 "$STATE_BASE"
		mkdir -p "$PGVAR"
		[[ -s $OWNER_FILE ]] || printf '%s\n' "$ROOT" >"$OWNER_FILE"
	fi
	mkdir -p "$PGVAR" "$SOCKDIR"
	if is_root && [[ $(stat -c %U "$PGVAR") != "$PGUSER_OS" || $(stat -c %U "$SOCKDIR") != "$PGUSER_OS" ]]; then
		chown -R "$PGUSER_OS": "$PGVAR"
	fi
	chmod 0700 "$PGVAR" "$SOCKDIR"
	as_pg test -x "$PGVAR" -a -w "$PGVAR" ||
		die "user $PGUSER_OS cannot reach $PGVAR (a parent directory is not searchable by it); $fix"
	# Unix socket paths are limited to 107 bytes.
	((${#SOCKDIR} + 20 < 108)) || die "socket path $SOCKDIR is too long for a unix socket; $fix"
}

ensure_password() {
	if [[ ! -s $PWFILE ]]; then
		[[ -f $DATA/PG_VERSION ]] &&
			die "cluster exists in $DATA but $PWFILE is gone, so its password is unknown; delete $(state_desc) (stop the server first) to start over"
		rand_hex 16 | write_secret "$PWFILE"
	fi
	if is_root; then chown "$PGUSER_OS": "$PWFILE"; fi
	chmod 0600 "$PWFILE"
}

init_cluster() {
	[[ -f $DATA/PG_VERSION ]] && return 0
	if [[ -d $DATA ]] && [[ -n $(ls -A "$DATA") ]]; then
		die "$DATA exists but holds no cluster (no PG_VERSION); remove it and start again"
	fi
	say "initialising cluster in $DATA (superuser $SUPERUSER)"
	if ! as_pg "$PGBIN/initdb" -D "$DATA" -U "$SUPERUSER" --pwfile="$PWFILE" \
		--auth-local=scram-sha-256 --auth-host=scram-sha-256 \
		-E UTF8 --locale=C >"$PGVAR/initdb.log" 2>&1; then
		tail -n 30 "$PGVAR/initdb.log" >&2
		die "initdb failed (log: $PGVAR/initdb.log)"
	fi
	# Our settings live in oml.conf, rewritten on each start; postgresql.conf stays stock.
	printf "\ninclude_if_exists = 'oml.conf'\n" >>"$DATA/postgresql.conf"
}

# shared_buffers: a quarter of the machine's memory, between 256 MB and
# 2 GB, so the recall benchmark's 100k entries and their HNSW index stay
# in Postgres's own cache (OML_PG_SHARED_BUFFERS overrides, e.g. 4GB for
# the 1M run).
shared_buffers() {
	if [[ -n ${OML_PG_SHARED_BUFFERS:-} ]]; then
		echo "$OML_PG_SHARED_BUFFERS"
		return
	fi
	local kb mb
	kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
	mb=$((kb / 4 / 1024))
	((mb < 256)) && mb=256
	((mb > 2048)) && mb=2048
	echo "${mb}MB"
}

write_conf() {
	local conf=$DATA/oml.conf
	cat >"$conf" <<EOF
# Written by scripts/pg.sh on every start; edits here are overwritten.
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '${SOCKDIR//\'/\'\'}'
max_connections = 200
shared_buffers = $(shared_buffers)
# fsync stays on, so the cluster survives crashes. synchronous_commit = off
# may lose the last few hundred ms of commits on an OS crash, never corrupts;
# fine for a dev/test cluster and much faster for many small transactions.
synchronous_commit = off
# pgvector 0.8.0 has a bug in parallel HNSW index builds: build serially.
max_parallel_maintenance_workers = 0
# Shared buffers in 2 MB pages when the kernel has them set aside (by the
# administrator, or by reserve_huge_pages with OML_PG_HUGE_PAGES=on);
# otherwise ordinary pages.
huge_pages = $([[ $HUGE == off ]] && echo off || echo try)
EOF
	if is_root; then chown "$PGUSER_OS": "$conf"; fi
	grep -q "^include_if_exists = 'oml.conf'" "$DATA/postgresql.conf" ||
		printf "\ninclude_if_exists = 'oml.conf'\n" >>"$DATA/postgresql.conf"
}

local_psql() {
	local port=$1 db=$2
	shift 2
	PGPASSWORD=$(<"$PWFILE") PGOPTIONS='-c client_min_messages=warning' \
		"$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "$SOCKDIR" -p "$port" -U "$SUPERUSER" -d "$db" "$@"
}

# Extensions go into template1 so every database created later (the tests
# create one per run) has them, and into 'oml', which may predate them.
setup_databases() {
	local port=$1 ext="CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS ltree;"
	local_psql "$port" template1 -c "$ext" >/dev/null
	if [[ -z $(local_psql "$port" template1 -c "SELECT 1 FROM pg_database WHERE datname = '$DBNAME'") ]]; then
		say "creating database $DBNAME"
		local_psql "$port" template1 -c "CREATE DATABASE $DBNAME" >/dev/null
	fi
	local_psql "$port" "$DBNAME" -c "$ext" >/dev/null
}

# Huge pages for the shared buffers. On a virtual machine every buffer a
# backend touches in 4 KB pages costs a two-level page walk; with a 2 GB
# buffer pool that made HNSW walks and exact scans 2–4× slower than in 2 MB
# pages (docs/BENCHMARKS.md). vm.nr_hugepages is a setting of the
# whole machine, so only OML_PG_HUGE_PAGES=on (make bench) touches it: as
# root, reserve what the cluster needs (Postgres computes it:
# shared_memory_size_in_huge_pages) for as long as it runs; local_stop gives
# back what was added. Otherwise nothing is reserved, and huge_pages = try
# uses whatever the administrator set aside.
reserve_huge_pages() {
	[[ $HUGE == on ]] || return 0
	if ! is_root || [[ ! -w /proc/sys/vm/nr_hugepages ]]; then
		warn "OML_PG_HUGE_PAGES=on, but only root can reserve huge pages; postgres uses those already set aside, if any"
		return 0
	fi
	local need free rsvd total want got added
	# Postgres computes the need only while the cluster is down, as here.
	need=$(as_pg "$PGBIN/postgres" -D "$DATA" -C shared_memory_size_in_huge_pages 2>/dev/null) || return 0
	[[ $need =~ ^[0-9]+$ ]] && ((need > 0)) || return 0
	# Free pages other mappings have reserved but not touched are not free.
	free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
	rsvd=$(awk '/^HugePages_Rsvd:/ {print $2}' /proc/meminfo)
	free=$((free - rsvd))
	((free < need)) || return 0
	total=$(</proc/sys/vm/nr_hugepages)
	want=$((total + need - free))
	{ echo "$want" >/proc/sys/vm/nr_hugepages; } 2>/dev/null || true
	got=$(</proc/sys/vm/nr_hugepages)
	added=$(huge_pages_added)
	echo "$(</proc/sys/kernel/random/boot_id) $((added + got - total))" >"$HUGE_ADDED"
	if ((got < want)); then
		warn "reserved $((got - total)) of the $((need - free)) more 2 MB pages the shared buffers need (memory too fragmented?); postgres uses ordinary pages"
	else
		say "reserved $((got - total)) huge pages for the shared buffers"
	fi
}

# huge_pages_added prints how many huge pages this script has added since the
# machine booted (a count from before a reboot is void: the pool was reset).
huge_pages_added() {
	local boot count
	if [[ -f $HUGE_ADDED ]]; then read -r boot count <"$HUGE_ADDED" || true; fi
	if [[ ${boot:-} == "$(</proc/sys/kernel/random/boot_id)" && ${count:-} =~ ^[0-9]+$ ]]; then
		echo "$count"
	else
		echo 0
	fi
}

release_huge_pages() {
	[[ -f $HUGE_ADDED ]] && is_root || return 0
	local added total
	added=$(huge_pages_added)
	total=$(</proc/sys/vm/nr_hugepages)
	{ echo $((total > added ? total - added : 0)) >/proc/sys/vm/nr_hugepages; } 2>/dev/null || true
	rm -f "$HUGE_ADDED"
}

local_start() {
	[[ -x $PGBIN/initdb ]] || die "PostgreSQL $PG_MAJOR server not found in $PGBIN (apt-get install postgresql-$PG_MAJOR)"
	ensure_extensions_installed
	resolve_pg_user create
	place_cluster
	prepare_dirs
	ensure_password
	init_cluster

	local port out
	if is_running; then
		port=$(live_port)
		[[ $port == "$PORT" ]] || warn "already running on port $port, not $PORT; stop and start to change it"
		say "already running on 127.0.0.1:$port (data $DATA)"
		[[ $HUGE != on ]] || say "OML_PG_HUGE_PAGES=on reserves huge pages only when the cluster starts; stop it first to have them"
	else
		write_conf
		reserve_huge_pages
		rotate_log "$LOGFILE"
		say "starting postgres on 127.0.0.1:$PORT"
		local logsize=0 reason
		[[ -f $LOGFILE ]] && logsize=$(stat -c %s "$LOGFILE")
		# 9>&- : the postmaster must not inherit our lock file descriptor.
		if ! out=$(as_pg "$PGBIN/pg_ctl" start -D "$DATA" -w -t 60 -l "$LOGFILE" 2>&1 9>&-); then
			reason=""
			if [[ -f $LOGFILE ]]; then
				echo "---- last 30 lines of $LOGFILE ----" >&2
				tail -n 30 "$LOGFILE" >&2
				# The most telling line is the first FATAL/PANIC of this attempt.
				reason=$(tail -c +"$((logsize + 1))" "$LOGFILE" | grep -m1 -E 'FATAL|PANIC' | sed -E 's/^.*(FATAL|PANIC): *//' || true)
			fi
			release_huge_pages
			die "postgres did not start: ${reason:-$(tail -n 1 <<<"$out")} (log: $LOGFILE)"
		fi
		port=$PORT
	fi
	setup_databases "$port"
	say "running on 127.0.0.1:$port; databases template1 and $DBNAME have vector and ltree"
}

local_stop() {
	if is_running; then
		as_pg "$PGBIN/pg_ctl" stop -D "$DATA" -m fast -w -t 60 >/dev/null
		say "stopped"
	else
		say "not running"
	fi
	release_huge_pages
}

# query_escape S: S percent-encoded byte by byte for a URL's query value
# (unreserved characters and '/' kept).
query_escape() {
	local LC_ALL=C s=$1 out="" c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~/-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s' "$out"
}

# ---------------------------------------------------------------- main

main() {
	[[ $# -eq 1 ]] || usage
	local external=${OML_TEST_DATABASE_URL:-}
	# start and stop locate it again under the lock: a parallel start may
	# have placed it meanwhile.
	[[ -n $external ]] || locate_pgvar
	case $1 in
	start)
		if [[ -n $external ]]; then external_start; else
			lock pg
			locate_pgvar
			local_start
		fi
		;;
	stop)
		if [[ -n $external ]]; then
			say "OML_TEST_DATABASE_URL is set; nothing of ours to stop"
		else
			lock pg
			locate_pgvar
			local_stop
		fi
		;;
	status)
		if [[ -n $external ]]; then
			if ext_psql 'select 1' >/dev/null 2>&1; then echo "running (external)"; else
				echo "unreachable (external)"
				exit 1
			fi
		elif is_running; then echo running; else
			echo stopped
			exit 1
		fi
		;;
	url)
		if [[ -n $external ]]; then
			echo "$external"
		else
			[[ -s $PWFILE ]] || die "no cluster yet; run: $0 start"
			echo "postgres://$SUPERUSER:$(<"$PWFILE")@127.0.0.1:$(live_port)/$DBNAME?sslmode=disable"
		fi
		;;
	socket-url)
		[[ -z $external ]] || die "OML_TEST_DATABASE_URL is set: that server's socket is not ours to name"
		[[ -s $PWFILE ]] || die "no cluster yet; run: $0 start"
		local port
		port=$(live_port)
		[[ -S $SOCKDIR/.s.PGSQL.$port ]] || die "no socket at $SOCKDIR/.s.PGSQL.$port; is the cluster running? ($0 start)"
		echo "postgres://$SUPERUSER:$(<"$PWFILE")@/$DBNAME?host=$(query_escape "$SOCKDIR")&port=$port&sslmode=disable"
		;;
	*) usage ;;
	esac
}

main "$@"
