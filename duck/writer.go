package duck

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/zeebo/xxh3"

	"github.com/fediverse-observer/observer"
)

// WriterOptions sets when buffered rows become files.
type WriterOptions struct {
	FlushEvery  time.Duration // at least this often while rows are buffered (default 30 s)
	FlushChecks int           // or when this many checks are buffered (default 10 000)
	// FlushDiscoveries: or when this many discoveries are buffered
	// (default 1 000 000). One check may bring 200 000
	// (sandbox.MaxDiscoveries), so without it peers lists full of new
	// names could fill the crawl's memory between two timed flushes.
	FlushDiscoveries int
}

// Writer appends checks and discoveries of one pass to the snapshots. It
// buffers rows and writes them as new Parquet files, so a killed pass loses
// at most what was recorded since the last flush. It is safe for concurrent
// use; its timer flushes even when no new rows arrive.
type Writer struct {
	store  *Snapshots
	passID string
	opts   WriterOptions

	mu          sync.Mutex
	checks      []observer.Check
	discoveries []observer.Discovery
	seq         int
	err         error // first flush error; later calls return it
	// pending tallies the checks buffered since the last flush, written
	// those in files: a pass whose writer failed records what it wrote.
	pending, written observer.Tally

	stop chan struct{}
	done chan struct{}
}

// Written is the tally of the checks in files so far. After a failed
// flush it stays what it was: the failed flush's checks, and every check
// recorded after it, are in no file.
func (w *Writer) Written() observer.Tally {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written.Clone()
}

// NewWriter starts a writer for one pass. Close it to flush the tail.
func (s *Snapshots) NewWriter(passID string, opts WriterOptions) (*Writer, error) {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 30 * time.Second
	}
	if opts.FlushChecks <= 0 {
		opts.FlushChecks = 10_000
	}
	if opts.FlushDiscoveries <= 0 {
		opts.FlushDiscoveries = 1_000_000
	}
	if err := os.MkdirAll(s.path(TmpDir), 0o755); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", s.dir, err)
	}
	s.removeOrphanedTmp()
	w := &Writer{store: s, passID: passID, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	go w.flushPeriodically()
	return w, nil
}

// NewPassID returns a pass id that sorts by start time and is unique across
// processes: the start time in UTC plus random bits.
func NewPassID(start time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return start.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func (w *Writer) flushPeriodically() {
	defer close(w.done)
	t := time.NewTicker(w.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.mu.Lock()
			if len(w.checks)+len(w.discoveries) > 0 {
				w.flushLocked(context.Background())
			}
			w.mu.Unlock()
		}
	}
}

// Record buffers one check result and its discoveries (the crawl.Sink
// contract).
func (w *Writer) Record(ctx context.Context, r observer.Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	c := r.Check
	if c.PassID == "" {
		c.PassID = w.passID
	}
	w.checks = append(w.checks, c)
	w.discoveries = append(w.discoveries, r.Discoveries...)
	w.pending.Add(r)
	if len(w.checks) >= w.opts.FlushChecks || len(w.discoveries) >= w.opts.FlushDiscoveries {
		// A signal cancels the pass's context while its finished checks
		// are still being recorded. A flush they trigger then must still
		// write: a failed flush is kept as the writer's error, so
		// cancelling it would lose the whole buffer, Close included.
		return w.flushLocked(context.WithoutCancel(ctx))
	}
	return nil
}

// Discover buffers discoveries that came without a check: the seeds, which
// a crawl records along with its pass (`observer add` writes its own at
// once, through Snapshots.WriteDiscoveries).
func (w *Writer) Discover(ctx context.Context, ds ...observer.Discovery) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.discoveries = append(w.discoveries, ds...)
	return nil
}

// Flush writes everything buffered now.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked(ctx)
}

// Close stops the timer and writes the tail.
func (w *Writer) Close(ctx context.Context) error {
	close(w.stop)
	<-w.done
	return w.Flush(ctx)
}

func (w *Writer) flushLocked(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	seq := w.seq
	w.seq++
	// Discoveries first: a check records that its peers list was read (and
	// the validators it came with), so a checks file without the
	// discoveries it found (a full disk, a kill between the two) would lose
	// those hosts for good, the next check being told the list has not
	// changed. The other way round, the check is merely done again.
	if err := w.store.writeDiscoveries(ctx, w.discoveries, fmt.Sprintf("%s-%05d", w.passID, seq)); err != nil {
		w.err = err
		return err
	}
	w.discoveries = w.discoveries[:0]
	if err := w.store.writeChecks(ctx, w.checks, fmt.Sprintf("%s-%05d", w.passID, seq)); err != nil {
		w.err = err
		return err
	}
	w.checks = w.checks[:0]
	w.written.Merge(w.pending)
	w.pending = observer.Tally{}
	return nil
}

