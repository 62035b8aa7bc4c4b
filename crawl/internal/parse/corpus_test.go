package parse_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/crawl/internal/parse"
)

// The corpus (testdata/corpus) holds NodeInfo documents real servers
// sent, copied byte for byte from other projects' test suites, the schemas'
// examples and bug reports; MANIFEST.tsv says where each came from. The
// expectations below were written by reading each file, not by running the
// parser.

const corpusDir = "testdata/corpus"

// want is what a person reading a NodeInfo document expects a check to
// keep from it. Counts of -1 mean not said (NULL).
type want struct {
	software, version, docVersion                  string
	users, activeMonth, activeHalfyear, localPosts int64
	open                                           string // "true", "false" or "" for not said
	name, description                              string // "" when not checked or not said; see checkTexts
	unusable                                       []string
}

// corpusNodeInfo is every NodeInfo document of the corpus and what it
// yields; each of them makes a live instance.
var corpusNodeInfo = map[string]want{
	"activity-relay.json": {software: "activity-relay", version: "2.0.5", docVersion: "2.1",
		users: 1, activeMonth: 1, activeHalfyear: 1, localPosts: -1, open: "true"},
	// openRegistrations is the string "FALSE": a common spelling of false.
	"akkoma-soc.hyena.network.json": {software: "akkoma", version: "3.0.0", docVersion: "2.0",
		users: 1, activeMonth: -1, activeHalfyear: -1, localPosts: 7, open: "false",
		name: "HyNET Social", description: "Akkoma: The cooler fediverse server"},
	"aoderelay-relay.asonix.dog.json": {software: "aoderelay", version: "v0.1.0-master", docVersion: "2.0",
		users: 1, activeMonth: 1, activeHalfyear: 1, localPosts: 0, open: "false"},
	"badgefed-badgefed.org.json": {software: "badgefed", version: "1.0.0", docVersion: "2.1",
		users: 3, activeMonth: 3, activeHalfyear: 3, localPosts: 152, open: "false", name: "BadgeFed (VocalCat)"},
	"catodon.json": {software: "catodon", version: "24.04-dev.2", docVersion: "2.1",
		users: 294, activeMonth: 139, activeHalfyear: 292, localPosts: 22616, open: "true", name: "Catodon Social"},
	// More active users in half a year than in total: said, so kept.
	"corgidon-banana.dog.json": {software: "corgidon", version: "3.1.3+corgi", docVersion: "2.1",
		users: 203, activeMonth: 115, activeHalfyear: 224, localPosts: 28856, open: "true", name: "Banana.dog"},
	// NodeInfo 1.0: protocols as an object of inbound and outbound.
	"diaspora-iliketoast.net-1.0.json": {software: "diaspora", version: "0.7.4.0-pd0313756", docVersion: "1.0",
		users: 348, activeMonth: 62, activeHalfyear: 123, localPosts: 8522, open: "true", name: "I Like Toast"},
	"diaspora-iliketoast.net-2.0.json": {software: "diaspora", version: "0.7.4.0-pd0313756", docVersion: "2.0",
		users: 348, activeMonth: 62, activeHalfyear: 123, localPosts: 8522, open: "true", name: "I Like Toast"},
	// Protocols beyond ActivityPub, services of both kinds, and an emoji in
	// the name.
	"friendica-2023.05.json": {software: "friendica", version: "2023.05-1518", docVersion: "2.0",
		users: 1926, activeMonth: 352, activeHalfyear: 854, localPosts: 79804, open: "true", name: "social.example.org 🍀"},
	// An empty nodeDescription says nothing.
	"firefish.json": {software: "firefish", version: "20240504", docVersion: "2.1",
		users: 9, activeMonth: 7, activeHalfyear: 7, localPosts: 23857, open: "false", name: "Firefish"},
	// users is an empty object: no counts, nothing unusable.
	"gotosocial-gts.superseriousbusiness.org.json": {software: "gotosocial", version: "0.6.0 git-f9e5ec9", docVersion: "2.0",
		users: -1, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "false"},
	"lemmy-0.18.5.json": {software: "lemmy", version: "0.18.5", docVersion: "2.0",
		users: 149738, activeMonth: 10536, activeHalfyear: 26917, localPosts: 234483, open: "true"},
	"lemmy-cubing.social.json": {software: "lemmy", version: "0.17.3", docVersion: "2.0",
		users: 74234, activeMonth: 5, activeHalfyear: 5, localPosts: 2, open: "true"},
	"mastodon-4.0.2.json": {software: "mastodon", version: "4.0.2", docVersion: "2.0",
		users: 20, activeMonth: 21, activeHalfyear: 21, localPosts: 415, open: "true"},
	"mastodon-asonix.dog.json": {software: "mastodon", version: "3.1.3-asonix-changes", docVersion: "2.0",
		users: 19, activeMonth: 5, activeHalfyear: 5, localPosts: 43036, open: "false"},
	// metadata is [], PHP's empty object.
	"mastodon-masto.asonix.dog.json": {software: "mastodon", version: "4.0.0rc2-asonix-changes", docVersion: "2.0",
		users: 7, activeMonth: 4, activeHalfyear: 7, localPosts: 12359, open: "false"},
	"mastodon-mastodon.social-4.5.json": {software: "mastodon", version: "4.5.0-nightly.2025-07-11", docVersion: "2.0",
		users: 2805128, activeMonth: 278110, activeHalfyear: 811772, localPosts: 138439181, open: "true",
		name: "Mastodon", description: "The original server operated by the Mastodon gGmbH non-profit"},
	"mastodon-mastodon.social.json": {software: "mastodon", version: "4.3.0-nightly.2024-04-30", docVersion: "2.0",
		users: 1935016, activeMonth: 238223, activeHalfyear: 618795, localPosts: 90175135, open: "true",
		name: "Mastodon", description: "The original server operated by the Mastodon gGmbH non-profit"},
	"meisskey-meisskey.one.json": {software: "meisskey", version: "10.102.699-m544", docVersion: "2.1",
		users: 1123, activeMonth: 89, activeHalfyear: 305, localPosts: 268739, open: "true", name: "meisskey.one"},
	"peertube-video.blender.org.json": {software: "peertube", version: "5.0.0", docVersion: "2.0",
		users: 5, activeMonth: 0, activeHalfyear: 2, localPosts: 1018, open: "false",
		name: "Blender Video", description: "Blender Foundation PeerTube instance."},
	"pixelfed-pixelfed.social.json": {software: "pixelfed", version: "0.12.0", docVersion: "2.0",
		users: 112832, activeMonth: 8921, activeHalfyear: 24366, localPosts: 24059868, open: "true", name: "pixelfed"},
	// localPosts is an object ({"all":3,"direct":1}): unknown, and said so.
	"pleroma-localposts-object.json": {software: "pleroma", version: "0.7.4.0-pd0313756", docVersion: "2.1",
		users: 348, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "true", unusable: []string{"usage.localPosts"}},
	"pleroma-soc.hyena.network.json": {software: "pleroma", version: "2.2.50-724-gf917285b-develop+HyNET-prod", docVersion: "2.0",
		users: 19, activeMonth: -1, activeHalfyear: -1, localPosts: 3444, open: "true",
		name: "HyNET Social", description: "All the cackling for your hyaenid needs."},
	"schema-example-1.0.json": {software: "diaspora", version: "0.5.0", docVersion: "1.0",
		users: 123, activeMonth: 23, activeHalfyear: 42, localPosts: 500, open: "true"},
	"schema-example-1.1.json": {software: "diaspora", version: "0.5.0", docVersion: "1.1",
		users: 123, activeMonth: 23, activeHalfyear: 42, localPosts: 500, open: "true"},
	"schema-example-2.0.json": {software: "diaspora", version: "0.5.0", docVersion: "2.0",
		users: 123, activeMonth: 23, activeHalfyear: 42, localPosts: 500, open: "true"},
	"schema-example-2.1.json": {software: "diaspora", version: "0.5.0", docVersion: "2.1",
		users: 123, activeMonth: 23, activeHalfyear: 42, localPosts: 500, open: "true"},
	// 2.2 names the instance in its own object.
	"schema-example-2.2.json": {software: "diaspora", version: "0.5.0", docVersion: "2.2",
		users: 123, activeMonth: 23, activeHalfyear: 42, localPosts: 500, open: "true",
		name: "FI𝑓F fediverse", description: "Welcome to the FI𝑓F fediverse server"},
	// A bridge that answers its well-known path with the document itself.
	"skybridge.fly.dev.json": {software: "mastodon", version: "4.1.2", docVersion: "2.0",
		users: 3398, activeMonth: 3398, activeHalfyear: 3398, localPosts: 12074608, open: "false"},
}

