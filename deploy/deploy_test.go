package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/fediverse-observer/observer/config"
)

// unit is a parsed systemd unit file: section -> key -> values in order
// (systemd keys may repeat).
type unit map[string]map[string][]string

// knownKeys are the keys these units may use, per section. A misspelt key
// is only a warning to systemd, which then runs the service without that
// protection; here it fails the test.
var knownKeys = map[string][]string{
	"Unit":    {"Description", "Documentation", "Wants", "After", "Requires", "OnSuccess", "OnFailure"},
	"Install": {"WantedBy"},
	"Timer":   {"OnCalendar", "RandomizedDelaySec", "Persistent", "Unit", "AccuracySec"},
	"Service": {
		"Type", "User", "Group", "WorkingDirectory", "ExecStart", "SuccessExitStatus",
		"TimeoutStartSec", "TimeoutStopSec", "KillMode", "Nice", "IOSchedulingClass", "IOSchedulingPriority",
		"MemoryMax", "TasksMax", "LimitNOFILE", "ProtectSystem", "ReadWritePaths", "ProtectHome",
		"PrivateTmp", "PrivateDevices", "PrivateMounts", "PrivateUsers", "RemoveIPC", "UMask",
		"NoNewPrivileges", "CapabilityBoundingSet", "AmbientCapabilities", "RestrictSUIDSGID",
		"LockPersonality", "MemoryDenyWriteExecute", "RestrictRealtime", "RestrictNamespaces",
		"ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
		"ProtectClock", "ProtectHostname", "ProtectProc", "ProcSubset", "SystemCallArchitectures",
		"SystemCallFilter", "SystemCallErrorNumber", "RestrictAddressFamilies", "IPAddressDeny",
		"IPAddressAllow", "PrivateNetwork", "Environment",
	},
}

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if _, ok := knownKeys[section]; !ok {
				t.Errorf("%s:%d: unexpected section [%s]", path, n, section)
			}
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
			continue
		}
		if strings.HasSuffix(line, `\`) {
			t.Errorf("%s:%d: continuation lines make the units hard to check; keep one setting per line", path, n)
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" || key != strings.TrimSpace(key) || key == "" {
			t.Errorf("%s:%d: want KEY=VALUE inside a section, got %q", path, n, line)
			continue
		}
		if !slices.Contains(knownKeys[section], key) {
			t.Errorf("%s:%d: unknown key %s in [%s]", path, n, key, section)
		}
		u[section][key] = append(u[section][key], value)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// one is the single value of a key; it fails the test when there is not
// exactly one.
func (u unit) one(t *testing.T, section, key string) string {
	t.Helper()
	v := u[section][key]
	if len(v) != 1 {
		t.Errorf("[%s] %s: want exactly one value, got %q", section, key, v)
		return ""
	}
	return v[0]
}

// words splits every value of a key into its space-separated words.
func (u unit) words(section, key string) []string {
	var out []string
	for _, v := range u[section][key] {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

// flagValue returns the value of --name in a command line.
func flagValue(cmd, name string) string {
	f := strings.Fields(cmd)
	for i, w := range f {
		if w == "--"+name && i+1 < len(f) {
			return f[i+1]
		}
		if v, ok := strings.CutPrefix(w, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func TestSystemdServicesAreHardened(t *testing.T) {
	for _, name := range []string{"observer-crawl.service", "observer-site.service"} {
		t.Run(name, func(t *testing.T) {
			u := parseUnit(t, filepath.Join("systemd", name))
			want := map[string]string{
				"Type":                    "oneshot",
				"NoNewPrivileges":         "yes",
				"ProtectSystem":           "strict",
				"PrivateTmp":              "yes",
				"ProtectHome":             "yes",
				"RestrictSUIDSGID":        "yes",
				"SystemCallArchitectures": "native",
				"CapabilityBoundingSet":   "",
			}
			for k, v := range want {
				if got := u.one(t, "Service", k); got != v {
					t.Errorf("%s=%q, want %q", k, got, v)
				}
			}
			if user := u.one(t, "Service", "User"); user == "" || user == "root" {
				t.Errorf("User=%q: want a dedicated user", user)
			}
			if !slices.Contains(u["Service"]["SystemCallFilter"], "@system-service") {
				t.Errorf("SystemCallFilter=%q: want @system-service", u["Service"]["SystemCallFilter"])
			}
			if m := u.one(t, "Service", "MemoryMax"); !regexp.MustCompile(`^[0-9]+[KMGT]$`).MatchString(m) {
				t.Errorf("MemoryMax=%q: want a size such as 2G", m)
			}
			// ~@privileged takes back the privileged calls @system-service
			// would otherwise allow.
			if !slices.Contains(u["Service"]["SystemCallFilter"], "~@privileged") {
				t.Errorf("SystemCallFilter=%q: want ~@privileged", u["Service"]["SystemCallFilter"])
			}
			// Without RestrictAddressFamilies= every family (AF_NETLINK,
			// AF_PACKET, ...) is allowed, so an empty list is a failure, not
			// a vacuous pass of the loop below.
			fams := u.words("Service", "RestrictAddressFamilies")
			if len(fams) == 0 {
				t.Error("RestrictAddressFamilies is unset: every address family is allowed")
			}
			for _, fam := range fams {
				if !slices.Contains([]string{"AF_INET", "AF_INET6", "AF_UNIX"}, fam) {
					t.Errorf("RestrictAddressFamilies allows %s", fam)
				}
			}

			// Every path the program writes must be writable, and nothing else.
			exec := u.one(t, "Service", "ExecStart")
			rw := u.words("Service", "ReadWritePaths")
			data := flagValue(exec, "data")
			if data == "" || !filepath.IsAbs(data) {
				t.Fatalf("ExecStart %q: want an absolute --data", exec)
			}
			if !slices.Contains(rw, data) {
				t.Errorf("ReadWritePaths=%q lacks the data directory %s", rw, data)
			}
			if out := flagValue(exec, "out"); out != "" {
				// The build stages the new site next to the old one and swaps
				// them: the parent must be writable, not only public/.
				if !slices.Contains(rw, filepath.Dir(out)) {
					t.Errorf("ReadWritePaths=%q lacks %s, the parent of --out %s", rw, filepath.Dir(out), out)
				}
			}
			for _, p := range rw {
				p = strings.TrimPrefix(p, "-") // optional path
				if !filepath.IsAbs(p) || p == "/" {
					t.Errorf("ReadWritePaths entry %q: want an absolute directory below /", p)
				}
			}
		})
	}
}

// The site build needs no network at all: it keeps only local AF_UNIX
// sockets and the kernel drops every IP packet, a wall that still holds
// if PrivateNetwork= is overridden.
func TestSiteServiceHasNoNetwork(t *testing.T) {
	u := parseUnit(t, filepath.Join("systemd", "observer-site.service"))
	if fams := u.words("Service", "RestrictAddressFamilies"); !slices.Equal(fams, []string{"AF_UNIX"}) {
		t.Errorf("RestrictAddressFamilies=%q, want exactly AF_UNIX", fams)
	}
	if deny := u.words("Service", "IPAddressDeny"); !slices.Equal(deny, []string{"any"}) {
		t.Errorf("IPAddressDeny=%q, want any", deny)
	}
	if allow := u["Service"]["IPAddressAllow"]; len(allow) != 0 {
		t.Errorf("IPAddressAllow=%q would let packets through IPAddressDeny=any", allow)
	}
	if got := u.one(t, "Service", "PrivateNetwork"); got != "yes" {
		t.Errorf("PrivateNetwork=%q, want yes", got)
	}
}

func TestCrawlServiceNetworkWall(t *testing.T) {
	u := parseUnit(t, filepath.Join("systemd", "observer-crawl.service"))
	deny := u.words("Service", "IPAddressDeny")
	// systemd lets a packet through when its address matches
	// IPAddressAllow=, whatever IPAddressDeny= says: a broad allow entry
	// ("any", a /8) would void the deny list. Only single addresses (the
	// resolver) may be excepted.
	for _, a := range u.words("Service", "IPAddressAllow") {
		addr, err := netip.ParseAddr(a)
		if err != nil {
			p, perr := netip.ParsePrefix(a)
			if perr != nil || p.Bits() != p.Addr().BitLen() {
				t.Errorf("IPAddressAllow=%s: want single addresses only (an allow entry overrides the deny list)", a)
			}
			continue
		}
		if !addr.IsLoopback() && !addr.IsPrivate() {
			t.Errorf("IPAddressAllow=%s: a public address needs no exception", a)
		}
	}
	var prefixes []netip.Prefix
	for _, d := range deny {
		switch d {
		case "localhost":
			prefixes = append(prefixes, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
		case "link-local":
			prefixes = append(prefixes, netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fe80::/10"))
		case "multicast":
			prefixes = append(prefixes, netip.MustParsePrefix("224.0.0.0/4"), netip.MustParsePrefix("ff00::/8"))
		case "any":
			t.Errorf("IPAddressDeny=any would cut the crawler off")
		default:
			p, err := netip.ParsePrefix(d)
			if err != nil {
				t.Errorf("IPAddressDeny entry %q: %v", d, err)
				continue
			}
			prefixes = append(prefixes, p)
		}
	}
	// Addresses an attacker would point a hostname at.
	for _, s := range []string{
		"127.0.0.2", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
		"100.64.0.1", "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "224.0.0.1",
	} {
		a := netip.MustParseAddr(s)
		if !slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) }) {
			t.Errorf("IPAddressDeny does not cover %s", s)
		}
	}
	for _, s := range []string{"1.1.1.1", "9.9.9.9", "2a01:4f8::1"} {
		a := netip.MustParseAddr(s)
		if slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) }) {
			t.Errorf("IPAddressDeny blocks the public address %s", s)
		}
	}

	// A pass cut short by its budget (exit 3) is not a failure, and the
	// unit's own timeout leaves room for the default budget.
	if st := u.words("Service", "SuccessExitStatus"); !slices.Contains(st, "3") {
		t.Errorf("SuccessExitStatus=%q: want 3 (pass cut short by its budget)", st)
	}
	timeout, err := parseSystemdSpan(u.one(t, "Service", "TimeoutStartSec"))
	if err != nil {
		t.Fatal(err)
	}
	budget := config.Default().Crawl.Duration.D() + config.Default().Crawl.CheckTimeout.D()
	if timeout <= budget {
		t.Errorf("TimeoutStartSec %s does not leave room for the pass budget and the last checks (%s)", timeout, budget)
	}
}

// parseSystemdSpan parses the time spans these units use ("2h30min", "5min").
func parseSystemdSpan(s string) (time.Duration, error) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "min", "m"), " ", "")
	return time.ParseDuration(s)
}

func TestSystemdTimers(t *testing.T) {
	for _, name := range []string{"observer-crawl.timer", "observer-site.timer"} {
		u := parseUnit(t, filepath.Join("systemd", name))
		target := u.one(t, "Timer", "Unit")
		if want := strings.TrimSuffix(name, ".timer") + ".service"; target != want {
			t.Errorf("%s: Unit=%s, want %s", name, target, want)
		}
		if _, err := os.Stat(filepath.Join("systemd", target)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if u.one(t, "Timer", "OnCalendar") == "" {
			t.Errorf("%s: no OnCalendar", name)
		}
		if !slices.Contains(u["Install"]["WantedBy"], "timers.target") {
			t.Errorf("%s: WantedBy=%q, want timers.target", name, u["Install"]["WantedBy"])
		}
	}
	// The crawl timer's interval must exceed the pass budget, or passes
	// queue up behind each other.
	u := parseUnit(t, filepath.Join("systemd", "observer-crawl.timer"))
	m := regexp.MustCompile(`^\*-\*-\* 00/([0-9]+):[0-9]{2}:[0-9]{2}$`).FindStringSubmatch(u.one(t, "Timer", "OnCalendar"))
	if m == nil {
		t.Fatalf("observer-crawl.timer: OnCalendar %q is not of the form *-*-* 00/H:MM:SS", u.one(t, "Timer", "OnCalendar"))
	}
	hours, _ := strconv.Atoi(m[1])
	if every := time.Duration(hours) * time.Hour; every <= config.Default().Crawl.Duration.D() {
		t.Errorf("crawl every %s, but a pass may take %s", every, config.Default().Crawl.Duration.D())
	}
}

// nginxBlock is one block of an nginx configuration file.
type nginxBlock struct {
	head       string
	directives []string
	children   []*nginxBlock
}

// parseNginx splits the configuration into blocks and directives, honouring
// quotes and comments. It reports unbalanced braces and directives without
// their semicolon.
func parseNginx(src string) (*nginxBlock, []error) {
	root := &nginxBlock{head: "main"}
	stack := []*nginxBlock{root}
	var errs []error
	var cur strings.Builder
	line := 1
	inQuote := byte(0)
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' {
			line++
		}
		switch {
		case inQuote != 0:
			if c == inQuote && src[i-1] != '\\' {
				inQuote = 0
			}
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			inQuote = c
			cur.WriteByte(c)
		case c == '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == '{':
			b := &nginxBlock{head: strings.Join(strings.Fields(cur.String()), " ")}
			top := stack[len(stack)-1]
			top.children = append(top.children, b)
			stack = append(stack, b)
			cur.Reset()
		case c == '}':
			if rest := strings.TrimSpace(cur.String()); rest != "" {
				errs = append(errs, fmt.Errorf("line %d: %q lacks its semicolon", line, rest))
			}
			if len(stack) == 1 {
				return root, append(errs, fmt.Errorf("line %d: unbalanced }", line))
			}
			stack = stack[:len(stack)-1]
			cur.Reset()
		case c == ';':
			top := stack[len(stack)-1]
			top.directives = append(top.directives, strings.Join(strings.Fields(cur.String()), " "))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if inQuote != 0 {
		errs = append(errs, errors.New("unterminated quote"))
	}
	if len(stack) != 1 {
		errs = append(errs, fmt.Errorf("%d unclosed blocks", len(stack)-1))
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		errs = append(errs, fmt.Errorf("trailing %q lacks its semicolon", rest))
	}
	return root, errs
}

func (b *nginxBlock) directive(name string) []string {
	var out []string
	for _, d := range b.directives {
		if w := strings.Fields(d); len(w) > 0 && w[0] == name {
			out = append(out, strings.Join(w[1:], " "))
		}
	}
	return out
}

func TestNginxServerBlock(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("nginx", "observer.conf"))
	if err != nil {
		t.Fatal(err)
	}
	root, errs := parseNginx(string(src))
	for _, err := range errs {
		t.Errorf("nginx/observer.conf: %v", err)
	}
	var site *nginxBlock
	for _, s := range root.children {
		if s.head == "server" && slices.ContainsFunc(s.directive("listen"), func(l string) bool { return strings.Contains(l, "ssl") }) {
			site = s
		}
	}
	if site == nil {
		t.Fatal("no TLS server block")
	}
	if r := site.directive("root"); len(r) != 1 || filepath.Base(r[0]) != "public" {
		t.Errorf("root %q: want the site's public/ directory", r)
	}
	if a := site.directive("autoindex"); len(a) != 1 || a[0] != "off" {
		t.Errorf("autoindex %q: want off", a)
	}
	if e := site.directive("error_page"); len(e) != 1 || !strings.HasSuffix(e[0], "/404.html") {
		t.Errorf("error_page %q: want the site's 404.html", e)
	}
	gzipTypes := strings.Fields(strings.Join(site.directive("gzip_types"), " "))
	for _, typ := range []string{"text/csv", "application/atom+xml", "text/plain", "application/json"} {
		if !slices.Contains(gzipTypes, typ) {
			t.Errorf("gzip_types lacks %s", typ)
		}
	}
	headers := strings.Join(site.directive("add_header"), "\n")
	for _, h := range []string{"X-Content-Type-Options", "Content-Security-Policy", "Referrer-Policy"} {
		if !strings.Contains(headers, h) {
			t.Errorf("no %s header", h)
		}
	}

	// Dotfiles are refused before any other regex location matches them
	// (nginx takes the first regex location that matches).
	for _, loc := range site.children {
		if strings.HasPrefix(loc.head, "location ~") {
			if loc.head != `location ~ /\.` || len(loc.directive("return")) != 1 || loc.directive("return")[0] != "404" {
				t.Errorf("the first regex location is %q: want the dotfile one, returning 404", loc.head)
			}
			break
		}
	}

	// Each list and feed extension gets its exact type and a short cache
	// lifetime.
	types := map[string]string{}
	for _, loc := range site.children {
		// nginx drops the server's add_header lines in a location that has
		// its own: the security headers would vanish there.
		if len(loc.directive("add_header")) > 0 {
			t.Errorf("%s has add_header lines: the server's security headers would not apply there", loc.head)
		}
		m := regexp.MustCompile(`^location ~ \\\.(\w+)\$$`).FindStringSubmatch(loc.head)
		if m == nil {
			continue
		}
		emptyTypes := slices.ContainsFunc(loc.children, func(b *nginxBlock) bool { return b.head == "types" && len(b.directives) == 0 })
		if dt := loc.directive("default_type"); len(dt) == 1 && !emptyTypes {
			t.Errorf("%s: default_type without an empty types block is ignored for known extensions", loc.head)
		} else if len(dt) == 1 {
			types[m[1]] = dt[0]
		}
		if ex := loc.directive("expires"); len(ex) != 1 || !regexp.MustCompile(`^[0-9]+m$`).MatchString(ex[0]) {
			t.Errorf("%s: expires %q, want minutes", loc.head, ex)
		}
	}
	want := map[string]string{"atom": "application/atom+xml", "csv": "text/csv", "txt": "text/plain", "json": "application/json"}
	for ext, typ := range want {
		if types[ext] != typ {
			t.Errorf(".%s served as %q, want %q", ext, types[ext], typ)
		}
	}
	charset := strings.Fields(strings.Join(site.directive("charset_types"), " "))
	for _, typ := range []string{"text/csv", "application/atom+xml", "text/plain"} {
		if !slices.Contains(charset, typ) {
			t.Errorf("charset_types lacks %s: it would be served without charset=utf-8", typ)
		}
	}
}

func TestNginxParserCatchesMistakes(t *testing.T) {
	for _, bad := range []string{
		"server { listen 80 }",
		"server { location / { root /x; }",
		"server { root /x; } }",
		"server { root \"/x; }",
		"server { root /x; } listen 80",
	} {
		if _, errs := parseNginx(bad); len(errs) == 0 {
			t.Errorf("parseNginx accepted %q", bad)
		}
	}
	root, errs := parseNginx("# a { comment\nserver { add_header X \"a;b{\"; location / { expires 1m; } }\n")
	if len(errs) > 0 || len(root.children) != 1 || len(root.children[0].children) != 1 ||
		root.children[0].directive("add_header")[0] != `X "a;b{"` {
		t.Errorf("parseNginx misread comments or quotes: %+v %v", root.children, errs)
	}
}

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Name string `yaml:"name"`
	On   struct {
		Schedule []struct {
			Cron string `yaml:"cron"`
		} `yaml:"schedule"`
		WorkflowDispatch *struct {
			Inputs map[string]struct {
				Description string `yaml:"description"`
				Required    bool   `yaml:"required"`
				Default     string `yaml:"default"`
			} `yaml:"inputs"`
		} `yaml:"workflow_dispatch"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		RunsOn         string            `yaml:"runs-on"`
		Needs          any               `yaml:"needs"`
		TimeoutMinutes int               `yaml:"timeout-minutes"`
		Permissions    map[string]string `yaml:"permissions"`
		Env            map[string]string `yaml:"env"`
		Environment    struct {
			Name string `yaml:"name"`
			URL  string `yaml:"url"`
		} `yaml:"environment"`
		Concurrency struct {
			Group            string `yaml:"group"`
			CancelInProgress bool   `yaml:"cancel-in-progress"`
		} `yaml:"concurrency"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
			If   string            `yaml:"if"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// readWorkflow parses the GitHub workflow. Strict: a key the workflow
// struct does not know is a typo until the struct learns it.
func readWorkflow(t *testing.T) workflow {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", ".github", "workflows", "observer.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.UnmarshalWithOptions(src, &w, yaml.Strict()); err != nil {
		t.Fatalf("observer.yml: %v", err)
	}
	return w
}

// gitIn runs git in dir, with an identity and a default branch of its own,
// and returns its output; a failure fails the test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestWorkflow(t *testing.T) {
	w := readWorkflow(t)
	if len(w.On.Schedule) == 0 || len(strings.Fields(w.On.Schedule[0].Cron)) != 5 {
		t.Errorf("schedule %+v: want one five-field cron entry", w.On.Schedule)
	}
	if w.On.WorkflowDispatch == nil {
		t.Error("no workflow_dispatch trigger")
	}
	if w.Permissions["contents"] != "read" || len(w.Permissions) != 1 {
		t.Errorf("workflow permissions %v: want contents: read only", w.Permissions)
	}
	if w.Concurrency.Group == "" || w.Concurrency.CancelInProgress {
		t.Errorf("concurrency %+v: want a group that never cancels a running crawl", w.Concurrency)
	}

	crawl, ok := w.Jobs["crawl"]
	if !ok {
		t.Fatal("no crawl job")
	}
	if crawl.Permissions["contents"] != "write" || len(crawl.Permissions) != 1 {
		t.Errorf("crawl job permissions %v: want contents: write only", crawl.Permissions)
	}
	// The pass's budget must end well before the job is killed, or the run
	// loses its commit to the data branch.
	budget, err := time.ParseDuration(w.On.WorkflowDispatch.Inputs["duration"].Default)
	if err != nil {
		t.Fatalf("duration input: %v", err)
	}
	if !strings.Contains(crawl.Env["CRAWL_DURATION"], "'"+w.On.WorkflowDispatch.Inputs["duration"].Default+"'") {
		t.Errorf("CRAWL_DURATION %q does not default to the duration input's default", crawl.Env["CRAWL_DURATION"])
	}
	if job := time.Duration(crawl.TimeoutMinutes) * time.Minute; job < budget+20*time.Minute {
		t.Errorf("crawl job timeout %s leaves less than 20 minutes after the %s budget", job, budget)
	}
	var uses, runs []string
	restore, save := -1, -1
	for i, s := range crawl.Steps {
		if s.Uses != "" {
			if !regexp.MustCompile(`^[\w.-]+/[\w.-]+@v\d+$`).MatchString(s.Uses) {
				t.Errorf("step %q uses %q: want owner/action@vN", s.Name, s.Uses)
			}
			uses = append(uses, s.Uses[:strings.Index(s.Uses, "@")])
		}
		runs = append(runs, s.Run)
		if strings.Contains(s.Run, "git worktree add") {
			restore = i
		}
		if strings.Contains(s.Run, "git push origin HEAD:refs/heads/data") {
			save = i
			// A failed crawl still leaves every finished check on disk, so the
			// save step must run whatever the crawl step's outcome:
			// success() (or a missing if:) would drop that work, and a
			// failure()-only condition would skip the normal case.
			if !regexp.MustCompile(`^\$\{\{\s*(always\(\)|!cancelled\(\))\s*\}\}$`).MatchString(s.If) {
				t.Errorf("save step if: %q: want ${{ always() }} or ${{ !cancelled() }}, so it also runs after a failed crawl", s.If)
			}
		}
		switch s.Uses[:max(strings.Index(s.Uses, "@"), 0)] {
		case "actions/setup-go":
			if s.With["go-version-file"] != "go.mod" {
				t.Errorf("setup-go with %v: want go-version-file: go.mod", s.With)
			}
		case "actions/upload-pages-artifact":
			if s.With["path"] != "public" {
				t.Errorf("upload-pages-artifact path %q, want public", s.With["path"])
			}
		}
	}
	for _, a := range []string{"actions/checkout", "actions/setup-go", "actions/upload-pages-artifact"} {
		if !slices.Contains(uses, a) {
			t.Errorf("crawl job does not use %s", a)
		}
	}
	all := strings.Join(runs, "\n")
	crawlAt := strings.Index(all, "observer crawl")
	if crawlAt < 0 || !strings.Contains(all, `|| rc=$?`) || !strings.Contains(all, `-ne 3`) {
		t.Error("the crawl step must run observer crawl and accept exit code 3 (cut short by its budget)")
	}
	if restore < 0 || save < 0 || restore > save {
		t.Errorf("want data/ restored (step %d) before it is saved (step %d)", restore, save)
	}
	if !strings.Contains(all, "make site") {
		t.Error("the crawl job does not build the site")
	}

	deploy, ok := w.Jobs["deploy"]
	if !ok {
		t.Fatal("no deploy job")
	}
	if deploy.Needs != "crawl" {
		t.Errorf("deploy needs %v, want crawl", deploy.Needs)
	}
	if deploy.Permissions["pages"] != "write" || deploy.Permissions["id-token"] != "write" || len(deploy.Permissions) != 2 {
		t.Errorf("deploy permissions %v: want pages: write and id-token: write only", deploy.Permissions)
	}
	if deploy.Environment.Name != "github-pages" {
		t.Errorf("deploy environment %q, want github-pages", deploy.Environment.Name)
	}
	if len(deploy.Steps) != 1 || !strings.HasPrefix(deploy.Steps[0].Uses, "actions/deploy-pages@") {
		t.Errorf("deploy steps %+v: want actions/deploy-pages", deploy.Steps)
	}
}

