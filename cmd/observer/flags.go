package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/crawl"
)

// newFlagSet makes a flag set whose errors come back to run instead of
// exiting, and whose help goes to stderr.
func newFlagSet(e env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("observer "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, strings.TrimSpace("usage: observer "+name+" "+usage))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(e.stderr, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args. A flag error is reported here, once: one line naming
// the flag and what is wrong with it, then the usage; the usageError that
// comes back is marked as reported, so run does not repeat it.
//
// Flags may come after positional arguments (observer check HOST --json),
// which the flag package alone does not allow; "--" ends flag parsing. An
// argument that starts with "-" but whose name holds whitespace ("-- a
// comment\nSELECT 1", an SQL query beginning with a comment) is no flag:
// it is taken as a positional argument.
func parse(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	restore := clarify(fs)
	defer func() { restore(); fs.SetOutput(out); fs.Usage = usage }()
	var positional []string
	for len(args) > 0 {
		switch a := args[0]; {
		case a == "--":
			positional = append(positional, args[1:]...)
			args = nil
		case !isFlag(a):
			positional = append(positional, a)
			args = args[1:]
		default:
			n := flagsAhead(fs, args)
			if err := fs.Parse(args[:n]); err != nil {
				restore()
				fs.SetOutput(out)
				if err == flag.ErrHelp {
					usage()
					return err
				}
				fmt.Fprintf(out, "%s: %v\n", fs.Name(), err)
				usage()
				return usageError{err: err, reported: true}
			}
			args = args[n:]
		}
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// clarify wraps the flags' values while parsing, so that a malformed number
// or duration says what is wanted instead of the flag package's bare "parse
// error". The returned function puts the values back (the usage needs them:
// it names each flag's type from its value's).
func clarify(fs *flag.FlagSet) (restore func()) {
	saved := map[*flag.Flag]flag.Value{}
	fs.VisitAll(func(f *flag.Flag) {
		saved[f] = f.Value
		f.Value = clearValue{f.Value}
	})
	return func() {
		for f, v := range saved {
			f.Value = v
		}
		clear(saved)
	}
}

// givenFlags names the flags given on the command line, as opposed to those
// left at their defaults (which mean "as the config file says").
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// clearValue is a flag value whose errors say what is wanted.
type clearValue struct{ flag.Value }

func (v clearValue) Set(s string) error {
	err := v.Value.Set(s)
	if err == nil {
		return nil
	}
	if g, ok := v.Value.(flag.Getter); ok {
		// The commands' own types (durationFlag, timeFlag…) say what they
		// want themselves; the flag package's int and bool do not.
		switch g.Get().(type) {
		case int:
			return errors.New("want a whole number")
		case bool:
			return errors.New("want true or false")
		}
	}
	return err
}

func (v clearValue) IsBoolFlag() bool { return isBoolValue(v.Value) }

// isFlag reports whether a is a flag ("-name", "--name", "-name=value"),
// as opposed to "-", "--" or an argument that merely starts with "-" but
// whose would-be name holds whitespace.
func isFlag(a string) bool {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return false
	}
	name := strings.TrimPrefix(a[1:], "-")
	name, _, _ = strings.Cut(name, "=")
	return !strings.ContainsFunc(name, unicode.IsSpace)
}

// flagsAhead is how many of args, which start with a flag, are flags and
// their values, up to the first positional argument.
func flagsAhead(fs *flag.FlagSet, args []string) int {
	n := 0
	for n < len(args) && isFlag(args[n]) {
		name := strings.TrimPrefix(args[n][1:], "-")
		name, _, hasValue := strings.Cut(name, "=")
		n++
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolValue(f.Value) {
			n++ // its value, whatever it looks like, as the flag package takes it
		}
	}
	return min(n, len(args))
}

// isBoolValue reports whether a flag of this value takes no separate
// argument (-json, not -json true), as the flag package decides it.
func isBoolValue(v flag.Value) bool {
	b, ok := v.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseNoArgs parses args for a command that takes flags only, refusing
// positional arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
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
	c.data = "data"
	fs.Var((*pathFlag)(&c.data), "data", "data `directory` (snapshots and derived state)")
}

// registerNoData is register for commands that never touch the data.
func (c *common) registerNoData(fs *flag.FlagSet) {
	fs.Var((*pathFlag)(&c.config), "config", "config `file` (default observer.toml if it exists)")
	fs.Var(&c.now, "now", "the `time` (RFC 3339) to act at instead of the clock")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&c.quiet, "quiet", false, "log only warnings and errors")
}

// configFile is the config file this command reads: the one -config
// names, which must exist, or else observer.toml, read when it exists.
func (c *common) configFile() (path string, mustExist bool) {
	if c.config != "" {
		return c.config, true
	}
	return "observer.toml", false
}

// loadConfig reads the config file (configFile), or gives the defaults
// when observer.toml is meant and there is none.
func (c *common) loadConfig() (config.Config, error) {
	return config.Load(c.configFile())
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
	return nil, usagef("invalid -log-format %q: want text or json", c.logFormat)
}

// at is --now, or the clock.
func (c *common) at() time.Time {
	if c.now.set {
		return c.now.t
	}
	return time.Now().UTC()
}

// pathFlag is a path that, when given, is not empty: an empty --data
// would scatter the data directory's folders over the current directory,
// and an empty --config would quietly mean observer.toml.
type pathFlag string

func (p *pathFlag) String() string { return string(*p) }

func (p *pathFlag) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	*p = pathFlag(s)
	return nil
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
		return errors.New("want RFC 3339 like 2026-11-21T12:00:00Z")
	}
	if t.IsZero() {
		// The packages read the zero time as "no --now, use the clock",
		// which would date a pass's checks today and its id in year 1.
		return errors.New("want a time after 0001-01-01T00:00:00Z (that one means the current time to the packages)")
	}
	if t.UTC().Year() > 9998 {
		// A pass dated in 9999 records its checks in year 10000 once it
		// runs past the year's end, which no date=YYYY-MM-DD directory
		// can name: every command reading the snapshots then stops at it.
		return errors.New("want a time before 9999-01-01T00:00:00Z (a pass's snapshots are filed by date=YYYY-MM-DD)")
	}
	f.t, f.set = t.UTC(), true
	return nil
}

