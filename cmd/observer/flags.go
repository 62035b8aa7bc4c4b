package main

import (
	"crypto/x509"
	"flag"
	"io"
	"log/slog"
	"time"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/internal/cliflag"
)

// newFlagSet makes the flag set of observer's command name.
func newFlagSet(e env, name, usage string) *flag.FlagSet {
	return cliflag.NewFlagSet(e.stderr, "observer "+name, usage)
}

// common flags shared by most commands.
type common struct {
	data      string
	config    string
	now       cliflag.Time
	logFormat string
	quiet     bool
}

func (c *common) register(fs *flag.FlagSet) {
	c.registerNoData(fs)
	c.data = "data"
	fs.Var((*cliflag.Path)(&c.data), "data", "data `directory` (snapshots and derived state)")
}

// registerNoData is register for commands that never touch the data.
func (c *common) registerNoData(fs *flag.FlagSet) {
	fs.Var((*cliflag.Path)(&c.config), "config", "config `file` (default observer.toml if it exists)")
	fs.Var(&c.now, "now", "the `time` (RFC 3339) to act at instead of the clock")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.quiet, "quiet", false, "log only warnings and errors")
}

// childArgs start this program's hidden subcommand sub (a checker, a
// derivation) with this command's config and logging.
func (c *common) childArgs(sub string) []string {
	args := []string{sub, "-log-format", c.logFormat}
	if c.config != "" {
		args = append(args, "-config", c.config)
	}
	if c.quiet {
		args = append(args, "-quiet")
	}
	return args
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
	return nil, cliflag.Usagef("invalid -log-format %q: want text or json", c.logFormat)
}

// at is --now, or the clock.
func (c *common) at() time.Time {
	if c.now.Given {
		return c.now.Value
	}
	return time.Now().UTC()
}

// network flags for the commands that talk to instances.
type network struct {
	connectTo cliflag.List
	allowAddr cliflag.List
	caCert    cliflag.List
	// roots replace the system's root certificates: a checker's, read
	// once by its orchestrator.
	roots *x509.CertPool
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
		RootCAs:      n.roots,
		CAFiles:      n.caCert,
		CheckTimeout: cfg.Crawl.CheckTimeout.D(),
		DenyAddrs:    cfg.Crawl.DenyPrefixes(),
		Logger:       log,
	}
	for _, s := range n.connectTo {
		ct, err := crawl.ParseConnectTo(s)
		if err != nil {
			return opts, cliflag.Usagef("invalid -connect-to %v", err)
		}
		opts.ConnectTo = append(opts.ConnectTo, ct)
	}
	for _, s := range n.allowAddr {
		p, err := crawl.ParseAllowAddr(s)
		if err != nil {
			return opts, cliflag.Usagef("invalid -allow-addr %v", err)
		}
		opts.AllowAddrs = append(opts.AllowAddrs, p)
	}
	return opts, nil
}

// setup reads the config and builds the logger: the start of most commands.
func (c *common) setup(e env) (config.Config, *slog.Logger, error) {
	cfg, err := config.LoadNamed(c.config)
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
	// Both isolation modes keep the same number of discoveries per check;
	// the pass holds every checker to it again (crawl.Pass.MaxNewPerList).
	opts.MaxNewPeers = cfg.Crawl.MaxNewPerList
	crawler, err := crawl.New(opts)
	if err != nil {
		// It only fails on a CA file, which comes from -ca-cert.
		return opts, nil, cliflag.Usagef("invalid -%v", err)
	}
	return opts, crawler, nil
}
