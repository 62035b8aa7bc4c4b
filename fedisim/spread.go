package fedisim

import (
	"iter"
	"math"
	"strings"
	"sync"
	"time"
)

// Spread is a model of how news of an instance spreads, for measuring how
// late the observer reports new instances (Config.Spread). Instances are
// born and die over time, to the second; a new instance federates first
// with a few of the hubs, within hours of its birth, then with other
// instances over days, preferring old ones, so degrees are heavy-tailed and
// its name reaches the hubs' peers lists first. A peers list names every
// instance its instance federated with, in either direction, as Mastodon's
// does (its instances table keeps every domain it has heard of, dead or
// not): so lists name long-dead instances, names that never were servers
// (Ghosts: a typo, a test domain, a server that was never set up) and a few
// hosts in a second spelling (upper case, a trailing dot).
//
// Everything is a function of (seed, index), computed when asked, but for
// one index: who links to each instance, which a peers list needs and which
// would otherwise cost a scan of every younger instance. It is built on
// first use, from every instance's links: about 12 bytes a link, some 15
// links an instance (near 200 MB and a few seconds at a million).
type Spread struct {
	// Days over which instances are born after Config.Day0; default 90.
	Days int
	// Before is the fraction of instances born before Day0, over the year
	// before it: the Fediverse as the observer first finds it; default 0.6.
	Before float64
	// Hubs are the first instances: big Mastodon servers, born a year
	// before Day0 and alive throughout; default max(5, instances/500).
	Hubs int
	// Ghosts is the fraction of names that never were servers; default 0.1.
	Ghosts float64
	// Dies is the fraction of instances that die, after a lifetime drawn
	// with a mean of Lifetime (default 120 days); default 0.3. Revives is
	// the fraction of those that answer again, 2 to 20 days later;
	// default 0.1.
	Dies, Revives float64
	Lifetime      time.Duration
	// HubLinks is the mean number of hubs a new instance federates with,
	// each after a delay drawn with mean HubDelay; defaults 3 and 3h.
	HubLinks int
	HubDelay time.Duration
	// Links is the least number of other instances a new instance
	// federates with (Pareto-tailed above it), each after a delay drawn
	// with mean LinkDelay; defaults 3 and 4 days.
	Links     int
	LinkDelay time.Duration
	// Spellings is the fraction of peers-list entries that are listed a
	// second time in another spelling; default 0.02.
	Spellings float64
}

func (c *Spread) defaults(instances int) {
	if c.Days <= 0 {
		c.Days = 90
	}
	frac := func(p *float64, def float64) {
		switch {
		case *p == 0:
			*p = def
		case *p < 0:
			*p = 0
		}
	}
	frac(&c.Before, 0.6)
	frac(&c.Ghosts, 0.1)
	frac(&c.Dies, 0.3)
	frac(&c.Revives, 0.1)
	frac(&c.Spellings, 0.02)
	if c.Hubs <= 0 {
		c.Hubs = max(5, instances/500)
	}
	c.Hubs = min(c.Hubs, instances)
	if c.Lifetime <= 0 {
		c.Lifetime = 120 * 24 * time.Hour
	}
	if c.HubLinks <= 0 {
		c.HubLinks = 3
	}
	if c.HubDelay <= 0 {
		c.HubDelay = 3 * time.Hour
	}
	if c.Links <= 0 {
		c.Links = 3
	}
	if c.LinkDelay <= 0 {
		c.LinkDelay = 4 * 24 * time.Hour
	}
}

// Salts of the spread model's random streams, apart from the day world's.
const (
	saltSpreadBirth uint64 = iota + 1000
	saltSpreadGhost
	saltSpreadDies
	saltSpreadLife
	saltSpreadRevives
	saltSpreadReviveAfter
	saltSpreadHubCount
	saltSpreadHubPick
	saltSpreadHubDelay
	saltSpreadLinkCount
	saltSpreadLinkPick
	saltSpreadLinkDelay
	saltSpreadSpelling
	saltSpreadCachePhase
)

// NoTime marks a life event that never happens in Truth.
var NoTime = time.Time{}

// Truth is the ground truth about one instance of the spread model.
type Truth struct {
	Host  string
	Index int
	Hub   bool
	// Ghost: a name that never was a server; Born is when its name first
	// appears in a peers list, and it never answers.
	Ghost bool
	Born  time.Time // first answers (zero for a ghost)
	// FirstFederation is its first link with another instance: from then
	// on its name is in that instance's peers list (after the list's
	// cache, see PeersAt).
	FirstFederation time.Time
	Died            time.Time // stops answering, or NoTime
	Revived         time.Time // answers again, or NoTime
}

