package fedisim

import (
	"math"
	"strconv"
	"strings"
)

// NoDay marks a life event that never happens in Info.
const NoDay = -1

// State is what a host serves on one simulated day.
type State string

// The states a host can be in on a given day.
const (
	StateUnknown  State = "unknown"   // not a host of this simulator
	StateNotBorn  State = "not_born"  // unreachable: the instance does not exist yet
	StateAlive    State = "alive"     // serves NodeInfo, peers and an allow-all robots.txt
	StateDown     State = "down"      // dead: unreachable or 5xx, see Info.DownMode
	StateMoved    State = "moved"     // permanent redirect (301/308) of every path to Status.Target
	StateMoving   State = "moving"    // temporary redirect (302/307) of every path to Status.Target
	StateOptedOut State = "opted_out" // robots.txt forbids the crawler (NodeInfo is still served)
)

// Status is a host's state on one day; Target is the redirect target host for
// StateMoved and StateMoving.
type Status struct {
	State  State
	Target string
}

// Down modes: how a dead instance fails.
const (
	DownUnreachable = "unreachable" // TLS handshake refused / connection closed
	Down500         = "500"
	Down502         = "502"
	Down503         = "503"
)

// Info is the ground truth about one host, for test assertions.
type Info struct {
	Host  string
	Index int // instance number, -1 for hostile and spam-farm hosts
	// Family is the simulated software family ("mastodon", "hometown",
	// "glitch", "misskey", ...); Software is the lower-cased NodeInfo
	// software.name the crawler should record (hometown and glitch say
	// "mastodon"); NodeInfoName is software.name exactly as served.
	Family          string
	Software        string
	NodeInfoName    string
	Version         string
	NodeInfoVersion string // schema version of the document the well-known document points to first
	Name            string
	Description     string
	Users           int64
	ActiveMonth     int64
	ActiveHalfyear  int64
	LocalPosts      int64
	Open            bool
	// PeersPath is the peers endpoint ("" when the software has none);
	// PeersStatus is the HTTP status it answers with when alive (200, or
	// 401/403/404 for instances that hide their peers).
	PeersPath   string
	PeersStatus int
	Hub         bool // a well-connected instance; Seeds picks from these

	BornDay    int    // first day the instance answers (0 for those alive from the start)
	DiesDay    int    // first day it is down, or NoDay
	RevivesDay int    // first day it answers again after dying, or NoDay
	DownMode   string // how it fails while down (DownUnreachable, Down500, ...)
	MovesDay   int    // first day of a permanent redirect to MovesTo, or NoDay
	MovesTo    string
	MoveCode   int // 301 or 308
	MovingDay  int // first day of a temporary redirect to MovingTo, or NoDay
	MovingEnd  int // first day after the temporary redirect (the instance is back)
	MovingTo   string
	MovingCode int // 302 or 307
	OptOutDay  int // first day robots.txt forbids the crawler, or NoDay
	OptOutRule string
	// MoveTargetOf is set on a redirect target host: the host whose
	// instance it serves (from MovesDay, or during the moving window).
	MoveTargetOf string
}

// world is the pure, immutable part of the simulator: every property of
// instance i is a function of (seed, i), so nothing is stored per instance.
type world struct {
	cfg Config
	n   uint64
}

// Salts separate the independent random streams drawn for one instance.
const (
	saltName uint64 = iota + 1
	saltFamily
	saltBorn
	saltFate
	saltFateDay
	saltFateLen
	saltMode
	saltHub
	saltDegree
	saltPeerStart
	saltPeerStride
	saltUsage
	saltUsage2
	saltUsage3
	saltStyle
	saltVersion
	saltPeersStatus
	saltJunk
	saltRobots
	saltText
	saltJunkPick
)

// mix is the splitmix64 finaliser: a cheap, well-distributed 64-bit hash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (w *world) hash(i uint64, salt uint64) uint64 {
	return mix(w.cfg.Seed ^ mix(i*0x9e3779b97f4a7c15+salt*0xd6e8feb86659fd93))
}

// unit returns a uniform float in [0, 1).
func (w *world) unit(i uint64, salt uint64) float64 {
	return float64(w.hash(i, salt)>>11) / (1 << 53)
}

