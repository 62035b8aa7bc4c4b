package crawl

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/fediverse-observer/observer"
)

// Step is one line of a check's trace: a request made (Method, URL, Status,
// Bytes, Error) or a decision taken (Note), or both.
type Step struct {
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
	Status int    `json:"status,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	Error  string `json:"error,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Trace is what a check did, in order, for `observer check` to explain.
type Trace struct {
	Steps []Step `json:"steps"`
}

// Report is the machine-readable form of `observer check` (WriteJSON).
type Report struct {
	Result observer.Result `json:"result"`
	Steps  []Step          `json:"steps"`
}

// WriteJSON writes a check's result and trace as an indented Report, for
// scripts (`observer check --json`): every discovery, where WriteText
// lists the first few.
func WriteJSON(w io.Writer, r observer.Result, t Trace) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Report{Result: r, Steps: t.Steps})
}

// maxDiscoveriesShown is how many of a check's discoveries WriteText lists:
// a hub's peers list names thousands of hosts, all new to `observer check`,
// which reads no data directory, and they buried the rest of the text.
const maxDiscoveriesShown = 20

// WriteText writes a check's trace and result for a person (`observer
// check`). Texts that came
// from the host are shown quoted with control characters escaped, so a
// hostile name cannot rewrite the terminal.
func WriteText(w io.Writer, r observer.Result, t Trace) error {
	var b strings.Builder
	c := r.Check
	fmt.Fprintf(&b, "check %s at %s\n", safe(string(c.Host)), c.CheckedAt.UTC().Format("2006-01-02T15:04:05Z"))
	for _, s := range t.Steps {
		switch {
		case s.URL != "":
			fmt.Fprintf(&b, "  %s %s", s.Method, safe(s.URL))
			if s.Status != 0 {
				fmt.Fprintf(&b, " -> %d, %d bytes", s.Status, s.Bytes)
			}
			if s.Error != "" {
				fmt.Fprintf(&b, " -> failed: %s", safe(s.Error))
			}
			if s.Note != "" {
				fmt.Fprintf(&b, " (%s)", safe(s.Note))
			}
			b.WriteByte('\n')
		case s.Note != "":
			fmt.Fprintf(&b, "    %s\n", safe(s.Note))
		}
	}
	fmt.Fprintf(&b, "outcome: %s", c.Outcome)
	if c.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", c.HTTPStatus)
	}
	if c.Error != "" {
		fmt.Fprintf(&b, ": %s", safe(c.Error))
	}
	b.WriteByte('\n')
	if c.MovedTo != "" {
		fmt.Fprintf(&b, "moved to: %s\n", safe(string(c.MovedTo)))
	}
	if c.Software != "" {
		fmt.Fprintf(&b, "software: %s %s (NodeInfo %s)\n", safe(c.Software), safe(c.Version), safe(c.NodeInfoVersion))
		fmt.Fprintf(&b, "users: %s total, %s active this month, %s this half-year; local posts: %s; open registrations: %s\n",
			num(c.Users), num(c.ActiveMonth), num(c.ActiveHalfyear), num(c.LocalPosts), boolText(c.OpenRegistrations))
	}
	if c.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", strconv.Quote(c.Name))
	}
	if c.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", strconv.Quote(c.Description))
	}
	if c.PeersFetched {
		fmt.Fprintf(&b, "peers: %d valid, %d new\n", c.PeersCount, c.NewPeersCount)
	}
	if c.PeersNotModified {
		b.WriteString("peers: not modified since the last fetch (304)\n")
	}
	for i, d := range r.Discoveries {
		if i == maxDiscoveriesShown {
			fmt.Fprintf(&b, "  … and %d more new (observer check --json lists them all)\n", len(r.Discoveries)-i)
			break
		}
		fmt.Fprintf(&b, "  new: %s (via %s)\n", safe(string(d.Host)), safe(d.Via))
	}
	fmt.Fprintf(&b, "took %d ms, %d bytes\n", c.DurationMS, r.Bytes)
	_, err := io.WriteString(w, b.String())
	return err
}

// safe escapes anything that is not printable.
func safe(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}

func num(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func boolText(p *bool) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatBool(*p)
}
