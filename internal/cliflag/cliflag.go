// Package cliflag is the command-line syntax of observer's commands, on top
// of the flag package: flags may come after positional arguments; a flag
// error is reported once (one line naming the flag and what is wrong, then
// the usage) and says what is wanted; a few value types (a path that is not
// empty, an RFC 3339 time, a duration that is not negative, a repeatable
// string); and the logging flags every command takes (Log).
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode"
)

// UsageError marks errors caused by how a command was called. Reported
// means the message and the usage were already printed (by Parse).
type UsageError struct {
	Err      error
	Reported bool
}

func (u *UsageError) Error() string { return u.Err.Error() }
func (u *UsageError) Unwrap() error { return u.Err }

// Usagef is a UsageError not yet reported.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// NewFlagSet makes the flag set of command name ("observer crawl"), whose
// errors come back to the caller instead of exiting, and whose help goes to
// stderr.
func NewFlagSet(stderr io.Writer, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimSpace("usage: "+name+" "+usage))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(stderr, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// Parse parses args. A flag error is reported here, once: one line naming
// the flag and what is wrong with it, then the usage; the usageError that
// comes back is marked as reported, so run does not repeat it.
//
// Flags may come after positional arguments (observer check HOST --json),
// which the flag package alone does not allow; "--" ends flag parsing. An
// argument that starts with "-" but whose name holds whitespace ("-- a
// comment\nSELECT 1", an SQL query beginning with a comment) is no flag:
// it is taken as a positional argument.
func Parse(fs *flag.FlagSet, args []string) error {
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
				return &UsageError{Err: err, Reported: true}
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

// Given names the flags given on the command line, as opposed to those
// left at their defaults (which mean "as the config file says").
func Given(fs *flag.FlagSet) map[string]bool {
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
		// The commands' own types (Time, a duration…) say what they want
		// themselves; the flag package's int and bool do not.
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

// ParseNoArgs parses args for a command that takes flags only, refusing
// positional arguments.
func ParseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Path is a path that, when given, is not empty: an empty --data
// would scatter the data directory's folders over the current directory,
// and an empty --config would quietly mean observer.toml.
type Path string

func (p *Path) String() string { return string(*p) }

func (p *Path) Set(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	*p = Path(s)
	return nil
}

// Time is an RFC 3339 time; Given says whether it was set.
type Time struct {
	Value time.Time
	Given bool
}

func (f *Time) String() string {
	if !f.Given {
		return ""
	}
	return f.Value.Format(time.RFC3339)
}

func (f *Time) Set(s string) error {
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
	f.Value, f.Given = t.UTC(), true
	return nil
}

// Duration is a duration that Parse reads (observer's commands give the
// config file's syntax, config.ParseDuration: Go's plus whole days),
// never negative; Given says whether it was set.
type Duration struct {
	Value time.Duration
	Given bool
	Parse func(string) (time.Duration, error)
}

func (f *Duration) String() string {
	if !f.Given {
		return ""
	}
	return f.Value.String()
}

func (f *Duration) Set(s string) error {
	d, err := f.Parse(s)
	if err != nil {
		if _, perr := f.Parse(strings.TrimPrefix(s, "-")); perr == nil && strings.HasPrefix(s, "-") {
			return errors.New("must not be negative")
		}
		return errors.New("want a duration like 90s, 45m, 2h30m or 7d")
	}
	f.Value, f.Given = d, true
	return nil
}

// List collects a repeatable flag.
type List []string

func (l *List) String() string     { return strings.Join(*l, ",") }
func (l *List) Set(s string) error { *l = append(*l, s); return nil }

// Log is the logging flags every command takes: -log-format (text or
// json) and -quiet (warnings and errors only).
type Log struct {
	Format string
	Quiet  bool
}

// Register defines the flags on fs.
func (l *Log) Register(fs *flag.FlagSet) {
	fs.StringVar(&l.Format, "log-format", "text", "log format: text or json")
	fs.BoolVar(&l.Quiet, "quiet", false, "log only warnings and errors")
}

// Logger is the logger the flags ask for, writing to w.
func (l Log) Logger(w io.Writer) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if l.Quiet {
		opts.Level = slog.LevelWarn
	}
	switch l.Format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, Usagef("invalid -log-format %q: want text or json", l.Format)
}

// Args are the flags as given, for a child process that logs as its
// parent does.
func (l Log) Args() []string {
	if l.Quiet {
		return []string{"-log-format", l.Format, "-quiet"}
	}
	return []string{"-log-format", l.Format}
}