// corpusWellKnown is every discovery document of the corpus and the links
// it yields, best first.
var corpusWellKnown = map[string][]parse.Link{
	"asonix.dog.json":      {{"2.0", "https://asonix.dog/nodeinfo/2.0"}},
	"banana.dog.json":      {{"2.1", "https://banana.dog/nodeinfo/2.1"}, {"2.0", "https://banana.dog/nodeinfo/2.0"}},
	"functional.cafe.json": {{"2.0", "https://functional.cafe/nodeinfo/2.0"}},
	// links is one object, and a second link sits beside links under
	// "0", outside the JRD: only the first is a link.
	"hubzilla-buggy-links-object.json":   {{"1.0", "https://example.com/nodeinfo/1.0"}},
	"hubzilla-buggy-single-link.json":    {{"1.0", "https://example.com/nodeinfo/1.0"}},
	"lemmy.ml-links-object.json":         {{"2.0", "https://lemmy.ml/nodeinfo/2.0.json"}},
	"lemmy.ml-links-object-compact.json": {{"2.0", "https://lemmy.ml/nodeinfo/2.0.json"}},
	"masto.asonix.dog.json":              {{"2.0", "https://masto.asonix.dog/nodeinfo/2.0"}},
	"relay.asonix.dog.json":              {{"2.0", "https://relay.asonix.dog/nodeinfo/2.0.json"}},
	// href before rel in each link.
	"soc.hyena.network.json": {{"2.1", "https://soc.hyena.network/nodeinfo/2.1.json"}, {"2.0", "https://soc.hyena.network/nodeinfo/2.0.json"}},
}