func TestMakeDeployRefusesWithoutTarget(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Fatal("make is needed to run the project's targets:", err)
	}
	dir := t.TempDir()
	mk, err := filepath.Abs(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(makeBin, "-s", "-f", mk, "-C", dir, "deploy", "DEPLOY_TARGET=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if err == nil {
		t.Fatal("make deploy with an empty DEPLOY_TARGET succeeded")
	}
	if !strings.Contains(stderr.String(), "set DEPLOY_TARGET") {
		t.Errorf("make deploy's message %q does not say what to set", stderr.String())
	}
	// With a target but nothing built, it refuses too rather than
	// publishing an empty site (and deleting the published one).
	cmd = exec.Command(makeBin, "-s", "-f", mk, "-C", dir, "deploy", "DEPLOY_TARGET="+filepath.Join(dir, "out"))
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("make deploy without public/ succeeded")
	}
	if !strings.Contains(stderr.String(), "make site") {
		t.Errorf("make deploy's message %q does not say to build first", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("make deploy created the target without a site to publish")
	}
}

func TestDemoScriptSyntax(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bash, "-n", filepath.Join("..", "scripts", "demo.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("bash -n scripts/demo.sh: %v\n%s", err, out)
	}
	// It refuses to empty a directory it does not own, however it is
	// spelt. Should the refusal ever break, rm is a stand-in that only
	// records its call, so the test cannot empty / itself.
	fake := t.TempDir()
	called := filepath.Join(fake, "rm-was-called")
	if err := os.WriteFile(filepath.Join(fake, "rm"), []byte("#!/bin/sh\necho \"$@\" >> "+called+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink("/", link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/", "//", "/tmp/..", "..", "../", link, "."} {
		cmd := exec.Command(bash, filepath.Join("..", "scripts", "demo.sh"))
		cmd.Env = append(os.Environ(), "DEMO_DIR="+dir, "OBSERVER=/bin/true", "FEDISIM=/bin/true", "PATH="+fake+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "refusing DEMO_DIR=") {
			t.Errorf("demo.sh with DEMO_DIR=%s: err %v, output %q; want a refusal", dir, err, out)
		}
	}
	if b, err := os.ReadFile(called); err == nil {
		t.Errorf("demo.sh ran rm %s", b)
	}
}

// The workflow's save step, run against a local origin where something else
// pushed to the data branch while the run crawled (a compaction): the
// push is refused, and the step puts the run's commit on top and pushes
// again, so the run's checks are not lost with the runner.
func TestWorkflowSaveStepRebasesOnARejectedPush(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to run the workflow's save step")
	}
	w := readWorkflow(t)
	var save string
	for _, s := range w.Jobs["crawl"].Steps {
		if strings.Contains(s.Run, "git push origin HEAD:refs/heads/data") {
			save = strings.ReplaceAll(s.Run, "${{ github.run_id }}", "42")
		}
	}
	if save == "" {
		t.Fatal("no save step")
	}
	dir := t.TempDir()
	git := func(in string, args ...string) string { t.Helper(); return gitIn(t, in, args...) }
	write := func(path, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	origin := filepath.Join(dir, "origin.git")
	git(dir, "init", "-q", "--bare", origin)
	seed := filepath.Join(dir, "seed")
	git(dir, "init", "-q", seed)
	write(filepath.Join(seed, "checks", "old.parquet"), "old")
	git(seed, "checkout", "-q", "-b", "data")
	git(seed, "add", "-A")
	git(seed, "commit", "-q", "-m", "first run")
	git(seed, "push", "-q", origin, "data")

	// The run's data worktree: a shallow clone, as the restore step makes.
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	git(work, "clone", "-q", "--depth=1", "--branch", "data", "file://"+origin, "data")
	write(filepath.Join(work, "data", "checks", "run42.parquet"), "new checks")
	// Meanwhile a compaction is pushed.
	other := filepath.Join(dir, "other")
	git(dir, "clone", "-q", "--branch", "data", origin, other)
	git(other, "rm", "-q", filepath.Join("checks", "old.parquet"))
	write(filepath.Join(other, "checks", "compacted.parquet"), "compacted")
	git(other, "add", "-A")
	git(other, "commit", "-q", "-m", "compaction")
	git(other, "push", "-q", "origin", "HEAD:refs/heads/data")

	cmd := exec.Command("bash", "-e", "-c", save)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("save step: %v\n%s", err, out)
	}
	files := strings.Fields(git(dir, "--git-dir", origin, "ls-tree", "-r", "--name-only", "data"))
	if !slices.Equal(files, []string{"checks/compacted.parquet", "checks/run42.parquet"}) {
		t.Errorf("the data branch holds %v, want the compaction and the run's checks", files)
	}
}

// The crawler and the build may write only the directories they need: a
// writable site directory would let a compromised crawl replace
// bin/observer or observer.toml, which the next run executes.
func TestSystemdWritablePathsAreExact(t *testing.T) {
	for _, name := range []string{"observer-crawl.service", "observer-site.service"} {
		u := parseUnit(t, filepath.Join("systemd", name))
		exec := u.one(t, "Service", "ExecStart")
		want := []string{flagValue(exec, "data")}
		if out := flagValue(exec, "out"); out != "" {
			want = append(want, filepath.Dir(out))
		}
		rw := u.words("Service", "ReadWritePaths")
		slices.Sort(rw)
		slices.Sort(want)
		if !slices.Equal(rw, want) {
			t.Errorf("%s: ReadWritePaths=%q, want exactly %q", name, rw, want)
		}
	}
}

// Every sandboxing setting the units rely on, each a line systemd would
// silently run without if it were dropped or turned off.
func TestSystemdSandboxSettings(t *testing.T) {
	want := map[string]string{
		"PrivateDevices": "yes", "PrivateMounts": "yes", "PrivateUsers": "yes",
		"RestrictNamespaces": "yes", "MemoryDenyWriteExecute": "yes", "LockPersonality": "yes",
		"RestrictRealtime": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
		"ProtectKernelLogs": "yes", "ProtectControlGroups": "yes", "ProtectClock": "yes",
		"ProtectHostname": "yes", "ProtectProc": "invisible", "ProcSubset": "pid",
		"AmbientCapabilities": "", "RemoveIPC": "yes",
	}
	for _, name := range []string{"observer-crawl.service", "observer-site.service"} {
		u := parseUnit(t, filepath.Join("systemd", name))
		for k, v := range want {
			if got := u.one(t, "Service", k); got != v {
				t.Errorf("%s: %s=%q, want %q", name, k, got, v)
			}
		}
	}
}

// NAT64 prefixes reach IPv4 space through a translator: 64:ff9b::a00:1 is
// 10.0.0.1 on a network that has one.
func TestCrawlServiceDeniesNAT64(t *testing.T) {
	u := parseUnit(t, filepath.Join("systemd", "observer-crawl.service"))
	var prefixes []netip.Prefix
	for _, d := range u.words("Service", "IPAddressDeny") {
		if p, err := netip.ParsePrefix(d); err == nil {
			prefixes = append(prefixes, p)
		}
	}
	for _, s := range []string{"64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b:1::a00:1"} {
		a := netip.MustParseAddr(s)
		if !slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) }) {
			t.Errorf("IPAddressDeny does not cover %s", s)
		}
	}
}

