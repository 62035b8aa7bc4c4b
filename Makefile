# The everyday commands. `make crawl` and `make site` are the two a site
# operator runs; `make test` is what CI runs.
GO      ?= go
BIN     := bin/observer
SIM     := bin/fedisim
ARGS    ?=

.PHONY: all build crawl site serve test vet lint fuzz bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/observer
	$(GO) build -o $(SIM) ./cmd/fedisim

crawl: build
	./$(BIN) crawl $(ARGS)

site: build
	./$(BIN) build $(ARGS)

serve: build
	./$(BIN) serve $(ARGS)

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted: $$unformatted"; exit 1; fi
	$(GO) vet ./...

# staticcheck, pinned; not part of make test, which should not need a
# download CI does not otherwise make. Clean on 2026-11-23.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: vet
	$(GO) run $(STATICCHECK) ./...

# The whole suite, as CI runs it. Browser tests need Debian's chromium:
# scripts/install-test-deps.sh installs it. Every fuzz target runs here on
# its seeds and its testdata/fuzz regressions, which is deterministic;
# exploring new inputs is make fuzz's job, since a gate that explores
# passes or fails by chance (a crasher found in CI once failed an unrelated
# change). The timeout only catches a hung test: CI allows 90 minutes, and
# on a loaded machine duck and cmd/observer each take over 15.
test: vet
	$(GO) test -timeout 60m ./...

# Explores each fuzz target in turn; a crasher it writes to testdata/fuzz
# is then a regression input that make test runs. FUZZTIME is a count, not
# a duration: with a duration, Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" as the time runs out
# (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 1000000x
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg || exit 1; \
	  done; \
	done

# The SIGKILL tests (crawl and build) with many more kills than make test's
# few dozen.
KILL_ITERATIONS ?= 400
.PHONY: kill-test
kill-test:
	OBSERVER_KILL_ITERATIONS=$(KILL_ITERATIONS) $(GO) test -count 1 -run 'Kill' -timeout 60m -v ./cmd/observer

# Every benchmark once (the crawl pass at its small default size), then the
# discovery latency over 60 simulated days (bench-latency) and the
# million-instance crawl pass (bench-crawl, about an hour per isolation mode
# on 2 cores). docs/benchmarks.md says which command gives which figure.
bench:
	$(GO) test -run '^$$' -bench . -skip DiscoveryLatency -benchtime 1x -timeout 60m ./...
	$(MAKE) bench-latency
	$(MAKE) bench-crawl

# The observer as deployed (a pass every 2 hours, the site built after
# each) over fedisim's spread model for 60 simulated days: latency from an
# instance's birth to new.atom, peers-list bytes and checks per day by host
# state (cmd/observer/latency_bench_test.go). It says each simulated day's
# progress on stderr as it goes, and the figures so far every ten days.
# LATENCY_INSTANCES=10000 is the larger world: a simulated day of it costs
# about 36 s of CPU (60 days: about 36 CPU-minutes); 60 days took 2 h 23 min
# on 2 cores under load 20-45. LATENCY_TIMEOUT bounds the run.
LATENCY_INSTANCES ?= 2000
LATENCY_DAYS ?= 60
LATENCY_TIMEOUT ?= 24h
.PHONY: bench-latency
bench-latency:
	OBSERVER_LATENCY_INSTANCES=$(LATENCY_INSTANCES) OBSERVER_LATENCY_DAYS=$(LATENCY_DAYS) \
	  $(GO) test -run '^$$' -bench 'DiscoveryLatency$$' -benchtime 1x -timeout $(LATENCY_TIMEOUT) ./cmd/observer

# The same measure without the network, for a million instances: the
# scheduling code of observer crawl with the spread model answering the
# crawler in-process, and the new list read after each pass instead of a
# site build (cmd/observer/latency_model_bench_test.go). The crawler's own
# code reads the responses (robots.txt, NodeInfo, each peers page), its
# reading of a host's unchanging answers reused where they do not change
# (testsupport.FastModelChecker): only the sockets and TLS are left out.
# MODEL_INSTANCES, MODEL_DAYS set the world; each simulated day's line
# gives its wall and CPU time and where they went. GOGC=400: the checks
# make short-lived garbage fast, and a larger heap goal costs the collector
# less; GOMEMLIMIT holds it on a shared machine. Not in
# make bench: at a million instances each of the first days checks every
# known name, a million checks or more (docs/benchmarks.md), so 60 days
# need a machine of their own for hours. MODEL_DIR, a directory, keeps the
# run's site and a checkpoint after each simulated day there: the same
# command run again continues from it, so the run may be stopped and
# resumed (losing at most the day under way) and its figures sum the
# segments' time.
MODEL_INSTANCES ?= 1000000
MODEL_DAYS ?= 60
MODEL_DIR ?=
.PHONY: bench-latency-model
bench-latency-model:
	GOGC=400 GOMEMLIMIT=8GiB OBSERVER_MODEL_INSTANCES=$(MODEL_INSTANCES) OBSERVER_MODEL_DAYS=$(MODEL_DAYS) OBSERVER_MODEL_DIR=$(MODEL_DIR) \
	  $(GO) test -run '^$$' -bench 'DiscoveryLatencyModel$$' -benchtime 1x -timeout $(LATENCY_TIMEOUT) ./cmd/observer

clean:
	rm -rf bin public .public.lock

# The offline demo: a simulated Fediverse on loopback, two simulated weeks
# of crawl passes, the site built into demo/public (scripts/demo.sh).
.PHONY: demo deploy
demo: build
	scripts/demo.sh

# Publish public/ to DEPLOY_TARGET (an rsync destination such as
# user@host:/srv/observer/www/public/): compare by checksum so that files a
# rebuild left unchanged are not sent again, delete what the site no longer
# has after everything new is in place, and move files into place together
# at the end (--delay-updates) so that readers rarely see a half-updated
# site.
DEPLOY_TARGET ?=
deploy:
	@if [ -z "$(DEPLOY_TARGET)" ]; then \
	  echo "make deploy: set DEPLOY_TARGET, e.g. make deploy DEPLOY_TARGET=user@host:/srv/observer/www/public/" >&2; \
	  exit 2; \
	fi
	@if [ ! -f public/index.html ]; then \
	  echo "make deploy: public/index.html is missing: run make site first" >&2; \
	  exit 2; \
	fi
	rsync -rlt --checksum --delete-after --delay-updates public/ "$(DEPLOY_TARGET)"

# The whole crawl's memory (summed PSS of its process tree, and its cgroup's
# peak) with 1, 10 and 20 million known hosts (scripts/bench-memory.sh).
.PHONY: bench-memory
bench-memory:
	scripts/bench-memory.sh

# The million-instance crawl pass with --isolation process and none, and its
# figures (scripts/bench-crawl.sh; OBSERVER_BENCH_INSTANCES sets the size).
.PHONY: bench-crawl
bench-crawl:
	scripts/bench-crawl.sh
