package funcs

import (
	"bytes"
	"html/template"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// page stands for the builder's pages: where, sort and first must reach
// their fields, methods and params, and keep their list type.
type page struct {
	Title  string
	Weight int
	Date   time.Time
	Params map[string]any
	kind   string
}

func (p *page) Type() string { return p.kind }

type pages []*page

func (ps pages) Len() int { return len(ps) }

var testNow = time.Date(2026, 11, 28, 17, 30, 0, 0, time.UTC)

func testPages() pages {
	return pages{
		{Title: "Alpha", Weight: 2, Date: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), kind: "posts", Params: map[string]any{"tags": []any{"go", "web"}, "featured": true, "author": map[string]any{"name": "Ann"}}},
		{Title: "Beta", Weight: 1, Date: time.Date(2025, 3, 4, 0, 0, 0, 0, time.UTC), kind: "posts", Params: map[string]any{"tags": []any{"rust"}, "featured": false, "author": map[string]any{"name": "Bob"}}},
		{Title: "Gamma", Weight: 3, Date: time.Date(2023, 5, 6, 0, 0, 0, 0, time.UTC), kind: "notes", Params: map[string]any{"series": "x"}},
	}
}

func testOptions() Options {
	return Options{
		BaseURL: "https://example.org/sub/",
		Markdown: func(s string) (string, error) {
			return "<p>" + strings.ReplaceAll(strings.ReplaceAll(s, "**", "<strong>"), "<strong>x", "x") + "</p>\n", nil
		},
		Now:   func() time.Time { return testNow },
		Files: fstest.MapFS{"data/hello.txt": {Data: []byte("hello file")}},
		Assets: fstest.MapFS{
			"css/main.css": {Data: []byte("body{color:red}")},
			"js/a.js":      {Data: []byte("var a=1;")},
			"js/b.js":      {Data: []byte("var b=2;")},
		},
		I18n: Translations{
			"en": {
				"home":     {"other": "Home"},
				"readtime": {"one": "One minute", "other": "{{ .Count }} minutes"},
				"greeting": {"other": "Hello {{ .Name }}"},
			},
			"fr": {"home": {"other": "Accueil"}},
		},
		Language: "en",
		Publish:  func(string, []byte) error { return nil },
	}
}

// run executes one template against the test pages and returns the output.
func run(t *testing.T, opts Options, src string) (string, error) {
	t.Helper()
	fm, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.New("t").Funcs(fm).Parse(src)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = tpl.Execute(&b, map[string]any{"Pages": testPages(), "Params": map[string]any{"mainsections": []string{"posts"}, "description": "A <b>site</b>"}})
	return b.String(), err
}

