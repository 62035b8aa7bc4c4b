package main

import (
	"crypto/x509"
	"flag"
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
	data    string
	config  string
	now     cliflag.Time
	logging cliflag.Log
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
	c.logging.Register(fs)
}

// childArgs start this program's hidden subcommand sub (a checker, a
// derivation) with this command's config and logging.
func (c *common) childArgs(sub string) []string {
	args := append([]string{sub}, c.logging.Args()...)
	if c.config != "" {
		args = append(args, "-config", c.config)
	}
	return args
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
	opts := cfg.CrawlOptions(version())
	opts.RootCAs, opts.CAFiles, opts.Logger = n.roots, n.caCert, log
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
	log, err := c.logging.Logger(e.stderr)
	return cfg, log, err
}

// crawler builds the crawler the config and the network flags ask for.
func (n *network) crawler(cfg config.Config, log *slog.Logger) (crawl.Options, *crawl.Crawler, error) {
	opts, err := n.options(cfg, log)
	if err != nil {
		return opts, nil, err
	}
	crawler, err := crawl.New(opts)
	if err != nil {
		// It only fails on a CA file, which comes from -ca-cert.
		return opts, nil, cliflag.Usagef("invalid -%v", err)
	}
	return opts, crawler, nil
}
