package fedisim

import (
	"strings"
)

// Peers endpoint shapes.
const (
	peersNone     = iota
	peersMastodon // GET /api/v1/instance/peers: ["host", ...]
	peersMisskey  // POST /api/federation/instances {"limit","offset","blocked"}: [{"host":...,"isBlocked":...}]
	peersLemmy    // GET /api/v3/federated_instances; from 1.0, only GET /api/v4/federated_instances (cursor pages)
	peersPeerTube // GET /api/v1/server/followers and /following, ?state=accepted
	peersMbin     // GET /api/federated: {"instances":[{"domain":...}]}; /api/defederated is its block list
)

const (
	pathMastodonPeers = "/api/v1/instance/peers"
	pathMisskeyPeers  = "/api/federation/instances"
	pathLemmyPeers    = "/api/v3/federated_instances"
	pathLemmyPeersV4  = "/api/v4/federated_instances"
	pathPTFollowers   = "/api/v1/server/followers"
	pathPTFollowing   = "/api/v1/server/following"
	pathMbinPeers     = "/api/federated"
	pathMbinBlocked   = "/api/defederated"
)

type family struct {
	name     string   // Info.Family
	niName   string   // NodeInfo software.name
	weight   int      // share of instances, out of the sum of weights
	peers    int      // peers endpoint shape
	versions []string // realistic versions, including non-semver ones
	schema   string   // NodeInfo schema version served by default
	docPath  string   // where the NodeInfo document lives; %s is the schema version
	alsoOld  bool     // also links a 1.0 document (Friendica, diaspora-era software)
	repo     string
}

var families = []family{
	{"mastodon", "mastodon", 420, peersMastodon, []string{"4.3.2", "4.2.13", "4.1.22", "4.4.0-beta.1", "3.5.19", "4.3.0rc1"}, "2.0", "/nodeinfo/%s", false, "https://github.com/mastodon/mastodon"},
	{"hometown", "mastodon", 15, peersMastodon, []string{"4.2.10+hometown-1.1.1", "4.0.2+hometown-1.1.0"}, "2.0", "/nodeinfo/%s", false, "https://github.com/hometown-fork/hometown"},
	{"glitch", "mastodon", 20, peersMastodon, []string{"4.3.2+glitch", "4.2.12+glitch+cat"}, "2.0", "/nodeinfo/%s", false, "https://github.com/glitch-soc/mastodon"},
	{"pleroma", "pleroma", 50, peersMastodon, []string{"2.7.0", "2.6.3", "2.5.5-123-gabcdef0-develop"}, "2.1", "/nodeinfo/%s.json", false, "https://git.pleroma.social/pleroma/pleroma"},
	{"akkoma", "akkoma", 35, peersMastodon, []string{"3.13.2", "3.12.1-0-g1234abc", "3.10.4-develop"}, "2.1", "/nodeinfo/%s.json", false, "https://akkoma.dev/AkkomaGang/akkoma"},
	{"misskey", "misskey", 60, peersMisskey, []string{"2024.11.0", "2023.12.2", "13.14.2", "2025.2.0-beta.3"}, "2.1", "/nodeinfo/%s", false, "https://github.com/misskey-dev/misskey"},
	{"sharkey", "sharkey", 35, peersMisskey, []string{"2024.11.1", "2024.9.4-dev", "2025.2.2"}, "2.1", "/nodeinfo/%s", false, "https://activitypub.software/TransFem-org/Sharkey"},
	{"firefish", "firefish", 12, peersMisskey, []string{"1.0.5-rc", "20240206", "1.0.4-beta31"}, "2.1", "/nodeinfo/%s", false, "https://firefish.dev/firefish/firefish"},
	{"iceshrimp", "iceshrimp", 12, peersMisskey, []string{"2023.12.8", "2024.1-beta3", "2023.12.4-hotfix"}, "2.1", "/nodeinfo/%s", false, "https://iceshrimp.dev/iceshrimp/iceshrimp"},
	{"lemmy", "lemmy", 55, peersLemmy, []string{"0.19.7", "0.19.3", "0.18.5", "0.17.4", "v0.19.8-beta.1", "1.0.0", "1.0.0-rc.2"}, "2.1", "/nodeinfo/%s", false, "https://github.com/LemmyNet/lemmy"},
	{"peertube", "peertube", 45, peersPeerTube, []string{"6.3.3", "7.0.0", "5.2.1", "7.1.0-rc.1"}, "2.0", "/nodeinfo/%s.json", false, "https://github.com/Chocobozzz/PeerTube"},
	{"gotosocial", "gotosocial", 40, peersMastodon, []string{"0.17.3 git-5bb8b52", "0.16.0", "0.18.0-rc1 git-abc1234"}, "2.0", "/nodeinfo/%s", false, "https://github.com/superseriousbusiness/gotosocial"},
	{"friendica", "friendica", 35, peersMastodon, []string{"2024.08-1571", "2024.03-dev-1550", "2023.12"}, "2.0", "/nodeinfo/%s", true, "https://github.com/friendica/friendica"},
	{"bookwyrm", "bookwyrm", 18, peersMastodon, []string{"0.7.4", "0.7.5", "0.6.6"}, "2.0", "/nodeinfo/%s", false, "https://github.com/bookwyrm-social/bookwyrm"},
	{"mbin", "mbin", 10, peersMbin, []string{"1.7.4", "1.8.0", "1.6.0-rc1"}, "2.0", "/nodeinfo/%s", false, "https://github.com/MbinOrg/mbin"},
	{"writefreely", "writefreely", 18, peersNone, []string{"0.15.1", "0.14.0", "0.13.2"}, "2.0", "/api/nodeinfo", false, "https://github.com/writefreely/writefreely"},
	{"unknown", "", 15, peersMastodon, []string{"0.9.2", "1.0", "2024-10-01", "alpha"}, "2.0", "/nodeinfo/%s", false, ""},
}

