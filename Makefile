# OML — governed memory and coordination hub for AI agents.
# `make run` and `make test` set up everything they need on a fresh
# Debian/Ubuntu machine with Go (private Postgres with pgvector, S3 for tests).

SHELL := /bin/bash
.DEFAULT_GOAL := help
GO ?= go

.PHONY: help run test build bench fuzz eval generate verify lint db/reset clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z/_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## start Postgres, migrate, bootstrap a demo tenant and serve on 127.0.0.1:8080
	@scripts/run.sh

test: ## run every test (unit, Postgres, e2e) against private Postgres and S3
	@scripts/test.sh

build: ## build oml-server and oml into bin/
	$(GO) build -o bin/ ./cmd/oml-server ./cmd/oml

bench: ## run the benchmarks and print the tables for docs/BENCHMARKS.md
	@scripts/bench.sh

fuzz: ## run every fuzz target for FUZZTIME (default 60s) and print the table for docs/BENCHMARKS.md
	@scripts/fuzz.sh

eval: ## score recall on the Cranfield collection and write the table into docs/BENCHMARKS.md
	@scripts/eval.sh

generate: ## regenerate sqlc code from sql/
	$$(scripts/tools.sh sqlc) generate

verify: ## check committed sqlc code matches sql/ (sqlc diff)
	$$(scripts/tools.sh sqlc) diff

lint: ## gofmt, go vet and staticcheck (installs staticcheck if missing)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$$(scripts/tools.sh staticcheck) ./...

db/reset: ## drop and recreate the private development database, then migrate
	@scripts/pg.sh start
	@url=$$(scripts/pg.sh url); admin=$${url/\/oml\?/\/postgres?}; \
	  psql "$$admin" -X -q -v ON_ERROR_STOP=1 -c 'DROP DATABASE IF EXISTS oml WITH (FORCE)' -c 'CREATE DATABASE oml' && \
	  OML_DATABASE_URL=$$url $(GO) run ./cmd/oml-server migrate && rm -f var/demo/keys.env

clean: ## remove build output (not var/, which holds the database and keys)
	rm -rf bin