// durationFlag is a duration written as in the config file: Go's syntax
// ("90s", "2h30m") plus whole days ("7d"), never negative.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string {
	if !f.set {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := config.ParseDuration(s)
	if err != nil {
		if _, perr := config.ParseDuration(strings.TrimPrefix(s, "-")); perr == nil && strings.HasPrefix(s, "-") {
			return errors.New("must not be negative")
		}
		return errors.New("want a duration like 90s, 45m, 2h30m or 7d")
	}
	f.d, f.set = d, true
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
		DenyAddrs:    cfg.Crawl.DenyPrefixes(),
		Logger:       log,
	}
	for _, s := range n.connectTo {
		ct, err := crawl.ParseConnectTo(s)
		if err != nil {
			return opts, usagef("invalid -connect-to %v", err)
		}
		opts.ConnectTo = append(opts.ConnectTo, ct)
	}
	for _, s := range n.allowAddr {
		p, err := crawl.ParseAllowAddr(s)
		if err != nil {
			return opts, usagef("invalid -allow-addr %v", err)
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
	// Both isolation modes keep the same number of discoveries per check;
	// the pass holds every checker to it again (crawl.Pass.MaxNewPerList).
	opts.MaxNewPeers = cfg.Crawl.MaxNewPerList
	crawler, err := crawl.New(opts)
	if err != nil {
		// It only fails on a CA file, which comes from -ca-cert.
		return opts, nil, usagef("invalid -%v", err)
	}
	return opts, crawler, nil
}
