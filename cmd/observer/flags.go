package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"
)

// newFlagSet makes a flag set whose errors come back to run instead of
// exiting, and whose help goes to stderr.
func newFlagSet(e env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("observer "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: observer %s %s\n\nflags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, turning flag errors into usage errors (the flag
// package has already printed the problem and the usage). Flags may come
// after positional arguments (observer check HOST --json), which the flag
// package alone does not allow; "--" ends flag parsing.
func parse(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return err
			}
			return usageError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// common flags shared by most commands.
type common struct {
	data      string
	config    string
	now       timeFlag
	logFormat string
	quiet     bool
}

func (c *common) register(fs *flag.FlagSet) {
	c.registerNoData(fs)
	fs.StringVar(&c.data, "data", "data", "data `directory` (snapshots and derived state)")
}

// registerNoData is register for commands that never touch the data.
func (c *common) registerNoData(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "config `file` (default observer.toml if it exists)")
	fs.Var(&c.now, "now", "the `time` (RFC 3339) to act at instead of the clock")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.quiet, "quiet", false, "log only warnings and errors")
}

// loadConfig reads the named config file, or observer.toml when none was
// named and it exists.
func (c *common) loadConfig() (config.Config, error) {
	if c.config != "" {
		return config.Load(c.config, true)
	}
	return config.Load("observer.toml", false)
}

func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	level := slog.LevelInfo
	if c.quiet {
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("invalid -log-format %q: want text or json", c.logFormat)
}

// at is --now, or the clock.
func (c *common) at() time.Time {
	if c.now.set {
		return c.now.t
	}
	return time.Now().UTC()
}

type timeFlag struct {
	t   time.Time
	set bool
}

func (f *timeFlag) String() string {
	if !f.set {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f *timeFlag) Set(s string) error {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("want RFC 3339 like 2026-11-21T12:00:00Z, got %q", s)
	}
	f.t, f.set = t.UTC(), true
	return nil
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// network flags for the commands that talk to instances.
type network struct {
	connectTo listFlag
	allowAddr listFlag
	caCert    listFlag
}

func (n *network) register(fs *flag.FlagSet) {
	fs.Var(&n.connectTo, "connect-to", "connect to ADDR:PORT whenever HOST:PORT is asked for, as curl's `HOST:PORT:ADDR:PORT` (HOST may be *; repeatable)")
	fs.Var(&n.allowAddr, "allow-addr", "`CIDR` the address guard lets through although not public (repeatable; for tests)")
	fs.Var(&n.caCert, "ca-cert", "PEM `file` of extra trusted CA certificates (repeatable)")
}

// options turns the config and flags into crawler options.
func (n *network) options(cfg config.Config, log *slog.Logger) (crawl.Options, error) {
	opts := crawl.Options{
		UserAgent:    cfg.Crawl.UserAgent(version()),
		ProductToken: cfg.Crawl.ProductToken,
		CAFiles:      n.caCert,
		CheckTimeout: cfg.Crawl.CheckTimeout.D(),
		Logger:       log,
	}
	for _, s := range n.connectTo {
		ct, err := crawl.ParseConnectTo(s)
		if err != nil {
			return opts, usagef("invalid -connect-to %q: %v", s, err)
		}
		opts.ConnectTo = append(opts.ConnectTo, ct)
	}
	for _, s := range n.allowAddr {
		p, err := crawl.ParseAllowAddr(s)
		if err != nil {
			return opts, usagef("invalid -allow-addr %q: %v", s, err)
		}
		opts.AllowAddrs = append(opts.AllowAddrs, p)
	}
	return opts, nil
}

// setup reads the config and builds the logger: the start of most commands.
func (c *common) setup(e env) (config.Config, *slog.Logger, error) {
	cfg, err := c.loadConfig()
	if err != nil {
		return cfg, nil, err
	}
	log, err := c.logger(e.stderr)
	return cfg, log, err
}

// crawler builds the crawler the config and the network flags ask for.
func (n *network) crawler(cfg config.Config, log *slog.Logger) (crawl.Options, *crawl.Crawler, error) {
	opts, err := n.options(cfg, log)
	if err != nil {
		return opts, nil, err
	}
	// Both isolation modes keep the same number of discoveries per check.
	opts.MaxNewPeers = sandbox.MaxDiscoveries
	crawler, err := crawl.New(opts)
	return opts, crawler, err
}