// WriteDiscoveries writes discoveries at once, as their own file (observer add).
func (s *Snapshots) WriteDiscoveries(ctx context.Context, ds []observer.Discovery) error {
	return s.writeDiscoveries(ctx, ds, NewPassID(time.Now()))
}

// WritePass records one pass's summary as its own file in data/passes.
func (s *Snapshots) WritePass(ctx context.Context, p observer.Pass) error {
	named := map[string]driver.Value{
		"pass_id": p.PassID, "started_at": p.StartedAt.UTC(), "ended_at": p.EndedAt.UTC(),
		"due": p.Due, "checked": p.Checks, "discovered": p.Discovered, "bytes": p.Bytes, "wire_bytes": p.WireBytes,
		"errors": p.Errors(), "not_started": p.NotStarted, "abandoned": p.Abandoned, "cut_short": nullString(p.CutShort),
		"blocklisted": p.Blocklisted, "over_domain_budget": p.OverDomainBudget,
		"skipped_address_budget": p.SkippedAddressBudget, "addresses": p.Addresses,
		"busiest_address_requests": p.BusiestAddressRequests, "addresses_over_budget": p.AddressesOverBudget,
		"over_list_cap": p.OverListCap, "over_pass_cap": p.OverPassCap,
	}
	// One column per outcome, named as the outcome.
	for _, o := range observer.Outcomes() {
		named[string(o)] = p.ByOutcome[o]
	}
	row, err := rowByName(ctx, s.db, "passes_schema", named)
	if err != nil {
		return fmt.Errorf("write %s: %w", PassesDir, err)
	}
	return s.writeSnapshot(ctx, PassesDir, "passes_schema", "started_at", p.PassID, func(a *duckdb.Appender) error {
		return a.AppendRow(row...)
	})
}

// rowByName orders the values of one row, given by column name, as the
// columns of schemaTable, for the appender, which appends by position. A
// column without a value, or a value without a column, is an error, so the
// two cannot drift apart unnoticed.
func rowByName(ctx context.Context, q queryer, schemaTable string, named map[string]driver.Value) ([]driver.Value, error) {
	cols, err := schemaColumns(ctx, q, schemaTable)
	if err != nil {
		return nil, err
	}
	row := make([]driver.Value, len(cols))
	for i, c := range cols {
		v, ok := named[c.name]
		if !ok {
			return nil, fmt.Errorf("%s: no value for column %s", schemaTable, c.name)
		}
		row[i] = v
	}
	if len(named) != len(cols) {
		for name := range named {
			if !slices.ContainsFunc(cols, func(c schemaColumn) bool { return c.name == name }) {
				return nil, fmt.Errorf("%s: no column %s", schemaTable, name)
			}
		}
	}
	return row, nil
}

func (s *Snapshots) writeChecks(ctx context.Context, checks []observer.Check, name string) error {
	if len(checks) == 0 {
		return nil
	}
	return s.writeSnapshot(ctx, ChecksDir, "checks_schema", "checked_at", name, func(a *duckdb.Appender) error {
		for _, c := range checks {
			err := a.AppendRow(
				string(c.Host), c.CheckedAt.UTC(), string(c.Outcome), nullString(c.Error), nullInt(int64(c.HTTPStatus)),
				nullString(c.Software), nullString(c.Version), nullString(c.NodeInfoVersion),
				ptrValue(c.Users), ptrValue(c.ActiveMonth), ptrValue(c.ActiveHalfyear), ptrValue(c.LocalPosts),
				ptrValue(c.OpenRegistrations), nullString(c.Name), nullString(c.Description), nullString(string(c.MovedTo)),
				c.PeersFetched, c.PeersCount, c.NewPeersCount, c.DurationMS, c.PassID,
				nullString(c.PeersETag), nullString(c.PeersLastModified), c.PeersNotModified,
				nullString(c.NodeInfoDocumentVersion), unusableFields(c), c.WireBytes,
			)
			if err != nil {
				return fmt.Errorf("append check of %s: %w", c.Host, err)
			}
		}
		return nil
	})
}

func (s *Snapshots) writeDiscoveries(ctx context.Context, ds []observer.Discovery, name string) error {
	if len(ds) == 0 {
		return nil
	}
	return s.writeSnapshot(ctx, DiscoveriesDir, "discoveries_schema", "discovered_at", name, func(a *duckdb.Appender) error {
		for _, d := range ds {
			if err := a.AppendRow(string(d.Host), d.DiscoveredAt.UTC(), d.Via); err != nil {
				return fmt.Errorf("append discovery of %s: %w", d.Host, err)
			}
		}
		return nil
	})
}