// AliveAt reports whether the instance answers at t.
func (tr Truth) AliveAt(t time.Time) bool {
	switch {
	case tr.Ghost || t.Before(tr.Born):
		return false
	case !tr.Died.IsZero() && !t.Before(tr.Died) && (tr.Revived.IsZero() || t.Before(tr.Revived)):
		return false
	}
	return true
}

// spreadWorld is the spread model over a world's names and faces.
type spreadWorld struct {
	w   *world
	c   Spread
	n   uint64
	day time.Duration
	// linkedFrom is the index of incoming links, built on first use.
	linkedFrom func() *incomingIndex
}

// incomingIndex holds every link by its older end: the links to instance i
// are from[start[i]:start[i+1]], formed at at[...] (offsets from Day0), in
// order of the younger instance.
type incomingIndex struct {
	start []int
	from  []uint32
	at    []time.Duration
}

func (s *spreadWorld) buildIncoming() *incomingIndex {
	idx := &incomingIndex{start: make([]int, s.n+1)}
	for k := range s.n {
		s.links(k, func(l link) bool {
			idx.start[l.to+1]++
			return true
		})
	}
	for i := range s.n {
		idx.start[i+1] += idx.start[i]
	}
	idx.from = make([]uint32, idx.start[s.n])
	idx.at = make([]time.Duration, idx.start[s.n])
	next := append([]int(nil), idx.start[:s.n]...)
	for k := range s.n {
		s.links(k, func(l link) bool {
			idx.from[next[l.to]], idx.at[next[l.to]] = uint32(k), l.at
			next[l.to]++
			return true
		})
	}
	return idx
}

func newSpreadWorld(w *world, c Spread) *spreadWorld {
	c.defaults(int(w.n))
	s := &spreadWorld{w: w, c: c, n: w.n, day: 24 * time.Hour}
	s.linkedFrom = sync.OnceValue(s.buildIncoming)
	return s
}

// offsets are durations from Config.Day0.
func (s *spreadWorld) at(d time.Duration) time.Time { return s.w.cfg.Day0.Add(d) }

func (s *spreadWorld) isHub(i uint64) bool { return i < uint64(s.c.Hubs) }

func (s *spreadWorld) isGhost(i uint64) bool {
	return !s.isHub(i) && s.w.unit(i, saltSpreadGhost) < s.c.Ghosts
}

// born is instance i's birth (or a ghost's first mention) as an offset
// from Day0. Instances are spread evenly in index order, each at a random
// point of its own slot, so that birth order is index order.
func (s *spreadWorld) born(i uint64) time.Duration {
	year := 365 * s.day
	if s.isHub(i) {
		return -year - s.day + time.Duration(i)*time.Minute
	}
	nBefore := uint64(float64(s.n) * s.c.Before)
	u := s.w.unit(i, saltSpreadBirth)
	if i < nBefore {
		slot := year / time.Duration(max(nBefore, 1))
		return -year + time.Duration(i)*slot + time.Duration(u*float64(slot))
	}
	span := time.Duration(s.c.Days) * s.day
	slot := span / time.Duration(max(s.n-nBefore, 1))
	return time.Duration(i-nBefore)*slot + time.Duration(u*float64(slot))
}

// expDelay draws an exponential delay with the given mean.
func (s *spreadWorld) expDelay(i, salt uint64, mean time.Duration) time.Duration {
	u := 1 - s.w.unit(i, salt) // (0, 1]
	return time.Duration(-math.Log(u) * float64(mean))
}

// death is when instance i stops answering and when it answers again
// (ok false: never dies; revive 0 with revives false: stays dead).
func (s *spreadWorld) death(i uint64) (died, revived time.Duration, dies, revives bool) {
	if s.isHub(i) || s.isGhost(i) || s.w.unit(i, saltSpreadDies) >= s.c.Dies {
		return 0, 0, false, false
	}
	died = s.born(i) + s.day + s.expDelay(i, saltSpreadLife, s.c.Lifetime)
	if s.w.unit(i, saltSpreadRevives) >= s.c.Revives {
		return died, 0, true, false
	}
	return died, died + 2*s.day + time.Duration(s.w.hash(i, saltSpreadReviveAfter)%uint64(18*s.day)), true, true
}

func (s *spreadWorld) alive(i uint64, d time.Duration) bool {
	if s.isGhost(i) || d < s.born(i) {
		return false
	}
	died, revived, dies, revives := s.death(i)
	return !dies || d < died || revives && d >= revived
}

// link is one federation link from a newer instance to an older one.
type link struct {
	to uint64
	at time.Duration // offset from Day0 at which it forms
}

