package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

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
	// Known is the known table, mapped before confinement
	// (MapKnownTable); nil: Serve maps it itself, which only an
	// unconfined checker can.
	Known *SharedKnown
}

// Serve is the checker process's loop: it maps the known table (told its
// size on in), says hello, then answers check requests one at a time with check until in
// is closed (it then returns nil) or ctx is done. It does not recover from
// panics in check: a checker that panics dies, and the orchestrator records
// checker_failed for its host.
func Serve(ctx context.Context, in io.Reader, out io.Writer, check crawl.Checker, opts ServeOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)

	table := opts.Known
	if table == nil {
		t, err := MapKnownTable()
		if err != nil {
			return err
		}
		defer t.Close()
		table = t
	}
	n, err := readKnownCount(r)
	if err != nil {
		return err
	}
	if err := table.setCount(n); err != nil {
		return fmt.Errorf("known table: %w", err)
	}
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
	for ctx.Err() == nil {
		t, payload, err := readFrame(r, maxRequestFrame)
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
		res, trace := check.Check(ctx, q.Host, crawl.CheckOptions{
			Known:           known,
			FetchPeers:      q.FetchPeers,
			PeersValidators: q.PeersValidators,
			Addr:            q.addr(),
			CheckedAt:       q.CheckedAt,
			PassID:          q.PassID,
		})
		buf, dropped, err := encodeResult(q.ID, res, trace)
		if err != nil {
			return err
		}
		if dropped > 0 {
			log.Warn("discoveries dropped to fit the result frame", "host", q.Host, "dropped", dropped, "kept", len(res.Discoveries)-dropped)
		}
		if err := writeFrame(w, msgResult, buf); err != nil {
			return fmt.Errorf("write result: %w", err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("write result: %w", err)
		}
	}
	return ctx.Err()
}