var adjectives = []string{
	"amber", "brave", "calm", "dapper", "eager", "fancy", "gentle", "happy",
	"icy", "jolly", "kind", "lucky", "merry", "nimble", "odd", "proud",
	"quiet", "rapid", "shy", "tidy", "upbeat", "vivid", "witty", "young",
	"zesty", "bold", "cosy", "dusky", "early", "fuzzy", "golden", "hidden",
	"indigo", "jade", "keen", "lively", "mossy", "noble", "olive", "plucky",
	"rustic", "silver", "tiny", "urban", "velvet", "wild", "sunny", "misty",
}

var nouns = []string{
	"otter", "badger", "comet", "delta", "ember", "fjord", "grove", "harbor",
	"island", "jungle", "kettle", "lagoon", "meadow", "nebula", "orchard", "pebble",
	"quarry", "river", "summit", "tundra", "valley", "willow", "yarrow", "zephyr",
	"acorn", "beacon", "canyon", "dune", "estuary", "forest", "glacier", "heath",
	"inlet", "juniper", "kelp", "lantern", "marsh", "nook", "oasis", "prairie",
	"reef", "spruce", "thicket", "upland", "vista", "wharf", "cove", "hollow",
}

// tlds are ICANN public suffixes (checked against the Public Suffix List in
// the tests); repeats weight the draw towards the common fediverse ones.
var tlds = []string{
	"social", "social", "social", "social", "net", "net", "org", "org", "de", "de",
	"fr", "club", "xyz", "online", "town", "cafe", "space", "io", "eu", "co.uk",
	"nl", "be", "ch", "at", "se", "fi", "it", "es", "pl", "jp",
	"ca", "com", "com", "tech", "zone", "world", "party", "ninja", "dev", "app",
	"me", "uk", "blog", "host", "site", "network", "community", "garden",
}

// hostFor returns the host name of number k. Numbers below n are the
// instances themselves; n+i is the redirect target of instance i. The number
// is written in base 36 as the last part of the first label, so the reverse
// mapping needs no table.
func (w *world) hostFor(k uint64) string {
	h := w.hash(k, saltName)
	var b strings.Builder
	b.Grow(40)
	b.WriteString(adjectives[h%uint64(len(adjectives))])
	b.WriteByte('-')
	b.WriteString(nouns[(h>>16)%uint64(len(nouns))])
	b.WriteByte('-')
	var buf [16]byte
	b.Write(strconv.AppendUint(buf[:0], k, 36))
	b.WriteByte('.')
	b.WriteString(tlds[(h>>32)%uint64(len(tlds))])
	return b.String()
}

// number is the inverse of hostFor: it returns k and whether host is exactly
// hostFor(k) for some k < 2n.
func (w *world) number(host string) (uint64, bool) {
	dot := strings.IndexByte(host, '.')
	if dot <= 0 {
		return 0, false
	}
	label := host[:dot]
	dash := strings.LastIndexByte(label, '-')
	if dash < 0 {
		return 0, false
	}
	k, err := strconv.ParseUint(label[dash+1:], 36, 64)
	if err != nil || k >= 2*w.n {
		return 0, false
	}
	if w.hostFor(k) != host {
		return 0, false
	}
	return k, true
}

// born is the first day instance i answers.
func (w *world) born(i uint64) int {
	if w.isHub(i) {
		return 0
	}
	if w.unit(i, saltBorn) >= w.cfg.BornLater {
		return 0
	}
	if w.cfg.Horizon <= 1 {
		return 1
	}
	return 1 + int(w.hash(i, saltBorn+100)%uint64(w.cfg.Horizon-1))
}

func (w *world) isHub(i uint64) bool {
	return w.unit(i, saltHub) < w.cfg.HubFraction
}

// fate kinds, drawn once per instance.
const (
	fateStable = iota
	fateDies
	fateDiesRevives
	fateMoves
	fateMoving
	fateOptOut
)

func (w *world) fate(i uint64) int {
	if w.isHub(i) {
		return fateStable
	}
	u := w.unit(i, saltFate)
	c := w.cfg
	for _, f := range []struct {
		p    float64
		kind int
	}{{c.Dies, fateDies}, {c.Revives, fateDiesRevives}, {c.Moves, fateMoves}, {c.Moving, fateMoving}, {c.OptsOut, fateOptOut}} {
		if u < f.p {
			return f.kind
		}
		u -= f.p
	}
	return fateStable
}