// unknownNames are software names the crawler has no special endpoint for.
var unknownNames = []string{"mitra", "snac", "takahe", "wafrn", "fedisim-unknown"}

var familyTotal = func() int {
	t := 0
	for _, f := range families {
		t += f.weight
	}
	return t
}()

func (w *world) family(i uint64) *family {
	r := int(w.hash(i, saltFamily) % uint64(familyTotal))
	if w.isHub(i) {
		// Hubs are the big Mastodon-compatible servers that seed lists name.
		return &families[0]
	}
	for k := range families {
		if r < families[k].weight {
			return &families[k]
		}
		r -= families[k].weight
	}
	return &families[0]
}

func pick[T any](h uint64, xs []T) T { return xs[h%uint64(len(xs))] }

var descriptions = []string{
	"A small, friendly instance for people who like %s things.",
	"General-purpose server run by volunteers. Be excellent to each other.",
	"Home of the %s community. Registrations are reviewed by hand.",
	"Un serveur pour les amateurs de %s.",
	"Eine Instanz für alles rund um %s.",
	"",
}

// info builds the ground truth of instance i (k is i, or n+i for its
// redirect target host).
func (w *world) info(i uint64) Info {
	f := w.family(i)
	h := w.hash(i, saltName)
	adj := adjectives[h%uint64(len(adjectives))]
	noun := nouns[(h>>16)%uint64(len(nouns))]
	style := w.hash(i, saltStyle)
	if w.isHub(i) {
		style = 2 // hubs are big, conventional Mastodon servers: no odd capitals
	}

	inf := Info{
		Host:   w.hostFor(i),
		Index:  int(i),
		Family: f.name,
		Hub:    w.isHub(i),
	}
	inf.NodeInfoName = f.niName
	if f.name == "unknown" {
		inf.NodeInfoName = pick(style>>40, unknownNames)
	}
	// A few servers (or their proxies) capitalise the name.
	switch style % 40 {
	case 0:
		inf.NodeInfoName = strings.ToUpper(inf.NodeInfoName[:1]) + inf.NodeInfoName[1:]
	case 1:
		inf.NodeInfoName = strings.ToUpper(inf.NodeInfoName)
	}
	inf.Software = strings.ToLower(inf.NodeInfoName)
	inf.Version = pick(w.hash(i, saltVersion), f.versions)
	inf.NodeInfoVersion = w.schema(i, f)

	title := strings.ToUpper(adj[:1]) + adj[1:] + " " + strings.ToUpper(noun[:1]) + noun[1:]
	switch (style >> 8) % 4 {
	case 0:
		inf.Name = title + " Social"
	case 1:
		inf.Name = title
	case 2:
		inf.Name = inf.Host
	case 3:
		inf.Name = "The " + title + " Collective"
	}
	d := pick(w.hash(i, saltText), descriptions)
	inf.Description = strings.ReplaceAll(d, "%s", noun)

	// Heavy-tailed usage: most instances are tiny, a few are huge.
	u := 1 - w.unit(i, saltUsage)
	users := int64(1 / (u * u))
	if inf.Hub {
		users = 20000 + int64(w.hash(i, saltUsage3)%500000)
	}
	if users > 3_000_000 {
		users = 3_000_000
	}
	inf.Users = users
	inf.ActiveHalfyear = users * int64(20+w.hash(i, saltUsage2)%60) / 100
	inf.ActiveMonth = inf.ActiveHalfyear * int64(20+w.hash(i, saltUsage3)%60) / 100
	inf.LocalPosts = users * int64(3+w.hash(i, saltUsage2)%400)
	inf.Open = (style>>16)%3 != 0

	inf.PeersStatus = 200
	switch f.peers {
	case peersMastodon:
		inf.PeersPath = pathMastodonPeers
	case peersMisskey:
		inf.PeersPath = pathMisskeyPeers
	case peersLemmy:
		inf.PeersPath = pathLemmyPeers
		if strings.HasPrefix(inf.Version, "1.") {
			inf.PeersPath = pathLemmyPeersV4
		}
	case peersPeerTube:
		inf.PeersPath = pathPTFollowing
	case peersMbin:
		inf.PeersPath = pathMbinPeers
	}
	if inf.PeersPath == "" {
		inf.PeersStatus = 404
	} else if !inf.Hub && w.unit(i, saltPeersStatus) < w.cfg.PeersDenied {
		inf.PeersStatus = pick(w.hash(i, saltPeersStatus+100), []int{401, 403, 404})
	}

	t := w.timeline(i)
	inf.BornDay, inf.DiesDay, inf.RevivesDay = t.born, t.dies, t.revives
	inf.MovesDay, inf.MovingDay, inf.MovingEnd, inf.OptOutDay = t.moves, t.moving, t.movingEnd, t.optOut
	inf.DownMode = pick(w.hash(i, saltMode), []string{DownUnreachable, DownUnreachable, Down500, Down502, Down503})
	if t.moves != NoDay {
		inf.MovesTo = w.hostFor(w.n + i)
		inf.MoveCode = pick(w.hash(i, saltMode+1), []int{301, 308})
	}
	if t.moving != NoDay {
		inf.MovingTo = w.hostFor(w.n + i)
		inf.MovingCode = pick(w.hash(i, saltMode+1), []int{302, 307})
	}
	if t.optOut != NoDay {
		inf.OptOutRule = pick(w.hash(i, saltRobots), optOutRules)
	}
	return inf
}