// Each example is a template and what it prints, as in Hugo's own
// tpl/*/init.go examples.
var examples = []struct{ tpl, want string }{
	// compare
	{`{{ eq 1 1.0 }} {{ eq 1 "1" }} {{ eq "a" "b" "a" }} {{ ne 2 3 }}`, `true false true true`},
	{`{{ lt 1 2.5 }} {{ gt "b" "a" }} {{ ge 3 3 }} {{ le 4 3 }} {{ lt "10" "9" }}`, `true true true false true`},
	{`{{ cond (eq (add 2 2) 4) "2+2 is 4" "what?" }}`, `2&#43;2 is 4`},
	{`{{ "Hugo Rocks!" | default "Hugo Rules!" }}|{{ "" | default "Hugo Rules!" }}|{{ 0 | default 5 }}|{{ false | default true }}`, `Hugo Rocks!|Hugo Rules!|5|false`},
	{`{{ index .Params "missing" | default "fallback" }}`, `fallback`},
	{`{{ if ge hugo.Version "0.80" }}new{{ end }} {{ if lt hugo.Version "0.200.0" }}older than 0.200{{ end }}`, `new older than 0.200`},

	// collections
	{`{{ range where .Pages "Type" "posts" }}{{ .Title }} {{ end }}`, `Alpha Beta `},
	{`{{ range where .Pages "Type" "in" .Params.mainsections }}{{ .Title }} {{ end }}`, `Alpha Beta `},
	{`{{ range where .Pages "Weight" ">=" 2 }}{{ .Title }} {{ end }}`, `Alpha Gamma `},
	{`{{ range where .Pages "Params.featured" true }}{{ .Title }} {{ end }}`, `Alpha `},
	{`{{ range where .Pages "Params.Author.Name" "Bob" }}{{ .Title }} {{ end }}`, `Beta `},
	{`{{ range where .Pages "Params.series" "!=" nil }}{{ .Title }} {{ end }}`, `Gamma `},
	{`{{ range where .Pages "Params.tags" "intersect" (slice "web" "c") }}{{ .Title }} {{ end }}`, `Alpha `},
	{`{{ range where .Pages "Title" "like" "^[AB]" }}{{ .Title }} {{ end }}`, `Alpha Beta `},
	{`{{ range where .Pages "Type" "not in" (slice "posts") }}{{ .Title }} {{ end }}`, `Gamma `},
	{`{{ (where .Pages "Type" "posts").Len }}`, `2`},
	{`{{ range first 2 .Pages }}{{ .Title }} {{ end }}|{{ first 10 (slice 1 2) }}`, `Alpha Beta |[1 2]`},
	{`{{ (first 1 .Pages).Len }}`, `1`},
	{`{{ range last 1 .Pages }}{{ .Title }}{{ end }} {{ range after 2 .Pages }}{{ .Title }}{{ end }}`, `Gamma Gamma`},
	{`{{ range sort .Pages "Weight" }}{{ .Title }} {{ end }}`, `Beta Alpha Gamma `},
	{`{{ range sort .Pages "Date" "desc" }}{{ .Title }} {{ end }}`, `Beta Alpha Gamma `},
	{`{{ range sort .Pages "Params.author.name" "desc" }}{{ .Title }} {{ end }}`, `Beta Alpha Gamma `},
	{`{{ slice "B" "C" "A" | sort }} {{ sort (dict "b" 2 "a" 1 "c" 3) }} {{ sort (slice 3 1 2) "value" "desc" }}`, `[A B C] [1 2 3] [3 2 1]`},
	{`{{ if in "this string contains a substring" "substring" }}Substring found!{{ end }} {{ in (slice 1 2 3) 2 }} {{ in (slice "a") "b" }}`, `Substring found! true false`},
	{`{{ isset .Params "description" }} {{ isset .Params "Description" }} {{ isset .Params "nope" }} {{ isset (slice 1 2) 1 }} {{ isset (slice 1 2) 2 }}`, `true true false true false`},
	{`{{ delimit (slice "A" "B" "C") ", " " and " }}|{{ delimit (slice 1 2) "-" }}|{{ delimit (dict "b" 2 "a" 1) "," }}`, `A, B and C|1-2|1,2`},
	{`{{ $d := dict "title" "Hugo" "n" 2 }}{{ $d.title }} {{ index $d "n" }} {{ (dict (slice "a" "b") 1).a.b }}`, `Hugo 2 1`},
	{`{{ slice 1 2 3 | append 4 5 }} {{ append (slice "c") (slice "a" "b") }} {{ $s := slice }}{{ $s = $s | append "x" }}{{ $s }}`, `[1 2 3 4 5] [a b c] [x]`},
	{`{{ slice 1 2 3 2 | uniq }} {{ union (slice 1 2 3) (slice 3 4 5) }} {{ intersect (slice 1 2 3) (slice 2 3 4) }}`, `[1 2 3] [1 2 3 4 5] [2 3]`},
	{`{{ slice "a" "b" "c" "d" "e" "f" | complement (slice "b" "c") (slice "d" "e") }} {{ slice 1 2 3 | symdiff (slice 3 4) }}`, `[a f] [1 2 4]`},
	{`{{ seq 3 }} {{ seq 2 4 }} {{ seq 5 -2 1 }} {{ seq -2 }}`, `[1 2 3] [2 3 4] [5 3 1] [-1 -2]`},
	{`{{ index (slice "a" "b") 1 }} {{ index (dict "a" (dict "b" "deep")) "a" "b" }} {{ index (dict "a" (dict "b" "deep")) (slice "a" "b") }} {{ index nil "x" }}`, `b deep deep `},
	{`{{ $m := merge (dict "title" "Default" "description" "Yes") (dict "title" "Hugo Rocks!") }}{{ $m.title }} {{ $m.description }}`, `Hugo Rocks! Yes`},
	{`{{ (merge (dict "a" (dict "x" 1 "y" 2)) (dict "a" (dict "y" 3))).a }}`, `map[x:1 y:3]`},
	{`{{ querify "foo" 1 "bar" 2 "baz" "with spaces" }}`, `bar=2&amp;baz=with&#43;spaces&amp;foo=1`},
	{`{{ $s := newScratch }}{{ $s.Add "b" 2 }}{{ $s.Add "b" 2 }}{{ $s.Get "b" }} {{ $s.Set "l" (slice "a") }}{{ $s.Add "l" "b" }}{{ $s.Get "l" }}`, `4 [a b]`},
	{`{{ apply (slice "a" "b") "upper" "." }}`, `[A B]`},
	{`{{ len (shuffle (slice 1 2 3)) }} {{ collections.Reverse (slice 1 2 3) }}`, `3 [3 2 1]`},
	{`{{ keyVals "key" "a" "b" }}`, `key: [a b]`},

	// strings
	{`{{ replace "Batman and Robin" "Robin" "Catwoman" }} {{ replace "aabbaabb" "a" "z" 2 }} {{ strings.Replace "x.y" "." "-" }}`, `Batman and Catwoman zzbbaabb x-y`},
	{`{{ replaceRE "a+b" "X" "aabbaabbab" }} {{ replaceRE "a+b" "X" "aabbaabbab" 1 }} {{ replaceRE "^https?://([^/]+).*" "$1" "https://gohugo.io/docs" }}`, `XbXbX Xbaabbab gohugo.io`},
	{`{{ title "somewhere over the rainbow" }}|{{ title "the lord of the rings" }}|{{ title "Bat man" }}`, `Somewhere Over the Rainbow|The Lord of the Rings|Bat Man`},
	{`{{ lower "BatMan" }} {{ upper "BatMan" }} {{ strings.FirstUpper "hugo rocks!" }}`, `batman BATMAN Hugo rocks!`},
	{`{{ strings.Contains "abc" "b" }} {{ strings.ContainsAny "abc" "xyz" }} {{ hasPrefix "Hugo" "Hu" }} {{ strings.HasSuffix "Hugo" "go" }}`, `true false true true`},
	{`{{ strings.TrimSpace "  a  " }}|{{ trim "++Batman--" "+-" }}|{{ "aabbaa" | strings.TrimLeft "a" }}|{{ "aabbaa" | strings.TrimRight "a" }}|{{ "aabbaa" | strings.TrimPrefix "a" }}|{{ "aabbaa" | strings.TrimSuffix "aa" }}`, `a|Batman|bbaa|aabb|abbaa|aabb`},
	{`{{ split "a,b,c" "," }} {{ len (split "a,b,c" ",") }} {{ "aabab" | strings.Count "a" }} {{ "yo" | strings.Repeat 4 }}`, `[a b c] 3 3 yoyoyoyo`},
	{`{{ substr "BatMan" 0 -3 }} {{ substr "BatMan" 3 3 }} {{ substr "BatMan" -3 }} {{ slicestr "BatMan" 0 3 }} {{ slicestr "BatMan" 3 }}`, `Bat Man Man Bat Man`},
	{`{{ findRE "[G|g]o" "Hugo is a static side generator written in Go." 1 }} {{ findRE "o" "foo" }}`, `[go] [o o]`},
	{`{{ range findRESubmatch "(\\w+)=(\\d+)" "a=1 b=2" }}{{ index . 1 }}{{ index . 2 }} {{ end }}`, `a1 b2 `},
	{`{{ "this is a very long text" | truncate 10 " ..." }}|{{ truncate 10 "this is a very long text" }}|{{ truncate 100 "short & sweet" }}`, `this is a ...|this is a …|short &amp; sweet`},
	{`{{ "With <em>emphasis</em> inside, long." | safeHTML | truncate 14 }}`, `With <em>emphasis …</em>`},
	{`{{ "<p>Blockhead</p>\n" | chomp }} {{ countwords "<p>one two</p> three" }} {{ countrunes "a b c" }}`, `&lt;p&gt;Blockhead&lt;/p&gt; 3 3`},
	{`{{ "aab" | strings.ReplacePairs "a" "b" "b" "c" }}`, `bbc`},

	// math
	{`{{ add 1 2 }} {{ add 1.5 2 }} {{ add "a" "b" }} {{ add 1 2 3 }} {{ sub 3 2 }} {{ sub 3 0.5 }} {{ mul 2 3 }} {{ mul 2 1.5 }}`, `3 3.5 ab 6 1 2.5 6 3`},
	{`{{ div 6 3 }} {{ div 7 2 }} {{ div 7 2.0 }} {{ mod 15 4 }} {{ modBool 15 3 }} {{ pow 2 3 }}`, `2 3 3.5 3 true 8`},
	{`{{ math.Round 1.5 }} {{ math.Ceil 2.1 }} {{ math.Floor 1.9 }} {{ math.Max 1 5 3 }} {{ math.Min (slice 4 2 8) }} {{ math.Abs -2.1 }} {{ math.Sqrt 81 }}`, `2 3 1 5 2 2.1 9`},

	// safe
	{`{{ "<b>Bat&Man</b>" | safeHTML }} {{ "<b>x</b>" }}`, `<b>Bat&Man</b> &lt;b&gt;x&lt;/b&gt;`},
	{`<a href="{{ "javascript:alert(1)" }}">a</a><a href="{{ "irc://x" | safeURL }}">b</a>`, `<a href="#ZgotmplZ">a</a><a href="irc://x">b</a>`},
	{`<p {{ "class=\"x\"" | safeHTMLAttr }}>x</p><style>a{color:{{ "red" | safeCSS }}}</style><script>var x={{ "1+1" | safeJS }};</script>`, `<p class="x">x</p><style>a{color:red}</style><script>var x=1+1;</script>`},

	// urls
	{`{{ relURL "about/" }} {{ relURL "/about/" }} {{ relURL "" }} {{ relURL "https://other.org/x" }} {{ relURL "https://example.org/sub/x/" }}`, `/sub/about/ /about/ /sub/ https://other.org/x /sub/x/`},
	{`{{ absURL "about/" }} {{ absURL "/about/" }} {{ absURL "" }} {{ absURL "https://other.org/x" }} {{ absLangURL "css/a.css" }} {{ relLangURL "tags/" }}`, `https://example.org/sub/about/ https://example.org/about/ https://example.org/sub/ https://other.org/x https://example.org/sub/css/a.css /sub/tags/`},
	{`{{ urlize "My First Post!" }} {{ urlize "Ünicode Tags" }} {{ "This is a title" | anchorize }} {{ anchorize "Hello, World!" }}`, `my-first-post %C3%BCnicode-tags this-is-a-title hello-world`},
	{`{{ (urls.Parse "https://example.org/a?b=c").Host }} {{ urls.JoinPath "https://example.org" "foo" "bar/" }}`, `example.org https://example.org/foo/bar/`},

	// time
	{`{{ now.Year }} {{ now.Format "2006-01-02" }} {{ (time "2015-01-21").Year }} {{ dateFormat "Monday, Jan 2, 2006" "2015-01-21" }}`, `2026 2026-11-28 2015 Wednesday, Jan 21, 2015`},
	{`{{ time.Format ":date_long" "2015-01-21T10:00:00Z" }} {{ time.Format ":date_medium" (time "2015-01-21") }} {{ mul 60 60 | duration "second" }} {{ "1h12m10s" | time.ParseDuration }}`, `January 21, 2015 Jan 21, 2015 1h0m0s 1h12m10s`},

	// transform
	{`{{ "**BatMan**" | markdownify }}`, `<strong>BatMan<strong>`},
	{`{{ plainify "Hello <strong>world</strong>, gophers!" }}|{{ plainify "<p>a</p><p>b</p>" }}`, "Hello world, gophers!|a\nb\n"},
	{`{{ htmlEscape "Cathal Garvey & The Sunshine Band <cathal@foo.bar>" | safeHTML }}|{{ htmlUnescape "Cathal &amp; &lt;x&gt;" | safeHTML }}`, `Cathal Garvey &amp; The Sunshine Band &lt;cathal@foo.bar&gt;|Cathal & <x>`},
	{`{{ "I :heart: Hugo :nope:" | emojify }}`, `I ❤️ Hugo :nope:`},
	{`{{ ("title = \"Hello World\"" | unmarshal).title }} {{ (unmarshal "{\"a\": [1, 2]}").a }} {{ (unmarshal "b: true\n").b }}`, `Hello World [1 2] true`},

	{`{{ highlight "a < b" "go" "" }}`, `<div class="highlight"><pre tabindex="0"><code class="language-go" data-lang="go">a &lt; b</code></pre></div>`},

	// inflect
	{`{{ humanize "my-first-post" }}|{{ humanize "myCamelPost" }}|{{ humanize "52" }}|{{ humanize 103 }}|{{ humanize 11 }}`, `My first post|My camel post|52nd|103rd|11th`},
	{`{{ "cat" | pluralize }} {{ "cats" | singularize }} {{ pluralize "category" }} {{ singularize "categories" }} {{ pluralize "Tag" }} {{ pluralize "person" }} {{ pluralize "box" }}`, `cats cat categories category Tags people boxes`},

	// fmt, cast, encoding, crypto
	{`{{ printf "%s!" "works" }} {{ print "a" 1 }} {{ println "x" }}`, "works! a1 x\n"},
	{`{{ "1234" | int | printf "%T" }} {{ "1234" | float | printf "%T" }} {{ 1234 | string | printf "%T" }} {{ int "3.0" }} {{ int 3.9 }}`, `int float64 string 3 3`},
	{`{{ (slice "A" "B" "C") | jsonify }} {{ dict "a" "<b>" | jsonify }}`, `["A","B","C"] {"a":"\u003cb\u003e"}`},
	{`{{ (slice "A") | jsonify (dict "indent" "  ") }}`, "[\n  \"A\"\n]"},
	{`{{ "Hello world" | base64Encode }} {{ "SGVsbG8gd29ybGQ=" | base64Decode }} {{ md5 "Hello world, gophers!" }} {{ sha1 "Hello world, gophers!" }}`, `SGVsbG8gd29ybGQ= Hello world b3029f756f98f79e7f1b7f1d1f0dd53b c8b5b0e33d408246e30f53e32b8f7627a7a649d4`},
	{`{{ sha256 "Hello world, gophers!" }} {{ hmac "sha256" "Secret key" "Hello world, gophers!" }}`, `6ec43b78da9669f50e4e422575c54bf87536954ccd58280219c393f2ce352b46 b6d11b6c53830b9d87036272ca9fe9d19306b8f9d8aa07b15da27d89e6e34f40`},

	// path, reflect, hugo
	{`{{ path.Join "my" "path" "filename.txt" }} {{ path.Base "a/b.txt" }} {{ path.Ext "a/b.txt" }} {{ path.Dir "a/b.txt" }} {{ path.BaseName "a/b.txt" }} {{ path.Split "/my/path/filename.txt" }}`, `my/path/filename.txt b.txt .txt a b /my/path/|filename.txt`},
	{`{{ reflect.IsMap (dict "a" 1) }} {{ reflect.IsSlice (slice 1) }} {{ reflect.IsMap 1 }}`, `true true false`},
	{`{{ hugo.IsProduction }} {{ hugo.Environment }} {{ hugo.IsMultilingual }} {{ hugo.IsServer }}`, `true production false false`},

	{`{{ hash.FNV32a "Hugo Rocks!!" }} {{ (os.Stat "data/hello.txt").Size }} {{ len (resources.ByType "text") }}`, `1515779328 10 3`},

	// lang
	{`{{ i18n "home" }} {{ T "readTime" 1 }} {{ T "readTime" 5 }} {{ T "greeting" (dict "Name" "Ann") }} [{{ T "missing" }}]`, `Home One minute 5 minutes Hello Ann []`},

	{`{{ 512.5032 | lang.FormatNumber 2 }} {{ lang.FormatNumber 2 12345.6789 }} {{ lang.FormatNumberCustom 2 12345.6789 "- , ." }} {{ lang.FormatNumberCustom 0 -12345.6789 "-|.| " "|" }} {{ 512.5032 | lang.FormatPercent 2 }}`, `512.50 12,345.68 12.345,68 -12 346 512.50%`},

	// os
	{`{{ readFile "data/hello.txt" }} {{ fileExists "data/hello.txt" }} {{ fileExists "nope" }} {{ range readDir "data" }}{{ .Name }}{{ end }}`, `hello file true false hello.txt`},

	// resources
	{`{{ (resources.Get "css/main.css").RelPermalink }} {{ (resources.Get "css/main.css").Content }} {{ with resources.Get "none.css" }}x{{ else }}missing{{ end }}`, `/sub/css/main.css body{color:red} missing`},
	{`{{ $r := resources.Get "css/main.css" | minify | fingerprint }}{{ $r.RelPermalink }} {{ $r.Data.Integrity }}`, `/sub/css/main.min.15c42ab7768d955ec0667195e339104557827893b16cc3e7412c76e7c2fcd371.css sha256-FcQqt3aNlV7AZnGV4zkQRVeCeJOxbMPnQSx258L803E=`},
	{`{{ $js := slice (resources.Get "js/a.js") (resources.Get "js/b.js") | resources.Concat "js/all.js" }}{{ $js.Content }} {{ $js.Permalink }} {{ $js.MediaType }} {{ $js.MediaType.SubType }}`, "var a=1;\nvar b=2; https://example.org/sub/js/all.js text/javascript javascript"},
	{`{{ (resources.FromString "x.txt" "hello").Content }} {{ len (resources.Match "js/*.js") }}`, `hello 2`},
	{`{{ (resources.FromString "c.css" "a{color:{{ .colour | upper }}}" | resources.ExecuteAsTemplate "out.css" (dict "colour" "red")).Content }}`, `a{color:RED}`},
}

