package hostname

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Blocklist is the operator's list of hosts never to crawl or publish
// (data/blocklist.txt): exact hosts, and "*.domain" entries that block a
// domain and every host below it. It is read and checked here; it is
// matched in one place, in SQL (duck's blocking macro), for every use.
type Blocklist struct {
	exact    map[string]bool
	suffixes map[string]bool // "domain" for an entry "*.domain"
}

// ReadBlocklist parses a blocklist: one entry per line, "#" comments and
// blank lines allowed. Each error names the line and what is wrong with it;
// the valid entries are returned all the same.
func ReadBlocklist(r io.Reader) (*Blocklist, []error) {
	b := &Blocklist{exact: map[string]bool{}, suffixes: map[string]bool{}}
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		domain, wildcard := strings.CutPrefix(line, "*.")
		host, err := Normalize(domain)
		h := string(host)
		if err != nil && wildcard {
			if d, ok := wildcardDomain(domain); ok {
				h, err = d, nil
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %q: %w", n, line, err))
			continue
		}
		if wildcard {
			b.suffixes[h] = true
		} else {
			b.exact[h] = true
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, readError(n, err))
	}
	return b, errs
}

// wildcardDomain normalises the domain of a "*.domain" entry that is not a
// valid host because it is a public suffix (duckdns.org, github.io, or a
// TLD): the hosts below one are where a spam farm gets free subdomains by
// the million, and blocking them all is the operator's remedy. The hosts
// below it must still be valid names, so a typo stays an error rather than
// an entry that blocks nothing.
func wildcardDomain(domain string) (string, bool) {
	const label = "x."
	h, err := Normalize(label + domain)
	if err != nil {
		return "", false
	}
	return strings.TrimPrefix(string(h), label), true
}

// Len is the number of entries.
func (b *Blocklist) Len() int {
	if b == nil {
		return 0
	}
	return len(b.exact) + len(b.suffixes)
}

// Entries lists the entries in the file's form ("host" or "*.domain"),
// normalised, for handing to SQL, which matches them (duck.ViewParams).
func (b *Blocklist) Entries() []string {
	if b == nil {
		return nil
	}
	out := make([]string, 0, b.Len())
	for h := range b.exact {
		out = append(out, h)
	}
	for d := range b.suffixes {
		out = append(out, "*."+d)
	}
	return out
}
