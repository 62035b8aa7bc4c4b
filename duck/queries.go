package duck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"syscall"
)

// QueryOptions say how OpenForQueries prepares a data directory for
// read-only queries.
type QueryOptions struct {
	Logger *slog.Logger
	// Derive says how new snapshots are folded in (Full: all of them,
	// from scratch) before the views are defined.
	Derive DeriveOptions
	// Views are the views' parameters.
	Views ViewParams
	// StaleOK answers from the last derivation, with a warning, when the
	// data directory cannot be written (a read-only mount, another user's
	// files), instead of failing.
	StaleOK bool
}

// OpenForQueries opens the data directory (which must exist), folds new
// snapshots into the derived state, defines the views and locks DuckDB
// down: from then on only SELECTs run and only the data directory can be
// read. `observer sql`, build and serve read through it.
//
// Deriving is safe while a crawl runs: the crawl's lock (data/.lock) guards
// the snapshots' writers, derivations are serialised by their own lock
// (data/derived/.lock), snapshot files appear atomically and a derivation
// folds only the files that existed when it started (the rest are folded
// next time).
func OpenForQueries(ctx context.Context, dir string, o QueryOptions) (*Store, error) {
	store, err := Open(ctx, dir, Options{Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	if err := store.prepareQueries(ctx, dir, o); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

func (s *Store) prepareQueries(ctx context.Context, dir string, o QueryOptions) error {
	if _, err := s.Deriver.Derive(ctx, o.Derive); err != nil {
		if !o.StaleOK || !notWritable(err) {
			return err
		}
		if !s.Deriver.HasDerivation() {
			return fmt.Errorf("%w; and no earlier derivation to answer from: run observer sql once where %s is writable (or on a writable copy)", err, dir)
		}
		s.log.Warn("cannot derive (the data directory is not writable): answering from the last derivation, which may miss the newest snapshots", "err", err)
	}
	if err := s.Reader.CreateViews(ctx, o.Views); err != nil {
		return err
	}
	return s.Reader.LockDown(ctx)
}

// notWritable reports whether err comes from a file system that refuses
// writes.
func notWritable(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}
