package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/fediverse-observer/observer/crawl"
)

// ServeOptions configures the checker side.
type ServeOptions struct {
	// Report is what Confine applied; it is sent to the orchestrator
	// once, before the first check.
	Report Report
	// Logger writes to the checker's stderr, which the orchestrator
	// forwards to its own log.
	Logger *slog.Logger
	// Known is the known table's descriptor (InheritedKnown), which Serve
	// maps once the orchestrator says the table is written; nil:
	// descriptor 3 itself, which only an unconfined checker still has.
	Known *os.File
}

// Serve is the checker process's loop: it maps the known table when told
// on in that it is written and how many hosts it holds, says hello, then
// answers check requests with check, each as soon as it arrives, beside
// those under way (the orchestrator bounds them: PoolOptions.ChecksAtOnce),
// until in is closed (it then returns nil) or ctx is done. It does not
// recover from panics in check: a checker that panics dies, and the
// orchestrator records checker_failed for its host.
func Serve(ctx context.Context, in io.Reader, out io.Writer, check crawl.Checker, opts ServeOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)

	n, err := readKnownCount(r)
	if err != nil {
		return err
	}
	f := opts.Known
	if f == nil {
		f = os.NewFile(knownFD, "known table")
	}
	table, err := mapKnown(f, n)
	if err != nil {
		return err
	}
	defer table.Close()
	known := table.Set()
	hello, err := json.Marshal(opts.Report)
	if err != nil {
		return fmt.Errorf("encode hello: %w", err)
	}
	if err := writeFrame(w, msgHello, hello); err != nil {
		return fmt.Errorf("write hello: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write hello: %w", err)
	}
	// The first failure to encode or write a result, which ends the loop
	// at its next request.
	var (
		mu     sync.Mutex
		failed error
	)
	answer := func(q wireRequest) {
		res, trace := check.Check(ctx, q.Host, crawl.CheckOptions{
			Known:           known,
			FetchPeers:      q.FetchPeers,
			PeersValidators: q.PeersValidators,
			Addr:            q.addr(),
			CheckedAt:       q.CheckedAt,
			PassID:          q.PassID,
		})
		buf, dropped, err := encodeResult(q.ID, res, trace)
		if dropped > 0 {
			log.Warn("discoveries dropped to fit the result frame", "host", q.Host, "dropped", dropped, "kept", len(res.Discoveries)-dropped)
		}
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			if err = writeFrame(w, msgResult, buf); err == nil {
				err = w.Flush()
			}
			if err != nil {
				err = fmt.Errorf("write result: %w", err)
			}
		}
		if failed == nil {
			failed = err
		}
	}
	for ctx.Err() == nil {
		t, payload, err := readFrame(r, maxRequestFrame)
		mu.Lock()
		werr := failed
		mu.Unlock()
		if werr != nil {
			return werr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read request: %w", err)
		}
		if t != msgRequest {
			return fmt.Errorf("unexpected message %q", t)
		}
		q, err := decodeRequest(payload)
		if err != nil {
			return err
		}
		go answer(q)
	}
	return ctx.Err()
}