func TestExamples(t *testing.T) {
	for _, ex := range examples {
		got, err := run(t, testOptions(), ex.tpl)
		if err != nil {
			t.Errorf("%s\n  error: %v", ex.tpl, err)
			continue
		}
		if got != ex.want {
			t.Errorf("%s\n  got  %q\n  want %q", ex.tpl, got, ex.want)
		}
	}
}

// Failures are errors that name the function, not wrong output.
var failures = []struct{ tpl, want string }{
	{`{{ div 1 0 }}`, "divide by 0"},
	{`{{ mod 1 0 }}`, "divide by 0"},
	{`{{ add 1 "a" }}`, "add: cannot apply"},
	{`{{ where .Pages "Title" "~=" "x" }}`, `no such operator "~="`},
	{`{{ where .Pages "Nope" "x" }}`, "Nope is not a field or method"},
	{`{{ first -1 .Pages }}`, "negative"},
	{`{{ seq 0 0 5 }}`, "increment must not be 0"},
	{`{{ seq 2000000 }}`, "size of the sequence"},
	{`{{ dict "a" }}`, "odd number"},
	{`{{ errorf "theme says %s" "no" }}`, "theme says no"},
	{`{{ toCSS (resources.Get "css/main.css") }}`, "toCSS: assets/css/main.css: Sass is not available to the builder"},
	{`{{ resources.Get "js/a.js" | js.Build }}`, "js.Build: assets/js/a.js: esbuild is not available to the builder"},
	{`{{ css.Sass (resources.Get "css/main.css") }}`, "css.Sass: assets/css/main.css: Sass is not available"},
	{`{{ resources.Get "css/main.css" | postCSS }}`, "resources.PostCSS: assets/css/main.css: PostCSS is not available"},
	{`{{ resources.GetRemote "https://example.org/" }}`, "fetches nothing"},
	{`{{ minify (resources.Get "none.css") }}`, "minify: no resource (is the file missing from assets/?)"},
	{`{{ minify "body{}" }}`, "minify: want a resource, got string"},
	{`{{ getenv "HOME" }}`, "access denied"},
	{`{{ readFile "../../etc/passwd" }}`, ""},
	{`{{ replaceRE "(" "x" "y" }}`, "replaceRE: error parsing regexp"},
	{`{{ truncate 5 }}`, "want a length and a text"},
	{`{{ markdownify "x" }}`, "no Markdown renderer"},
}

