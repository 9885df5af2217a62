# memvault — the two commands that matter: `make demo` and `make test`.
GO        ?= go
PKGS      ?= ./...
# Every Go module of the repository (the library and the CLI); each is
# vetted, tested and benchmarked in its own directory, since ./... stops at
# a nested go.mod.
MODULES   ?= $(patsubst %/go.mod,%,$(shell git ls-files '*go.mod' 2>/dev/null | sed 's|^go.mod$$|./go.mod|' || echo ./go.mod))
# GOWORK=off: each module builds and tests with its own go.mod, as its
# users get it (go.work is for development only).
EACH       = set -e; for m in $(MODULES); do echo "== module $$m"; (cd $$m && GOWORK=off $(1)); done
FUZZTIME  ?= 5s
# The race detector instruments memvault and every dependency except
# SQLite's machine-translated C and its libc (modernc.org/sqlite/lib,
# modernc.org/libc/...): those would be checked for races inside SQLite's own
# locking, and -race's implied checkptr flags their deliberate pointer
# arithmetic on every page access. Instrumenting them made the SQLite suites
# 3-4x slower and tested modernc, not memvault. memvault's code and the
# driver's Go glue (modernc.org/sqlite, which copies the arguments memvault
# passes) keep both the race detector and checkptr. (In a -gcflags list the
# last pattern matching a package wins.)
RACEFLAGS ?= -race -gcflags='modernc.org/sqlite/lib=-d=checkptr=0 -race=false' -gcflags='modernc.org/libc/...=-d=checkptr=0 -race=false'
BENCHTIME ?= 1s

.PHONY: all setup demo example-adk example-langchaingo example-eino example-trpcagent test vet fmt-check staticcheck unit fuzz bench bench-pg bench-mongo lint build clean release-check

all: build

## setup: install PostgreSQL 15 + pgvector (for the Postgres tests); idempotent.
setup:
	bash scripts/install-deps.sh

## demo: the main job — a support-agent session on the embedded default
## (SQLite file, offline embedder, encryption on). No server needed. Built
## from the CLI's own module (GOWORK=off), so the first run resolves only
## what the CLI needs, not every adapter and example of the workspace.
demo:
	cd cmd/memvault && GOWORK=off $(GO) run . demo

## example-adk: a Google ADK agent whose sessions live in memvault (encrypted
## SQLite), run twice as two processes would; offline (scripted model).
example-adk:
	cd examples/adk && GOWORK=off $(GO) run .

## example-langchaingo: a LangChainGo conversation chain whose memory and
## documents live in memvault (encrypted SQLite), across a restart; offline.
example-langchaingo:
	cd examples/langchaingo && GOWORK=off $(GO) run .

## example-eino: a CloudWeGo Eino graph interrupted in one process and
## resumed in the next, its checkpoints in memvault (encrypted SQLite).
example-eino:
	cd examples/eino && GOWORK=off $(GO) run .

## example-trpcagent: a tRPC-Agent-Go graph interrupted in one process and
## resumed in the next, its checkpoints in memvault (encrypted SQLite).
example-trpcagent:
	cd examples/trpcagent && GOWORK=off $(GO) run .

## test: install what is needed, then vet, format check, staticcheck, race tests, short fuzzing.
test: setup vet fmt-check staticcheck unit fuzz

vet:
	@$(call EACH,$(GO) vet $(PKGS))

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## unit: race tests of every module (or of MODULES, when given), MODULE_JOBS
## (default 2) modules at a time, longest first: the PostgreSQL, MongoDB and Redis suites spend much
## of their time waiting on their servers, which another module's tests use.
unit:
	@GO=$(GO) MODULES="$(if $(filter command% environment%,$(origin MODULES)),$(MODULES))" bash scripts/test-modules.sh $(RACEFLAGS) -count=1 -timeout 60m $(PKGS)

fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## bench: Go benchmarks of every package (allocations reported).
bench:
	@$(call EACH,$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS))

## bench-pg: memvault bench checkpointer (+ LangGraph.js when interop/js is
## installed) and bench store on a throwaway fsync-on PostgreSQL cluster;
## CP_ARGS / STORE_ARGS pass flags (e.g. STORE_ARGS="--dims 1536 --items 100000").
bench-pg:
	bash scripts/bench-pg.sh

## bench-mongo: memvault bench checkpointer on MongoDB — FerretDB on a
## throwaway PostgreSQL (its SQLite backend, the tests', is the bottleneck)
## — with LangGraph.js's MongoDBSaver when its node_modules are installed
## (npm ci in backends/mongodb/mongosaver/testdata/js); CP_ARGS passes flags.
bench-mongo:
	bash scripts/bench-mongo.sh

## release-check: build every module as its users will get it at VERSION
## (no replace directives, memvault modules served at VERSION by a local
## proxy), then `go install …/cmd/memvault@VERSION`; see README "Releasing".
release-check:
	bash scripts/release-check.sh $(VERSION)

## staticcheck: every module, clean (installed by `make setup`).
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $$($(GO) env GOPATH)/bin/staticcheck)
staticcheck:
	@$(call EACH,$(STATICCHECK) $(PKGS))

## lint: vet + gofmt + staticcheck.
lint: vet fmt-check staticcheck

build:
	$(GO) build -o bin/memvault ./cmd/memvault

clean:
	rm -rf bin
