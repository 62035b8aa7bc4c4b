package crawl

import (
	"context"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl/internal/parse"
)

// capOptOut bounds the small documents that carry opt-out flags.
const capOptOut = 64 << 10

// optOutSignal is one software family's published "leave me out" flag.
type optOutSignal struct {
	path   string
	what   string // the flag, as the check's Error names it
	parsed func([]byte) (bool, error)
}

var (
	statusNetPrivate = optOutSignal{"/api/statusnet/config.json", "site.private", parse.StatusNetPrivate}
	siteInfoHidden   = optOutSignal{"/siteinfo.json", "hide_in_statistics", parse.SiteInfoHidden}
)

// optOutSignals maps NodeInfo software names to the flag that software
// publishes. Only these are asked, and only after a valid NodeInfo, so the
// flag costs one small request where it can exist and none elsewhere.
var optOutSignals = map[string]optOutSignal{
	"gnusocial": statusNetPrivate,
	"friendica": statusNetPrivate,
	"hubzilla":  siteInfoHidden,
	// Hubzilla's predecessor. Its NodeInfo names the platform by
	// RED_PLATFORM, which is "redmatrix" (Hubzilla lowercases the platform
	// name it serves), never "red".
	"redmatrix": siteInfoHidden,
	"zap":       siteInfoHidden, // Hubzilla's fork
}

// optedOut reads the software's opt-out flag, if it publishes one, and
// reports whether it is set (the outcome is then opted_out). A flag that
// robots.txt keeps us from reading, or that cannot be read or parsed, is
// taken as not set: it never changes the outcome of an alive host.
func (k *check) optedOut(ctx context.Context) bool {
	sig, ok := optOutSignals[k.res.Check.Software]
	if !ok {
		return false
	}
	if !k.f.robots.Allowed(sig.path) {
		k.f.note("robots.txt disallows %s; opt-out flag not read", sig.path)
		return false
	}
	status, body, stop, err := k.f.getBytes(ctx, request{url: k.f.url(sig.path), accept: "application/json", cap: capOptOut})
	switch {
	case err != nil:
		k.f.note("%s unreadable (%s); not opted out", sig.path, errorText(err))
		return false
	case stop != nil && stop.Disallowed != "":
		k.f.note("robots.txt disallows %s (%s redirects there); opt-out flag not read", stop.Disallowed, sig.path)
		return false
	case stop != nil:
		k.f.note("%s redirects off the host (%s), not followed; not opted out", sig.path, stop.URL)
		return false
	case status < 200 || status > 299:
		k.f.note("%s: HTTP %d; not opted out", sig.path, status)
		return false
	}
	set, err := sig.parsed(body)
	if err != nil {
		k.f.note("%s: %v; not opted out", sig.path, err)
		return false
	}
	if !set {
		k.f.note("%s: %s not set", sig.path, sig.what)
		return false
	}
	// The admin asked to be left out: keep nothing the site said about
	// itself, as for a robots.txt opt-out.
	c := &k.res.Check
	*c = observer.Check{Host: c.Host, CheckedAt: c.CheckedAt, PassID: c.PassID}
	k.set(observer.OutcomeOptedOut, status, "%s: %s is set", sig.path, sig.what)
	return true
}
