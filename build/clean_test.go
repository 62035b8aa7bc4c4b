package build_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/build/buildtest"

	"github.com/fediverse-observer/observer/internal/testsupport"
)

// unclean are texts a hand-edited or foreign snapshot could hold: controls,
// invalid UTF-8, noncharacters, bidi overrides, C1 controls, line and
// paragraph separators, NUL.
var unclean = []string{
	"ctl\x00\x01\x08\x0b\x0c\x1b[2J\x07\x7f end",
	"bad utf8 \xff\xfe\xc3",
	"nonchar \uFFFE\uFFFF",
	"bidi \u202Egnp.exe\u202C \u2066iso\u2069",
	"c1 \u0085\u0080\u009f",
	"lsep \u2028 psep \u2029",
	"surrogate \xed\xa0\x80",
	"\t=cmd|' /C calc'!A0",
	"\r\n=1+1",
}

// uncleanData is a sample whose instances, stats and transitions carry the
// unclean texts in every field, and hosts that are not host names.
func uncleanData() *buildtest.Fake {
	d := buildtest.Sample(3, now)
	var live []observer.Instance
	for i, w := range unclean {
		inst := observer.Instance{
			Host: "w" + string(rune('a'+i)) + ".example.net", State: observer.State("live" + w),
			Software: w, Version: w, Name: w, Description: w,
			FirstAliveAt: now.Add(-time.Duration(i+1) * time.Minute), DiscoveredAt: now.Add(-time.Hour),
		}
		d.NewList = append(d.NewList, inst)
		live = append(live, inst)
	}
	for _, h := range []string{"zz\u2028evil.example\x0bx\x00", "zz\u202eevil.example", "zz evil.example", "zz\nforged.example"} {
		bad := observer.Instance{Host: h, State: observer.StateLive, Software: "s", FirstAliveAt: now.Add(-time.Second)}
		d.NewList = append(d.NewList, bad)
		live = append(live, bad)
	}
	// The live list stays sorted by host (weird hosts sort after "w…").
	d.LiveList = append(d.LiveList, live...)
	slices.SortFunc(d.LiveList, func(a, b observer.Instance) int { return strings.Compare(a.Host, b.Host) })
	for _, w := range unclean {
		d.StatsValue.BySoftware = append(d.StatsValue.BySoftware, observer.SoftwareCount{Software: w, Live: 1})
		d.Transitions = append([]observer.Transition{{Host: "wa.example.net", From: observer.StateLive, To: observer.StateMoved,
			At: now.Add(-time.Minute), MovedTo: "x" + w}}, d.Transitions...)
	}
	d.Transitions = append([]observer.Transition{{Host: "zz\u202eevil.example", From: observer.StateLive, To: observer.StateDying, At: now}}, d.Transitions...)
	return d
}

// forbiddenRune reports characters no published file may carry: C0
// controls other than the files' own line breaks and tabs, DEL, C1
// controls, bidi controls, line and paragraph separators, noncharacters.
func forbiddenRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	case r == 0x2028, r == 0x2029, r == 0xFFFE, r == 0xFFFF, r == 0xFEFF:
		return true
	}
	return false
}