// A finished pass rebuilds the site at once, not at the next hourly build.
func TestCrawlServiceTriggersSiteBuild(t *testing.T) {
	u := parseUnit(t, filepath.Join("systemd", "observer-crawl.service"))
	if got := u.one(t, "Unit", "OnSuccess"); got != "observer-site.service" {
		t.Errorf("OnSuccess=%q, want observer-site.service", got)
	}
}

func TestNginxSecurityAndRedirect(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("nginx", "observer.conf"))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := parseNginx(string(src))
	var plain, site *nginxBlock
	for _, s := range root.children {
		if s.head != "server" {
			continue
		}
		if slices.ContainsFunc(s.directive("listen"), func(l string) bool { return strings.Contains(l, "ssl") }) {
			site = s
		} else {
			plain = s
		}
	}
	if plain == nil || site == nil {
		t.Fatal("want a plain HTTP and a TLS server block")
	}
	// Plain HTTP serves nothing of the site: it only redirects.
	if len(plain.directive("root")) != 0 {
		t.Errorf("the plain HTTP server has a root %q", plain.directive("root"))
	}
	for _, loc := range plain.children {
		if loc.head == "location /" {
			if r := loc.directive("return"); len(r) != 1 || !strings.HasPrefix(r[0], "301 https://") || len(loc.directive("root")) != 0 {
				t.Errorf("plain HTTP location / returns %q: want a 301 to https and nothing served", r)
			}
		}
	}
	headers := strings.Join(site.directive("add_header"), "\n")
	for _, h := range []string{"Strict-Transport-Security", "X-Frame-Options"} {
		if !strings.Contains(headers, h) {
			t.Errorf("no %s header", h)
		}
	}
	// Only reads: anything but GET and HEAD is refused.
	refused := false
	for _, b := range site.children {
		if strings.HasPrefix(b.head, "if ($request_method !~") && strings.Contains(b.head, "GET|HEAD") &&
			slices.Equal(b.directive("return"), []string{"405"}) {
			refused = true
		}
	}
	if !refused {
		t.Error("the TLS server does not refuse methods other than GET and HEAD")
	}
}