// writeSnapshot appends rows into a scratch table shaped like schemaTable,
// then writes one Parquet file per UTC date of timeColumn: each into data/tmp
// first, synced, then renamed into kind/date=D/name.parquet, so a reader sees
// the whole file or none of it.
func (s *Snapshots) writeSnapshot(ctx context.Context, kind, schemaTable, timeColumn, name string, fill func(*duckdb.Appender) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("write %s: duckdb connection: %w", kind, err)
	}
	defer conn.Close()
	scratch := "scratch_" + kind
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE %s AS FROM %s LIMIT 0", scratch, schemaTable)); err != nil {
		return fmt.Errorf("write %s: %w", kind, err)
	}
	defer conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+scratch)
	err = conn.Raw(func(raw any) error {
		dc, ok := raw.(driver.Conn)
		if !ok {
			return errors.New("unexpected driver type")
		}
		app, err := duckdb.NewAppenderFromConn(dc, "", scratch)
		if err != nil {
			return err
		}
		if err := fill(app); err != nil {
			app.Close()
			return err
		}
		return app.Close()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", kind, err)
	}
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT DISTINCT strftime(%s, '%%Y-%%m-%%d') FROM %s ORDER BY 1", timeColumn, scratch))
	if err != nil {
		return fmt.Errorf("write %s: %w", kind, err)
	}
	var dates []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return fmt.Errorf("write %s: %w", kind, err)
		}
		dates = append(dates, d)
	}
	rows.Close()
	for _, date := range dates {
		final := s.path(kind, "date="+date, name+".parquet")
		query := fmt.Sprintf("SELECT * FROM %s WHERE strftime(%s, '%%Y-%%m-%%d') = %s ORDER BY ALL", scratch, timeColumn, sqlString(date))
		if err := s.copyAtomically(ctx, conn, query, final, parquetKept); err != nil {
			return fmt.Errorf("write %s: %w", final, err)
		}
	}
	return nil
}

// Parquet writer options. What is kept (snapshots, transitions) is
// compressed with zstd, in version 2 data pages: their delta encodings of
// the host-sorted names and the check times made a month of the
// benchmark's checks 190 MB instead of 258 MB, and its full derivation,
// which reads every check three times, about a second faster. The derived
// state is rewritten whole at every derivation and replaced by the next, so
// it is written the quickest way: snappy, version 2 data pages, and no
// dictionaries (a dictionary of at most one byte is given up at once). On
// the benchmark's million hosts that writes in about 0.5 s instead of
// 0.75 s with zstd's version 1 pages (0.7 s with snappy's), for 72 MB
// instead of 55 MB.
const (
	parquetKept      = "COMPRESSION zstd, PARQUET_VERSION V2"
	parquetRewritten = "COMPRESSION snappy, PARQUET_VERSION V2, DICTIONARY_SIZE_LIMIT 1"
)

// fileSum is the xxh3 hash of the file at path, in hex.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxh3.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return fmt.Sprintf("%016x", h.Sum64()), nil
}

// copyAtomically writes the result of query as a Parquet file at final,
// with the given writer options, through a temporary file in data/tmp that
// is synced and then renamed.
func (s *core) copyAtomically(ctx context.Context, conn *sql.Conn, query, final, options string) error {
	tmp := s.path(TmpDir, fmt.Sprintf("%d-%s", os.Getpid(), filepath.Base(final)))
	// A Store opened without Create (observer add) has no data/tmp yet.
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return err
	}
	defer os.Remove(tmp)
	copySQL := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, %s)", query, sqlString(filepath.ToSlash(tmp)), options)
	if _, err := conn.ExecContext(ctx, copySQL); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := mkdirAllSynced(filepath.Dir(final)); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	return syncDir(filepath.Dir(final))
}

// removeOrphanedTmp deletes temporary files whose writer process is gone
// (killed mid-write). Readers never look in data/tmp, so leftovers are only
// wasted space; files of live processes are left alone.
func (s *core) removeOrphanedTmp() {
	entries, err := os.ReadDir(s.path(TmpDir))
	if err != nil {
		return
	}
	for _, e := range entries {
		pidText, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			// RemoveAll: a derivation's split inputs are directories.
			os.RemoveAll(s.path(TmpDir, e.Name()))
		}
	}
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// mkdirAllSynced makes dir and its missing parents, syncing the parent of
// each one it makes: a file renamed into a new date=… directory and synced
// there is only durable once that directory's own entry is.
func mkdirAllSynced(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAllSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

func syncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func ptrValue[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// unusableFields is the unusable_fields of a check: NULL when it read no
// NodeInfo document, else the list, empty when every field was usable.
func unusableFields(c observer.Check) driver.Value {
	if c.NodeInfoVersion == "" {
		return nil
	}
	return append([]string{}, c.UnusableFields...)
}
