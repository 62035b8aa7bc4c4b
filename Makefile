# The everyday commands. `make crawl` and `make site` are the two a site
# operator runs; `make test` is what CI runs.
GO      ?= go
BIN     := bin/observer
SIM     := bin/fedisim
ARGS    ?=

.PHONY: all build crawl site serve test vet fuzz bench clean

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

# The whole suite, as CI runs it. Browser tests need Debian's chromium:
# scripts/install-test-deps.sh installs it.
test: vet
	$(GO) test -timeout 30m ./...

# Each fuzz target for longer than make test's short runs.
FUZZTIME ?= 2m
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./...

clean:
	rm -rf bin public