// schema picks the NodeInfo schema version instance i links first.
func (w *world) schema(i uint64, f *family) string {
	if w.isHub(i) {
		return f.schema
	}
	switch w.hash(i, saltStyle+1) % 20 {
	case 0, 1:
		return "2.2"
	case 2:
		return "2.1"
	case 3:
		return "1.1"
	case 4:
		return "1.0"
	}
	return f.schema
}

// optOutRules are robots.txt bodies that forbid the crawler from fetching
// NodeInfo, by product token or for everyone.
var optOutRules = []string{
	"User-agent: FediverseObserver\nDisallow: /\n",
	"User-agent: *\nDisallow: /\n",
	"User-agent: FediverseObserver\nDisallow: /.well-known/nodeinfo\n\nUser-agent: *\nAllow: /\n",
	"# We do not want to be listed.\nUser-agent: Googlebot\nDisallow:\n\nUser-agent: FediverseObserver\nDisallow: /\n",
	"User-agent: *\nDisallow: /.well-known/\n",
}

// robotsAllow are the robots.txt bodies of instances that have not opted out;
// "" means robots.txt answers 404.
var robotsAllow = []string{
	"User-agent: *\nDisallow:\n",
	"User-agent: *\nDisallow:\n",
	"User-agent: *\nDisallow: /media_proxy/\nDisallow: /interact/\n",
	"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /api/v1/accounts\nDisallow: /search\n",
	"",
}