func TestFailures(t *testing.T) {
	for _, f := range failures {
		opts := testOptions()
		if strings.Contains(f.tpl, "markdownify") {
			opts.Markdown = nil
		}
		got, err := run(t, opts, f.tpl)
		if f.want == "" {
			// readFile outside the site's directory reads inside it: the
			// path is cleaned to data under the root, which is missing.
			if err != nil || got != "" {
				t.Errorf("%s: got %q, %v; want nothing", f.tpl, got, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), f.want) {
			t.Errorf("%s: got %q, error %v; want an error containing %q", f.tpl, got, err, f.want)
		}
	}
}

// An unknown function is an error when the template is parsed, naming the
// file and line, not when a page happens to use it.
func TestUnknownFunctionFailsAtParse(t *testing.T) {
	fm, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	_, err = template.New("layouts/home.html").Funcs(fm).Parse("line one\n{{ if false }}{{ nosuch 1 }}{{ end }}")
	if err == nil || !strings.Contains(err.Error(), `layouts/home.html:2: function "nosuch" not defined`) {
		t.Fatalf("got %v", err)
	}
}

func TestReturn(t *testing.T) {
	fm, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	tpl := template.Must(template.New("p").Funcs(fm).Parse(`ignored{{ return (add 1 2) }}never`))
	var b bytes.Buffer
	err = tpl.Execute(&b, nil)
	v, ok := Returned(err)
	if !ok || v != int64(3) {
		t.Fatalf("got %v, %v (err %v)", v, ok, err)
	}
	if _, ok := Returned(fs.ErrNotExist); ok {
		t.Fatal("an ordinary error taken for a return")
	}
}

// A resource is published once, when its link is first printed, under its
// final name; one that is only read is not published.
func TestResourcesPublishOnce(t *testing.T) {
	opts := testOptions()
	published := map[string]int{}
	opts.Publish = func(rel string, data []byte) error {
		published[rel]++
		return nil
	}
	fm, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tpl := template.Must(template.New("t").Funcs(fm).Parse(`{{ (resources.Get "css/main.css" | fingerprint "md5").RelPermalink }}{{ (resources.Get "js/a.js").Content }}`))
	for range 3 {
		if err := tpl.Execute(&bytes.Buffer{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(published) != 1 || published["css/main.6700e3e577966de91432a219303a54ce.css"] != 1 {
		t.Fatalf("published %v", published)
	}
}

func TestLoadI18n(t *testing.T) {
	site := fstest.MapFS{
		"en.toml": {Data: []byte("home = \"Start\"\n")},
	}
	theme := fstest.MapFS{
		"en.toml": {Data: []byte("[home]\nother = \"Home\"\n[posts]\none = \"post\"\nother = \"posts\"\n")},
		"de.yaml": {Data: []byte("- id: home\n  translation: Startseite\n")},
		"fr.json": {Data: []byte(`{"home": {"other": "Accueil"}}`)},
		"nl.toml": {Data: []byte("[posts]\n[posts.title]\nother = \"Berichten\"\n[posts.date]\nother = \"2 Jan\"\n")},
	}
	tr, err := LoadI18n(site, theme)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr["en"]["home"]["other"]; got != "Start" {
		t.Errorf("site over theme: got %q", got)
	}
	if got := tr["en"]["posts"]["one"]; got != "post" {
		t.Errorf("plural forms: got %q", got)
	}
	if got := tr["de"]["home"]["other"]; got != "Startseite" {
		t.Errorf("yaml list: got %q", got)
	}
	if got := tr["fr"]["home"]["other"]; got != "Accueil" {
		t.Errorf("json: got %q", got)
	}
	if got := tr["nl"]["posts.title"]["other"]; got != "Berichten" {
		t.Errorf("nested tables: got %q (%v)", got, tr["nl"])
	}
	if _, err := LoadI18n(fstest.MapFS{"en.toml": {Data: []byte("= broken")}}); err == nil || !strings.Contains(err.Error(), "i18n/en.toml") {
		t.Errorf("a broken file: got %v", err)
	}
}
