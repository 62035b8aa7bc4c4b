package main

import (
	"context"
	"strconv"

	"github.com/fediverse-observer/observer/duck"
	"github.com/fediverse-observer/observer/internal/childproc"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// deriveArgs start the hidden __derive subcommand over this command's data
// directory, with its config and logging, reporting on childproc's pipe.
func deriveArgs(c common) []string {
	return append(c.childArgs("__derive"), "-data", c.data, "-error-fd", strconv.Itoa(childproc.ErrorFD))
}

// runDerive is the hidden __derive subcommand: one derivation of the data
// directory with the config's thresholds (crawlpass.DeriveInChild). With
// -error-fd, its error goes to that pipe (childproc.Report) instead of
// stderr.
func runDerive(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "__derive", "[flags]")
	var c common
	c.register(fs)
	errorFD := fs.Int("error-fd", 0, "file descriptor to report the error on, for the parent process")
	if err := cliflag.ParseNoArgs(fs, args); err != nil {
		return err
	}
	err := derive(ctx, e, c)
	if err == nil || *errorFD == 0 {
		return err
	}
	return childproc.Report(*errorFD, err)
}

func derive(ctx context.Context, e env, c common) error {
	cfg, log, err := c.setup(e)
	if err != nil {
		return err
	}
	store, err := duck.Open(ctx, c.data, duck.Options{Logger: log})
	if err != nil {
		return err
	}
	defer store.Close()
	_, err = store.Deriver.Derive(ctx, cfg.DeriveOptions())
	return err
}