// workflowStep returns the run script of the crawl job's step with that name.
func workflowStep(t *testing.T, name string) string {
	t.Helper()
	for _, s := range readWorkflow(t).Jobs["crawl"].Steps {
		if s.Name == name {
			return s.Run
		}
	}
	t.Fatalf("no step %q", name)
	return ""
}

// The crawl step, run with a stand-in observer: exit 3 (cut short by the
// budget) lets the job go on to build and publish the site; any other
// failure fails the step.
func TestWorkflowCrawlStepExitCodes(t *testing.T) {
	script := workflowStep(t, "Crawl")
	for rc, wantOK := range map[int]bool{0: true, 3: true, 1: false, 2: false} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "bin", "observer"), []byte(fmt.Sprintf("#!/bin/sh\nexit %d\n", rc)), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CRAWL_DURATION=1m")
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Errorf("observer exiting %d: step error %v, want success %v\n%s", rc, err, wantOK, out)
		}
	}
}

// The restore step: an origin with no data branch starts one (with the
// derived state ignored); an origin that cannot be read fails the step
// rather than crawling from the seeds alone.
func TestWorkflowRestoreStep(t *testing.T) {
	script := workflowStep(t, "Restore data/ from the data branch")
	git := func(in string, args ...string) { t.Helper(); gitIn(t, in, args...) }
	setup := func(origin string) string {
		dir := t.TempDir()
		work := filepath.Join(dir, "work")
		os.MkdirAll(filepath.Join(work, "data"), 0o755)
		os.WriteFile(filepath.Join(work, "data", "seeds.txt"), []byte("mastodon.social\n"), 0o644)
		git(work, "init", "-q")
		git(work, "add", "-A")
		git(work, "commit", "-q", "-m", "main")
		git(work, "remote", "add", "origin", origin)
		return work
	}
	run := func(work string) ([]byte, error) {
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = work
		return cmd.CombinedOutput()
	}

	origin := filepath.Join(t.TempDir(), "origin.git")
	git(filepath.Dir(origin), "init", "-q", "--bare", origin)
	work := setup(origin)
	if out, err := run(work); err != nil {
		t.Fatalf("restore with no data branch: %v\n%s", err, out)
	}
	ignore, _ := os.ReadFile(filepath.Join(work, "data", ".gitignore"))
	for _, p := range []string{"derived/", "tmp/", ".lock", "seeds.txt", "blocklist.txt"} {
		if !slices.Contains(strings.Fields(string(ignore)), p) {
			t.Errorf("data/.gitignore %q lacks %s: it would be committed to the data branch", ignore, p)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "data", "seeds.txt")); err != nil {
		t.Errorf("the seed list was not copied into data/: %v", err)
	}

	work = setup(filepath.Join(t.TempDir(), "no-such-origin.git"))
	if out, err := run(work); err == nil {
		t.Errorf("restore from an unreadable origin succeeded:\n%s", out)
	}
}
