#!/usr/bin/env bash
# Installs the project's Go tools when they are missing and prints the path
# of the one asked for:  scripts/tools.sh sqlc|staticcheck
set -euo pipefail

SQLC_VERSION=v1.31.1
STATICCHECK_VERSION=v0.8.2

tool=${1:?usage: scripts/tools.sh sqlc|staticcheck}
gobin=$(go env GOBIN)
[[ -n $gobin ]] || gobin=$(go env GOPATH)/bin

case $tool in
sqlc)
	if [[ ! -x $gobin/sqlc ]] || [[ $("$gobin/sqlc" version) != "$SQLC_VERSION" ]]; then
		# Building sqlc from source takes ~9 minutes the first time; the Go
		# build cache makes later installs fast.
		echo "tools: installing sqlc $SQLC_VERSION (first build takes several minutes)" >&2
		CGO_ENABLED=1 go install "github.com/sqlc-dev/sqlc/cmd/sqlc@$SQLC_VERSION"
	fi
	echo "$gobin/sqlc"
	;;
staticcheck)
	if [[ ! -x $gobin/staticcheck ]] || ! "$gobin/staticcheck" -version | grep -qF "${STATICCHECK_VERSION#v}"; then
		echo "tools: installing staticcheck $STATICCHECK_VERSION" >&2
		go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
	fi
	echo "$gobin/staticcheck"
	;;
*)
	echo "tools: unknown tool $tool" >&2
	exit 2
	;;
esac