func TestCorpusNodeInfo(t *testing.T) {
	files := corpusFiles(t, "nodeinfo")
	for _, f := range files {
		w, ok := corpusNodeInfo[f]
		if !ok {
			t.Errorf("nodeinfo/%s has no expectation", f)
			continue
		}
		t.Run(f, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(corpusDir, "nodeinfo", f))
			if err != nil {
				t.Fatal(err)
			}
			ni, err := parse.ParseNodeInfo(body)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if ni.Software != w.software || ni.SoftwareVersion != w.version || ni.Version != w.docVersion {
				t.Errorf("software %q %q, document version %q; want %q %q, %q", ni.Software, ni.SoftwareVersion, ni.Version, w.software, w.version, w.docVersion)
			}
			for _, c := range []struct {
				field string
				got   *int64
				want  int64
			}{{"users", ni.Users, w.users}, {"activeMonth", ni.ActiveMonth, w.activeMonth},
				{"activeHalfyear", ni.ActiveHalfyear, w.activeHalfyear}, {"localPosts", ni.LocalPosts, w.localPosts}} {
				if (c.got == nil) != (c.want < 0) || c.got != nil && *c.got != c.want {
					t.Errorf("%s = %v, want %d (-1: not said)", c.field, deref(c.got), c.want)
				}
			}
			open := ""
			if ni.OpenRegistrations != nil {
				open = map[bool]string{true: "true", false: "false"}[*ni.OpenRegistrations]
			}
			if open != w.open {
				t.Errorf("openRegistrations %q, want %q", open, w.open)
			}
			if ni.Name != w.name {
				t.Errorf("name %q, want %q", ni.Name, w.name)
			}
			if w.description != "" && ni.Description != w.description {
				t.Errorf("description %q, want %q", ni.Description, w.description)
			}
			if !slices.Equal(ni.Unusable, w.unusable) {
				t.Errorf("unusable %q, want %q", ni.Unusable, w.unusable)
			}
		})
	}
	for f := range corpusNodeInfo {
		if !slices.Contains(files, f) {
			t.Errorf("expectation for nodeinfo/%s, which is not in the corpus", f)
		}
	}
}

func TestCorpusWellKnown(t *testing.T) {
	files := corpusFiles(t, "wellknown")
	for _, f := range files {
		w, ok := corpusWellKnown[f]
		if !ok {
			t.Errorf("wellknown/%s has no expectation", f)
			continue
		}
		body, err := os.ReadFile(filepath.Join(corpusDir, "wellknown", f))
		if err != nil {
			t.Fatal(err)
		}
		ls, err := parse.ParseWellKnown(body)
		if err != nil || !slices.Equal(ls, w) {
			t.Errorf("%s: %+v, %v; want %+v", f, ls, err, w)
		}
	}
	for f := range corpusWellKnown {
		if !slices.Contains(files, f) {
			t.Errorf("expectation for wellknown/%s, which is not in the corpus", f)
		}
	}
}

// TestCorpusManifest: every file of the corpus has its provenance and
// licence in MANIFEST.tsv, and the manifest names no file that is not there.
func TestCorpusManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	header := true
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if header {
			if want := []string{"file", "source", "item", "licence"}; !slices.Equal(cols, want) {
				t.Fatalf("header %q, want %q", cols, want)
			}
			header = false
			continue
		}
		if len(cols) != 4 || slices.Contains(cols, "") {
			t.Errorf("manifest line %q: want four non-empty columns", line)
			continue
		}
		if !strings.HasPrefix(cols[1], "github.com/") && !strings.HasPrefix(cols[1], "https://github.com/") {
			t.Errorf("%s: source %q is neither a repository nor an issue thread", cols[0], cols[1])
		}
		if listed[cols[0]] {
			t.Errorf("%s listed twice", cols[0])
		}
		listed[cols[0]] = true
	}
	for _, kind := range []string{"nodeinfo", "wellknown"} {
		for _, f := range corpusFiles(t, kind) {
			if !listed[kind+"/"+f] {
				t.Errorf("%s/%s is not in MANIFEST.tsv", kind, f)
			}
			delete(listed, kind+"/"+f)
		}
	}
	for f := range listed {
		t.Errorf("MANIFEST.tsv lists %s, which is not in the corpus", f)
	}
}

func corpusFiles(t *testing.T, kind string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(corpusDir, kind))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		t.Fatalf("no %s files in the corpus", kind)
	}
	return names
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// addCorpus seeds a fuzz target with the captured documents of one kind.
func addCorpus(f *testing.F, kind string) {
	entries, err := os.ReadDir(filepath.Join(corpusDir, kind))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		body, err := os.ReadFile(filepath.Join(corpusDir, kind, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
}