// Every file the builder publishes is valid UTF-8 (XML and JSON well
// formed) and carries no control, bidi override or separator character,
// whatever texts the data source hands it: the builder cleans instance
// texts as the crawler does, and skips hosts that are not host names.
func TestPublishedFilesHoldOnlyCleanText(t *testing.T) {
	out, _ := mustBuild(t, t.TempDir(), testConfig(), uncleanData())
	files := 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		rel, _ := filepath.Rel(out, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !utf8.Valid(b) {
			t.Errorf("%s is not valid UTF-8", rel)
			return nil
		}
		for i, r := range string(b) {
			if forbiddenRune(r) {
				t.Errorf("%s holds %U at byte %d: %q", rel, r, i, around(string(b), i))
				break
			}
		}
		// Escapes must not bring them back either: decode XML and JSON.
		var texts []string
		switch filepath.Ext(p) {
		case ".atom", ".xml":
			dec := xml.NewDecoder(bytes.NewReader(b))
			for {
				tok, err := dec.Token()
				if err == io.EOF {
					break
				} else if err != nil {
					t.Errorf("%s: not well-formed XML: %v", rel, err)
					break
				}
				switch tok := tok.(type) {
				case xml.CharData:
					texts = append(texts, string(tok))
				case xml.StartElement:
					for _, a := range tok.Attr {
						texts = append(texts, a.Value)
					}
				}
			}
		case ".json":
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: not valid JSON: %v", rel, err)
			}
			texts = jsonStrings(v, texts)
		}
		for _, s := range texts {
			if strings.IndexFunc(s, forbiddenRune) >= 0 || strings.ContainsRune(s, utf8.RuneError) {
				t.Errorf("%s: decoded text %q holds a forbidden character", rel, s)
				break
			}
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("walk: %d files, %v", files, err)
	}
	parseFeed(t, filepath.Join(out, "new.atom"))

	// live.txt lists host names only, one a line.
	sc := bufio.NewScanner(strings.NewReader(testsupport.ReadFile(t, filepath.Join(out, "live.txt"))))
	for sc.Scan() {
		if h := sc.Text(); !hostShaped(h) {
			t.Errorf("live.txt lists %q", h)
		}
	}
	// The texts are there, cleaned, not dropped.
	assertContains(t, "new.csv", testsupport.ReadFile(t, filepath.Join(out, "new.csv")), "ctl [2J end", "bidi gnp.exe iso", "nonchar,", "'=cmd|' /C calc'!A0")
}

func jsonStrings(v any, out []string) []string {
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, e := range v {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		for k, e := range v {
			out = jsonStrings(e, append(out, k))
		}
	}
	return out
}

func hostShaped(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}

func around(s string, i int) string {
	return s[max(i-40, 0):min(i+40, len(s))]
}

// Instance texts are cut to the crawler's caps before they are published,
// so a data source with huge texts cannot blow up the site: every file
// stays small.
func TestHugeInstanceTextsStaySmall(t *testing.T) {
	data := buildtest.Sample(3, now)
	big := strings.Repeat("&<", 1<<19) // 1 MiB, and every byte escapes
	for _, l := range [][]observer.Instance{data.NewList, data.LiveList} {
		for i := range l {
			l[i].Name, l[i].Description, l[i].Software, l[i].Version = big, big, big, big
		}
	}
	for i := range data.StatsValue.BySoftware {
		data.StatsValue.BySoftware[i].Software = big
	}
	out, _ := mustBuild(t, t.TempDir(), testConfig(), data)
	const limit = 256 << 10
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > limit {
			rel, _ := filepath.Rel(out, p)
			t.Errorf("%s is %d bytes, over %d", rel, info.Size(), limit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Host names are kept or left out by their shape at its edges: labels of 1
// to 63 bytes, 253 bytes in all. Only the bad characters were tried, so a
// limit off by one, or an empty host or label let through, went unseen; an
// empty line or a "a..b" in live.txt breaks whoever reads it line by line.
func TestLiveListKeepsHostsByShapeAtTheLimits(t *testing.T) {
	rep := strings.Repeat
	host253 := rep("c", 63) + "." + rep("c", 63) + "." + rep("c", 63) + "." + rep("c", 61)
	host254 := rep("d", 63) + "." + rep("d", 63) + "." + rep("d", 63) + "." + rep("d", 62)
	label63 := rep("b", 63) + ".example.net"
	label64 := rep("e", 64) + ".example.net"
	if len(host253) != 253 || len(host254) != 254 {
		t.Fatalf("test hosts are %d and %d bytes", len(host253), len(host254))
	}
	kept := []string{host253, label63, "a.example.net", "x"}
	left := []string{"", "a..example.net", "x.example.net.", ".x.example.net", label64, host254}
	d := &buildtest.Fake{}
	for _, h := range append(slices.Clone(kept), left...) {
		d.LiveList = append(d.LiveList, observer.Instance{Host: h, State: observer.StateLive, Software: "s"})
	}
	slices.SortFunc(d.LiveList, func(a, b observer.Instance) int { return strings.Compare(a.Host, b.Host) })
	out, _ := mustBuild(t, t.TempDir(), testConfig(), d)

	slices.Sort(kept)
	want := strings.Join(kept, "\n") + "\n"
	if got := testsupport.ReadFile(t, filepath.Join(out, "live.txt")); got != want {
		t.Errorf("live.txt:\n%q\nwant:\n%q", got, want)
	}
}
