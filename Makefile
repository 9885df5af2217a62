# memvault — the two commands that matter: `make demo` and `make test`.
GO        ?= go
PKGS      ?= ./...
FUZZTIME  ?= 5s
BENCHTIME ?= 1s

.PHONY: all setup demo test vet fmt-check unit fuzz bench lint build clean

all: build

## setup: install PostgreSQL 15 + pgvector (for the Postgres tests); idempotent.
setup:
	bash scripts/install-deps.sh

## demo: the main job — a support-agent session on the embedded default
## (SQLite file, offline embedder, encryption on). No server needed.
demo:
	$(GO) run ./cmd/memvault demo

## test: install what is needed, then vet, format check, race tests, short fuzzing.
test: setup vet fmt-check unit fuzz

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -race -timeout 40m $(PKGS)

fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## bench: Go benchmarks of every package (allocations reported).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

## lint: vet + gofmt (+ staticcheck when installed).
lint: vet fmt-check
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck $(PKGS); else echo "staticcheck not installed; skipped"; fi

build:
	$(GO) build -o bin/memvault ./cmd/memvault

clean:
	rm -rf bin