// eventDay picks the day of a life event after birth, within the horizon.
func (w *world) eventDay(i uint64, born int) int {
	first := born + 1
	last := w.cfg.Horizon
	if last < first+1 {
		last = first + 1
	}
	return first + int(w.hash(i, saltFateDay)%uint64(last-first))
}

// timeline is the part of Info that decides the state on a day; it is cheap
// enough to compute for every peers-list entry.
type timeline struct {
	born, dies, revives, moves, moving, movingEnd, optOut int
}

func (w *world) timeline(i uint64) timeline {
	t := timeline{born: w.born(i), dies: NoDay, revives: NoDay, moves: NoDay, moving: NoDay, movingEnd: NoDay, optOut: NoDay}
	switch w.fate(i) {
	case fateDies:
		t.dies = w.eventDay(i, t.born)
	case fateDiesRevives:
		t.dies = w.eventDay(i, t.born)
		t.revives = t.dies + 2 + int(w.hash(i, saltFateLen)%6)
	case fateMoves:
		t.moves = w.eventDay(i, t.born)
	case fateMoving:
		t.moving = w.eventDay(i, t.born)
		t.movingEnd = t.moving + 2 + int(w.hash(i, saltFateLen)%4)
	case fateOptOut:
		// A third opt out from their first day, the rest change their mind later.
		if w.hash(i, saltFateLen)%3 == 0 {
			t.optOut = t.born
		} else {
			t.optOut = w.eventDay(i, t.born)
		}
	}
	return t
}

func (t timeline) state(day int) State {
	switch {
	case day < t.born:
		return StateNotBorn
	case t.dies != NoDay && day >= t.dies && (t.revives == NoDay || day < t.revives):
		return StateDown
	case t.moves != NoDay && day >= t.moves:
		return StateMoved
	case t.moving != NoDay && day >= t.moving && day < t.movingEnd:
		return StateMoving
	case t.optOut != NoDay && day >= t.optOut:
		return StateOptedOut
	}
	return StateAlive
}

// targetState is the state of instance i's redirect target host.
func (t timeline) targetState(day int) State {
	switch {
	case t.moves != NoDay && day >= t.moves:
		return StateAlive
	case t.moving != NoDay && day >= t.moving && day < t.movingEnd:
		return StateAlive
	}
	return StateNotBorn
}

// currentHost is the name under which instance i is known on day (its
// redirect target once it has moved for good), or "" when not born.
func (w *world) currentHost(i uint64, day int) string {
	t := w.timeline(i)
	if day < t.born {
		return ""
	}
	if t.moves != NoDay && day >= t.moves {
		return w.hostFor(w.n + i)
	}
	return w.hostFor(i)
}

// degree is the number of peers-list slots of instance i: a Pareto tail
// between MinDegree and MaxDegree, with hubs at HubDegree.
func (w *world) degree(i uint64) int {
	max := int(w.n) - 1
	d := 0
	if w.isHub(i) {
		d = w.cfg.HubDegree
	} else {
		u := 1 - w.unit(i, saltDegree) // (0, 1]
		d = int(float64(w.cfg.MinDegree) / math.Pow(u, 1/1.3))
		if d > w.cfg.MaxDegree {
			d = w.cfg.MaxDegree
		}
	}
	if d > max {
		d = max
	}
	if d < 0 {
		d = 0
	}
	return d
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// eachPeer calls yield with the index of every peer of instance i that is
// born on day, in a fixed order, until yield returns false. The slots are an
// arithmetic progression modulo n with a stride coprime to n, so they are
// distinct without any bookkeeping: O(1) memory whatever the degree.
func (w *world) eachPeer(i uint64, day int, yield func(j uint64) bool) {
	deg := w.degree(i)
	if deg == 0 {
		return
	}
	n := w.n
	start := w.hash(i, saltPeerStart) % n
	stride := uint64(1)
	if n > 2 {
		stride = 1 + w.hash(i, saltPeerStride)%(n-1)
		for gcd(stride, n) != 1 {
			stride++
			if stride >= n {
				stride = 1
			}
		}
	}
	j := start
	taken := 0
	for k := uint64(0); k < n && taken < deg; k++ {
		if j != i {
			taken++
			if w.born(j) <= day && !yield(j) {
				return
			}
		}
		j += stride
		if j >= n {
			j -= n
		}
	}
}
