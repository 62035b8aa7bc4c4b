package hostname_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/hostname"

	"github.com/fediverse-observer/observer"
)

// listSeeds are the interesting files of the unit tests, and lines the
// scanner treats specially.
var listSeeds = []string{
	"# seeds\nmastodon.social\n  Pixelfed.Social.  \n\n# comment line\nlemmy.world # trailing comment\nmastodon.social\n127.0.0.1\nfoo.invalidtld\n",
	"\n# an admin asked to be removed\nAsked.Example.Social.\n*.spam-farm.online   # every host below it\n*.not a domain\n10.0.0.1\n",
	"a.social\r\nb.social\r\n", "a.social", "*.", "*.*.x.social", "*.social", "**.x.social", "* .x.social",
	"x.social#c", "x.social #c", "#x.social", " # x.social", "Bücher.DE.", "фото.рф", "a..b", "[::1]:80",
	"user@host.social", "x.social:443", "*.x.social\n*.x.social\nx.social\n", "\xff.social", "a.social\x00",
	"a.social\rb.social", "a.social\n\n\n\nb c\n",
}

// A line over the scanner's 64 KiB buffer ends the file with an error, which
// names the last line read. (FuzzReadBlocklist found that ReadBlocklist's
// named none; the input is too big for a quick fuzz seed.)
func TestReadListsLineTooLong(t *testing.T) {
	in := "a.social\n" + strings.Repeat("x", 70_000) + "\nb.social\n"
	hosts, errs := hostname.ReadList(strings.NewReader(in))
	if len(hosts) != 1 || hosts[0] != "a.social" || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "after line 1: ") {
		t.Errorf("ReadList: %q, %v", hosts, errs)
	}
	b, errs := hostname.ReadBlocklist(strings.NewReader(in))
	if !slices.Equal(b.Entries(), []string{"a.social"}) || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "after line 1: ") {
		t.Errorf("ReadBlocklist: %q, %v", b.Entries(), errs)
	}
	// The first line too long: there is no line before it to name.
	first := strings.Repeat("x", 70_000) + "\nb.social\n"
	if hosts, errs := hostname.ReadList(strings.NewReader(first)); len(hosts) != 0 || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "line 1: ") {
		t.Errorf("ReadList, first line too long: %q, %v", hosts, errs)
	}
	if b, errs := hostname.ReadBlocklist(strings.NewReader(first)); b.Len() != 0 || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "line 1: ") {
		t.Errorf("ReadBlocklist, first line too long: %q, %v", b.Entries(), errs)
	}
}

var lineErr = regexp.MustCompile(`^(line|after line) ([0-9]+): `)

// errorLine checks that err names a line number at most lines (the file's
// line count), and returns it.
func errorLine(t *testing.T, in string, err error, lines int) int {
	t.Helper()
	m := lineErr.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("%.200q: error %q names no line", in, err)
	}
	n, _ := strconv.Atoi(m[2])
	if n > lines || n < 1 && m[1] == "line" {
		t.Fatalf("%.200q: error %q names line %d of %d", in, err, n, lines)
	}
	return n
}

// splitLines splits as bufio.ScanLines does.
// readLineByLine reads each line of in on its own with read, checks that
// errs, the whole file's errors, name their lines and are the lines' own
// errors in order, and returns what the lines gave, in order. complete is
// false when a line too long stopped the whole read (the lines after it
// were not read, so there is nothing to compare).
func readLineByLine[T comparable](t *testing.T, in string, errs []error, read func(line string) ([]T, []error)) (items []T, complete bool) {
	t.Helper()
	lines := splitLines(in)
	readErr := false
	for _, err := range errs {
		errorLine(t, in, err, len(lines))
		readErr = readErr || strings.HasPrefix(err.Error(), "after line")
	}
	if readErr {
		return nil, false
	}
	wantErrs := 0
	for i, l := range lines {
		got, e := read(l)
		items = append(items, got...)
		for _, err := range e {
			if wantErrs >= len(errs) || !strings.HasPrefix(err.Error(), "line 1: ") || !strings.HasPrefix(errs[wantErrs].Error(), fmt.Sprintf("line %d: ", i+1)) {
				t.Fatalf("%.200q: line %d alone gives %q, the file errors %q", in, i+1, err, errs)
			}
			if !strings.HasSuffix(errs[wantErrs].Error(), strings.TrimPrefix(err.Error(), "line 1")) {
				t.Fatalf("%.200q: line %d alone gives %q, in the file %q", in, i+1, err, errs[wantErrs])
			}
			wantErrs++
		}
	}
	if len(errs) != wantErrs {
		t.Fatalf("%.200q: %d errors, line by line %d", in, len(errs), wantErrs)
	}
	return items, true
}

func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func normalised(h string) bool {
	n, err := hostname.Normalize(h)
	return err == nil && string(n) == h
}

// FuzzReadList checks the seed list reader: every host it returns is
// normalised (Normalize gives it back unchanged), once; every error names
// its line; and each line is read on its own, so the file's hosts are its
// lines' hosts, deduplicated, and its errors are its lines' errors.
func FuzzReadList(f *testing.F) {
	for _, s := range listSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		hosts, errs := hostname.ReadList(strings.NewReader(in))
		for _, h := range hosts {
			if !normalised(string(h)) {
				t.Fatalf("%.200q: host %q is not normalised", in, h)
			}
		}
		perLine, complete := readLineByLine(t, in, errs, func(l string) ([]observer.Host, []error) {
			return hostname.ReadList(strings.NewReader(l))
		})
		if !complete {
			return
		}
		var want []observer.Host
		for _, x := range perLine {
			if !slices.Contains(want, x) {
				want = append(want, x)
			}
		}
		if !slices.Equal(hosts, want) {
			t.Fatalf("%.200q: hosts %q, line by line %q", in, hosts, want)
		}
	})
}

// FuzzReadBlocklist checks the blocklist reader: every entry is a
// normalised host or "*." and a domain (a host or a public suffix) whose
// hosts are normalised; every error
// names its line; and each line is read on its own.
func FuzzReadBlocklist(f *testing.F) {
	for _, s := range listSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, errs := hostname.ReadBlocklist(strings.NewReader(in))
		entries := b.Entries()
		if len(entries) != b.Len() {
			t.Fatalf("%.200q: %d entries, Len %d", in, len(entries), b.Len())
		}
		for _, e := range entries {
			h, wildcard := strings.CutPrefix(e, "*.")
			// A wildcard's domain may be a public suffix, but its hosts
			// are valid names.
			if !normalised(h) && !(wildcard && normalised("x-y."+h)) {
				t.Fatalf("%.200q: entry %q is not a normalised host or *.host", in, e)
			}
		}
		want, complete := readLineByLine(t, in, errs, func(l string) ([]string, []error) {
			lb, e := hostname.ReadBlocklist(strings.NewReader(l))
			return lb.Entries(), e
		})
		if !complete {
			return
		}
		slices.Sort(want)
		want = slices.Compact(want)
		slices.Sort(entries)
		if !slices.Equal(entries, want) {
			t.Fatalf("%.200q: entries %q, line by line %q", in, entries, want)
		}
	})
}