// links yields instance i's links to older instances: to a few hubs within
// hours of its birth, then to others over days. A ghost has one link (the
// list that names it); hubs link to no one older (they are named by all).
func (s *spreadWorld) links(i uint64, yield func(link) bool) {
	if s.isHub(i) {
		return
	}
	b := s.born(i)
	hubs := uint64(s.c.Hubs)
	nHub := 1 + s.w.hash(i, saltSpreadHubCount)%uint64(2*s.c.HubLinks-1)
	nOther := uint64(0)
	if s.isGhost(i) {
		nHub = 1
	} else {
		u := 1 - s.w.unit(i, saltSpreadLinkCount)
		nOther = uint64(min(float64(s.c.Links)/math.Pow(u, 1/1.2), 300))
	}
	for k := range nHub {
		if !yield(link{to: s.w.hash(i, saltSpreadHubPick+k<<8) % hubs, at: b + s.expDelay(i, saltSpreadHubDelay+k<<8, s.c.HubDelay)}) {
			return
		}
	}
	if i <= hubs {
		return
	}
	for k := range nOther {
		// Old instances are the likelier partners: a power of a uniform
		// draw over those born before, which makes degrees heavy-tailed.
		u := s.w.unit(i, saltSpreadLinkPick+k<<8)
		to := hubs + uint64(math.Pow(u, 2.5)*float64(i-hubs))
		if to >= i {
			to = i - 1
		}
		if !yield(link{to: to, at: b + s.expDelay(i, saltSpreadLinkDelay+k<<8, s.c.LinkDelay)}) {
			return
		}
	}
}

// truth is the ground truth of instance i.
func (s *spreadWorld) truth(i uint64) Truth {
	tr := Truth{Host: s.w.hostFor(i), Index: int(i), Hub: s.isHub(i), Ghost: s.isGhost(i)}
	if !tr.Ghost {
		tr.Born = s.at(s.born(i))
	}
	first := time.Duration(math.MaxInt64)
	s.links(i, func(l link) bool {
		first = min(first, l.at)
		return true
	})
	// Links from younger instances can come first (a hub is named by
	// instances born after it).
	s.incoming(i, first, func(_ uint64, at time.Duration) bool {
		first = min(first, at)
		return true
	})
	if first != time.Duration(math.MaxInt64) {
		tr.FirstFederation = s.at(first)
	}
	if died, revived, dies, revives := s.death(i); dies {
		tr.Died = s.at(died)
		if revives {
			tr.Revived = s.at(revived)
		}
	}
	return tr
}

// incoming calls yield with each younger instance that linked to i by
// offset d, and when (its first such link), in index order, until yield
// returns false.
func (s *spreadWorld) incoming(i uint64, d time.Duration, yield func(k uint64, at time.Duration) bool) {
	idx := s.linkedFrom()
	from, at := idx.from[idx.start[i]:idx.start[i+1]], idx.at[idx.start[i]:idx.start[i+1]]
	for j := 0; j < len(from); {
		k, first, found := from[j], time.Duration(0), false
		for ; j < len(from) && from[j] == k; j++ {
			if at[j] <= d && (!found || at[j] < first) {
				first, found = at[j], true
			}
		}
		if found && !yield(uint64(k), first) {
			return
		}
	}
}

// peersAt yields the names instance i's peers list holds as of offset d:
// every instance it linked to or that linked to it by then, each once,
// and a few a second time in another spelling.
func (s *spreadWorld) peersAt(i uint64, d time.Duration) iter.Seq[string] {
	return func(yield func(string) bool) {
		seen := map[uint64]bool{}
		emit := func(k uint64) bool {
			if seen[k] {
				return true
			}
			seen[k] = true
			h := s.w.hostFor(k)
			if !yield(h) {
				return false
			}
			if s.w.unit(i^k<<20, saltSpreadSpelling) < s.c.Spellings {
				return yield(otherSpelling(h, s.w.hash(i^k<<20, saltSpreadSpelling+1)))
			}
			return true
		}
		ok := true
		s.links(i, func(l link) bool {
			if l.at <= d {
				ok = emit(l.to)
			}
			return ok
		})
		if !ok {
			return
		}
		s.incoming(i, d, func(k uint64, _ time.Duration) bool { return emit(k) })
	}
}

// otherSpelling is host as some peers lists spell it: capitalised, or
// with the root's trailing dot. The observer must count it once.
func otherSpelling(host string, h uint64) string {
	if h%2 == 0 {
		return strings.ToUpper(host[:1]) + host[1:]
	}
	return host + "."
}
