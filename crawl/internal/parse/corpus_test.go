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
	// A relay's development server: users.total only, no localPosts.
	"actiserve-0.1.0.json": {software: "actiserve", version: "0.1.0", docVersion: "2.0",
		users: 0, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "false"},
	"activity-relay.json": {software: "activity-relay", version: "2.0.5", docVersion: "2.1",
		users: 1, activeMonth: 1, activeHalfyear: 1, localPosts: -1, open: "true"},
	// 31 KB, most of it Akkoma's metadata (features, federation policies).
	"akkoma-coral-castle.json": {software: "akkoma", version: "3.12.2-0-g26a91d5", docVersion: "2.0",
		users: 117, activeMonth: 27, activeHalfyear: 36, localPosts: 26780, open: "true",
		name: "Coral Castle", description: "A social network for sea creatures"},
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
	// NodeInfo 1.0 of Friendica 3.5: usage is [], PHP's empty object, so
	// no counts; software names among the protocols.
	"friendica-3.5.2-pirati.ca-1.0.json": {software: "friendica", version: "3.5.2-dev-1216", docVersion: "1.0",
		users: -1, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "false",
		name: "pirati.ca - social networking for pirates"},
	// users is an empty object: no counts.
	"friendica-2024.03-gibiris.json": {software: "friendica", version: "2024.03-1557", docVersion: "2.0",
		users: -1, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "true",
		name: "Social Gibiris (The #Friendica Edition)"},
	"friendica-opensocial.space.json": {software: "friendica", version: "2024.03-1557", docVersion: "2.0",
		users: 558, activeMonth: 113, activeHalfyear: 216, localPosts: 5266, open: "true", name: "Friendica Open Social Space"},
	// An empty nodeDescription says nothing.
	"firefish.json": {software: "firefish", version: "20240504", docVersion: "2.1",
		users: 9, activeMonth: 7, activeHalfyear: 7, localPosts: 23857, open: "false", name: "Firefish"},
	// Funkwhale's design document's example response: its placeholders
	// ("string") are said, so kept; activeHalfYear is spelled with a capital Y.
	"firefish-calckey.world.json": {software: "firefish", version: "20240523", docVersion: "2.1",
		users: 714, activeMonth: 69, activeHalfyear: 257, localPosts: 30828, open: "true", name: "Calckey.world"},
	"funkwhale-spec-2.1.json": {software: "funkwhale", version: "1.4.0", docVersion: "2.1",
		users: 0, activeMonth: 0, activeHalfyear: 0, localPosts: 0, open: "true", name: "string"},
	// users is an empty object: no counts, nothing unusable.
	"gotosocial-gts.superseriousbusiness.org.json": {software: "gotosocial", version: "0.6.0 git-f9e5ec9", docVersion: "2.0",
		users: -1, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "false"},
	"gotosocial-0.16.0.json": {software: "gotosocial", version: "0.16.0+git-f1cbf6f", docVersion: "2.0",
		users: 5, activeMonth: -1, activeHalfyear: -1, localPosts: 3010, open: "false"},
	"iceshrimp-2023.12.7.json": {software: "iceshrimp", version: "2023.12.7", docVersion: "2.1",
		users: 185, activeMonth: 62, activeHalfyear: 140, localPosts: 13748, open: "true", name: "Iceshrimp.social"},
	// The software's own version where the schema version belongs: kept as
	// said (the check records it beside its link's schema).
	"iceshrimp.net-2024.1-alpha-shrimp.box464.social.json": {software: "iceshrimp.net", version: "2024.1-alpha", docVersion: "2024.1-alpha",
		users: 2, activeMonth: 2, activeHalfyear: 2, localPosts: 17, open: "false",
		name: "Iceshrimp.NET", description: "An Iceshrimp.NET instance"},
	"iceshrimp.net-2024.1-beta2.json": {software: "iceshrimp.net", version: "2024.1-beta2.security3+e1d25a9231", docVersion: "2.1",
		users: 2, activeMonth: 2, activeHalfyear: 2, localPosts: 45, open: "false",
		name: "Iceshrimp.NET", description: "An Iceshrimp.NET instance"},
	"lemmy-0.18.5.json": {software: "lemmy", version: "0.18.5", docVersion: "2.0",
		users: 149738, activeMonth: 10536, activeHalfyear: 26917, localPosts: 234483, open: "true"},
	"lemmy-cubing.social.json": {software: "lemmy", version: "0.17.3", docVersion: "2.0",
		users: 74234, activeMonth: 5, activeHalfyear: 5, localPosts: 2, open: "true"},
	// A Mastodon 3.0 document has neither services nor metadata.
	"mastodon-3.0.1-localhost.json": {software: "mastodon", version: "3.0.1", docVersion: "2.0",
		users: 3, activeMonth: 3, activeHalfyear: 3, localPosts: 31, open: "true"},
	"mastodon-4.3.0-closed-localhost.json": {software: "mastodon", version: "4.3.0", docVersion: "2.0",
		users: 4, activeMonth: 0, activeHalfyear: 0, localPosts: 6, open: "false", name: "Mastodon"},
	"mastodon-4.3.0-nightly-security.json": {software: "mastodon", version: "4.3.0-nightly.2024-07-05-security", docVersion: "2.0",
		users: 2001387, activeMonth: 229393, activeHalfyear: 586512, localPosts: 96286820, open: "true",
		name: "Mastodon", description: "The original server operated by the Mastodon gGmbH non-profit"},
	"mastodon-4.6.4-localhost.json": {software: "mastodon", version: "4.6.4", docVersion: "2.0",
		users: 4, activeMonth: 0, activeHalfyear: 0, localPosts: 5, open: "true", name: "Mastodon"},
	"mastodon-4.1.0.json": {software: "mastodon", version: "4.1.0", docVersion: "2.0",
		users: 971090, activeMonth: 167218, activeHalfyear: 384808, localPosts: 52071541, open: "true"},
	"mastodon-4.0.2.json": {software: "mastodon", version: "4.0.2", docVersion: "2.0",
		users: 20, activeMonth: 21, activeHalfyear: 21, localPosts: 415, open: "true"},
	"mastodon-asonix.dog.json": {software: "mastodon", version: "3.1.3-asonix-changes", docVersion: "2.0",
		users: 19, activeMonth: 5, activeHalfyear: 5, localPosts: 43036, open: "false"},
	// metadata is [], PHP's empty object.
	"mastodon-masto.asonix.dog.json": {software: "mastodon", version: "4.0.0rc2-asonix-changes", docVersion: "2.0",
		users: 7, activeMonth: 4, activeHalfyear: 7, localPosts: 12359, open: "false"},
	// Every object and array opens on a line of its own.
	"mastodon-mastodon.social-4.1.5.json": {software: "mastodon", version: "4.1.5+nightly-2023-07-28", docVersion: "2.0",
		users: 1479509, activeMonth: 470481, activeHalfyear: 776979, localPosts: 62251340, open: "true"},
	"mastodon-mastodon.social-4.5.json": {software: "mastodon", version: "4.5.0-nightly.2025-07-11", docVersion: "2.0",
		users: 2805128, activeMonth: 278110, activeHalfyear: 811772, localPosts: 138439181, open: "true",
		name: "Mastodon", description: "The original server operated by the Mastodon gGmbH non-profit"},
	"mastodon-mastodon.social.json": {software: "mastodon", version: "4.3.0-nightly.2024-04-30", docVersion: "2.0",
		users: 1935016, activeMonth: 238223, activeHalfyear: 618795, localPosts: 90175135, open: "true",
		name: "Mastodon", description: "The original server operated by the Mastodon gGmbH non-profit"},
	"mastodon-pc.cafe.json": {software: "mastodon", version: "4.2.8", docVersion: "2.0",
		users: 2, activeMonth: 2, activeHalfyear: 2, localPosts: 4, open: "false"},
	"meisskey-meisskey.one.json": {software: "meisskey", version: "10.102.699-m544", docVersion: "2.1",
		users: 1123, activeMonth: 89, activeHalfyear: 305, localPosts: 268739, open: "true", name: "meisskey.one"},
	// micro.blog: metaData with a capital D, empty; nothing of it is read.
	"microdotblog-micro.blog.json": {software: "microdotblog", version: "2.1", docVersion: "2.0",
		users: 167066, activeMonth: 4082, activeHalfyear: 37040, localPosts: 7853386, open: "true"},
	// The software name capitalised; no active-user counts.
	"mobilizon-mobilizon.fr.json": {software: "mobilizon", version: "5.1.0", docVersion: "2.1",
		users: 9204, activeMonth: -1, activeHalfyear: -1, localPosts: 7545, open: "true",
		name: "Mobilizon", description: "Mobilizon.fr est l'instance Mobilizon de Framasoft."},
	// A software name with a space and capitals, kept lower-cased; usage is
	// PHP's [] (no counts).
	"nextcloud-social-0.5.0-beta.json": {software: "nextcloud social", version: "0.5.0-beta", docVersion: "2.0",
		users: -1, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "false"},
	"peertube-video.blender.org.json": {software: "peertube", version: "5.0.0", docVersion: "2.0",
		users: 5, activeMonth: 0, activeHalfyear: 2, localPosts: 1018, open: "false",
		name: "Blender Video", description: "Blender Foundation PeerTube instance."},
	"pixelfed-0.12.json": {software: "pixelfed", version: "0.12.3", docVersion: "2.0",
		users: 116961, activeMonth: 9489, activeHalfyear: 23421, localPosts: 28370424, open: "true", name: "pixelfed"},
	"pixelfed-pixelfed.social.json": {software: "pixelfed", version: "0.12.0", docVersion: "2.0",
		users: 112832, activeMonth: 8921, activeHalfyear: 24366, localPosts: 24059868, open: "true", name: "pixelfed"},
	// Counts as strings ("total": "16", "localPosts": "60") beside numbers.
	"pixelfed-string-counts.json": {software: "pixelfed", version: "0.11.2", docVersion: "2.0",
		users: 16, activeMonth: 2, activeHalfyear: 16, localPosts: 60, open: "true", name: "Pixelfed"},
	// localPosts is an object ({"all":3,"direct":1}): unknown, and said so.
	"pleroma-localposts-object.json": {software: "pleroma", version: "0.7.4.0-pd0313756", docVersion: "2.1",
		users: 348, activeMonth: -1, activeHalfyear: -1, localPosts: -1, open: "true", unusable: []string{"usage.localPosts"}},
	// Pleroma's documentation: the 2.0 and 2.1 documents of one server.
	// No nodeName in its metadata.
	"pleroma-2.5.51-shitposterclub.json": {software: "pleroma", version: "2.5.51-9314-g9528fc46-shitposterclub", docVersion: "2.0",
		users: 3382, activeMonth: 326, activeHalfyear: 526, localPosts: 2556018, open: "false"},
	"pleroma-2.4.1-docs-2.0.json": {software: "pleroma", version: "2.4.1", docVersion: "2.0",
		users: 235, activeMonth: 70, activeHalfyear: 129, localPosts: 27, open: "true",
		name: "Example", description: "Pleroma: An efficient and flexible fediverse server"},
	"pleroma-2.4.1-docs-2.1.json": {software: "pleroma", version: "2.4.1", docVersion: "2.1",
		users: 235, activeMonth: 70, activeHalfyear: 129, localPosts: 27, open: "true",
		name: "Example", description: "Pleroma: An efficient and flexible fediverse server"},
	"pleroma-stereophonic.json": {software: "pleroma", version: "2.6.3", docVersion: "2.0",
		users: 953, activeMonth: 50, activeHalfyear: 96, localPosts: 434214, open: "false", name: "Stereophonic"},
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
	// Active-user counts are null: not said.
	"sharkey-2024.2.0-beta.12.json": {software: "sharkey", version: "2024.2.0-beta.12", docVersion: "2.1",
		users: 1912, activeMonth: -1, activeHalfyear: -1, localPosts: 209466, open: "true", name: "Blåhaj Zone"},
	// A bridge that answers its well-known path with the document itself.
	"skybridge.fly.dev.json": {software: "mastodon", version: "4.1.2", docVersion: "2.0",
		users: 3398, activeMonth: 3398, activeHalfyear: 3398, localPosts: 12074608, open: "false"},
	// The description in \u escapes (Cyrillic), decoded.
	"smithereen-0.8.1-dev.json": {software: "smithereen", version: "0.8.1-dev.8.dirty+dd0249ed", docVersion: "2.1",
		users: 253, activeMonth: 33, activeHalfyear: 56, localPosts: 1790, open: "false", name: "Gregory's Server"},
	// version comes last, after everything else.
	"vernissage-1.0-docs.json": {software: "vernissage", version: "1.0", docVersion: "2.0",
		users: 2, activeMonth: 2, activeHalfyear: 2, localPosts: 0, open: "true", name: "localhost"},
	// No localPosts; metadata names the Mastodon version it mimics.
	"wildebeest-0.0.1.json": {software: "wildebeest", version: "0.0.1", docVersion: "2.1",
		users: 1, activeMonth: 1, activeHalfyear: 1, localPosts: -1, open: "false"},
	// No activeMonth; the software's links sit in metadata.
	"writefreely-theo-andreou.org.json": {software: "writefreely", version: "0.12.0", docVersion: "2.0",
		users: 1, activeMonth: -1, activeHalfyear: 1, localPosts: 3, open: "false",
		name: "Mouflons and Penguins", description: "A Weblog about Cyprus, Free Software and the space between (by Theodotos Andreou)"},
	// The WordPress ActivityPub plugin's document: no metadata.
	"wordpress-6.4.2.json": {software: "wordpress", version: "6.4.2", docVersion: "2.0",
		users: 1, activeMonth: 1, activeHalfyear: 1, localPosts: 3, open: "false"},
}

// corpusWellKnown is every discovery document of the corpus and the links
// it yields, best first; nil for a document that yields none (refused: the
// host has no NodeInfo to read).
var corpusWellKnown = map[string][]parse.Link{
	// An href of host:port/path without a scheme: kept as given here; the
	// check cannot resolve it as a URL and fetches nothing.
	"actiserve-127.0.0.1-4242.json": {{"2.0", "127.0.0.1:4242/nodeinfo/2.0"}},
	"asonix.dog.json":               {{"2.0", "https://asonix.dog/nodeinfo/2.0"}},
	"banana.dog.json":               {{"2.1", "https://banana.dog/nodeinfo/2.1"}, {"2.0", "https://banana.dog/nodeinfo/2.0"}},
	// The same server in 2019, indented, 2.0 first.
	"banana.dog-2019.json": {{"2.1", "https://banana.dog/nodeinfo/2.1"}, {"2.0", "https://banana.dog/nodeinfo/2.0"}},
	// Nextcloud Social serves its documents under the app's path.
	"cloud.example.net-nextcloud-social.json": {{"2.0", "https://cloud.example.net/index.php/apps/social/.well-known/nodeinfo/2.0"}},
	"event-federation.eu.json":                {{"2.0", "https://event-federation.eu/wp-json/activitypub/1.0/nodeinfo"}},
	// A second link names the application actor (FEP-2677), not a NodeInfo schema.
	"event-federation.eu-application-actor.json": {{"2.0", "https://event-federation.eu/wp-json/activitypub/1.0/nodeinfo"}},
	"functional.cafe.json":                       {{"2.0", "https://functional.cafe/nodeinfo/2.0"}},
	// links is one object, and a second link sits beside links under
	// "0", outside the JRD: only the first is a link.
	"hubzilla-buggy-links-object.json":   {{"1.0", "https://example.com/nodeinfo/1.0"}},
	"hubzilla-buggy-single-link.json":    {{"1.0", "https://example.com/nodeinfo/1.0"}},
	"lemmy.ml-links-object.json":         {{"2.0", "https://lemmy.ml/nodeinfo/2.0.json"}},
	"lemmy.ml-links-object-compact.json": {{"2.0", "https://lemmy.ml/nodeinfo/2.0.json"}},
	// A link with a type beside rel and href.
	"hollo.social.json":                  {{"2.1", "https://hollo.social/nodeinfo/2.1"}},
	"localhost-3000-mastodon-4.6.4.json": {{"2.0", "http://localhost:3000/nodeinfo/2.0"}},
	// The test server's LOCAL_DOMAIN, without the port it was served on.
	"localhost-mastodon-3.0.1.json": {{"2.0", "http://localhost/nodeinfo/2.0"}},
	"mastodon.example.org.json":     {{"2.0", "https://mastodon.example.org/nodeinfo/2.0"}},
	// links is one object, not an array.
	"micro.blog-links-object.json": {{"2.0", "https://micro.blog/mastodon/nodeinfo/2.0"}},
	"masto.asonix.dog.json":        {{"2.0", "https://masto.asonix.dog/nodeinfo/2.0"}},
	// The documents live under /.well-known/nodeinfo/ itself.
	"mobilizon.fr.json":          {{"2.1", "https://mobilizon.fr/.well-known/nodeinfo/2.1"}, {"2.0", "https://mobilizon.fr/.well-known/nodeinfo/2.0"}},
	"mobilizon.fr-1.1-only.json": {{"1.1", "https://mobilizon.fr/.well-known/nodeinfo/1.1"}},
	"pc.cafe.json":               {{"2.0", "https://pc.cafe/nodeinfo/2.0"}},
	// href before rel, and the 2.0 link first.
	"pleroma-docs-example.com.json":  {{"2.1", "https://example.com/nodeinfo/2.1.json"}, {"2.0", "https://example.com/nodeinfo/2.0.json"}},
	"relay.asonix.dog.json":          {{"2.0", "https://relay.asonix.dog/nodeinfo/2.0.json"}},
	"social.artificial-owl.com.json": {{"2.0", "https://social.artificial-owl.com/index.php/apps/social/.well-known/nodeinfo/2.0"}},
	// A live server whose framework had no NodeInfo to link to.
	"omicron-empty-links.json": nil,
	// href before rel in each link.
	"soc.hyena.network.json":           {{"2.1", "https://soc.hyena.network/nodeinfo/2.1.json"}, {"2.0", "https://soc.hyena.network/nodeinfo/2.0.json"}},
	"vernissage-docs-example.com.json": {{"2.0", "https://example.com/nodeinfo/2.0"}},
	"wildebeest.example.org.json":      {{"2.1", "https://wildebeest.example.org/nodeinfo/2.1"}, {"2.0", "https://wildebeest.example.org/nodeinfo/2.0"}},
	// Static files personal sites serve at /.well-known/nodeinfo, most of
	// them pointing to the server their owner uses on another host: the
	// links are read here, and the check refuses to follow one to another
	// host.
	"anderegg.ca-to-mastodon.social.json":            {{"2.0", "https://mastodon.social/nodeinfo/2.0"}},
	"aubrielee.com-to-verse.json":                    {{"2.0", "https://verse.aubrielee.com/nodeinfo/2.0"}},
	"chaluha.cz-to-witter.cz.json":                   {{"2.0", "https://witter.cz/nodeinfo/2.0"}},
	"clocky-well-known-to-mastodon.design.json":      {{"2.0", "https://mastodon.design/nodeinfo/2.0"}},
	"iain.ca-to-xoxo.zone.json":                      {{"2.0", "https://xoxo.zone/nodeinfo/2.0"}},
	"inventivetalent.org-to-tech.lgbt.json":          {{"2.0", "https://tech.lgbt/nodeinfo/2.0"}},
	"linhpham.org-to-linh.social.json":               {{"2.0", "https://linh.social/nodeinfo/2.0"}},
	"social.thej.in-to-social.lol.json":              {{"2.0", "https://social.lol/nodeinfo/2.0"}},
	"aaronsaray.com-to-phpc.social.json":             {{"2.0", "https://phpc.social/nodeinfo/2.0"}},
	"bueti-webpage-to-hachyderm.io.json":             {{"2.0", "https://hachyderm.io/nodeinfo/2.0"}},
	"dbatools.io-to-tech.lgbt.json":                  {{"2.0", "https://tech.lgbt/nodeinfo/2.0"}},
	"duan.ca-to-mastodon.duan.ca.json":               {{"2.0", "https://mastodon.duan.ca/nodeinfo/2.0"}},
	"danp-to-mastodon.danp.net.json":                 {{"2.0", "https://mastodon.danp.net/nodeinfo/2.0"}},
	"nikoheikkila.fi-to-fosstodon.org.json":          {{"2.0", "https://fosstodon.org/nodeinfo/2.0"}},
	"willnorris.com-to-mastodon.willnorris.net.json": {{"2.0", "https://mastodon.willnorris.net/nodeinfo/2.0"}},
	// Indented with tabs.
	"mcaskill.ca-tab-indented.json": {{"2.0", "https://mastodon.social/nodeinfo/2.0"}},
	// Pointing to a Hatsu bridge and to a Misskey server: 2.1 first,
	// unindented.
	"grassblock1-lab-to-hatsu.json":        {{"2.1", "https://hatsu-nightly-debug.hyp3r.link/nodeinfo/2.1.json"}, {"2.0", "https://hatsu-nightly-debug.hyp3r.link/nodeinfo/2.0.json"}},
	"i14a-legacy-to-misskey.i14a.dev.json": {{"2.1", "https://misskey.i14a.dev/nodeinfo/2.1"}, {"2.0", "https://misskey.i14a.dev/nodeinfo/2.0"}},
	// Pointing to a GoToSocial server, 2.0 first: 2.1 is preferred.
	"eallion.com-to-gotosocial.json": {{"2.1", "https://gts.eallion.com/nodeinfo/2.1"}, {"2.0", "https://gts.eallion.com/nodeinfo/2.0"}},
	// Sites that serve a document of their own, at a path of their own.
	"nyac.at.json":         {{"2.0", "https://nyac.at/activity-pub/nodeinfo20.json"}},
	"blog.exerra.xyz.json": {{"2.0", "https://blog.exerra.xyz/nodeinfo/2.0"}},
	// href before rel, no final newline.
	"theclashfruit.me-href-before-rel.json": {{"2.1", "https://theclashfruit.me/api/nodeinfo"}},
	// An IDN host in its A-label form, kept as written.
	"qwell.github.io-to-punycode-host.json": {{"2.0", "https://xn--8r9a.com/nodeinfo/2.0"}},
	// The 2.0 link first, hrefs ending in .json.
	"mirror-kt.dev-to-pleroma.json": {{"2.1", "https://pleroma.mirror-kt.dev/nodeinfo/2.1.json"}, {"2.0", "https://pleroma.mirror-kt.dev/nodeinfo/2.0.json"}},
	// Every slash escaped (\/), as PHP writes JSON, and an http href.
	"vrkknn.net-to-kbin-escaped-slashes.json": {{"2.0", "http://kbin.vrkknn.net/nodeinfo/2.0"}},
	// A blank line before the object.
	"g396.github.io-leading-newline.json": {{"2.1", "https://g396.github.io/nodeinfo/2.1"}},
	"thematters.github.io.json":           {{"2.1", "https://thematters.github.io/nodeinfo/2.1"}},
	// What real hosts serve there that is no discovery document: an XRD,
	// JSON broken by a key written twice ("href": "href": ...), and
	// NodeInfo documents themselves in place of the links. None yields a
	// link.
	"dannypage.github.io-xrd-xml.json":                        nil,
	"gambogi.com-href-twice-invalid-json.json":                nil,
	"naturesinfusions.com.au-nodeinfo-in-place-of-links.json": nil,
	"skybridge.fly.dev-nodeinfo-in-place-of-links.json":       nil,
}

// wantPeers is what the crawler's reader for a peers list passes on from a
// captured one: each entry in order ("" for an entry without a host), or
// the refusal of the whole list.
type wantPeers struct {
	parser string // see readPeers
	hosts  []string
	err    bool
}

// corpusPeers is every peers-list response of the corpus, read as the
// crawler reads the family of the software that sent it.
var corpusPeers = map[string]wantPeers{
	"mastodon-localhost.json": {parser: "mastodon", hosts: []string{"chitter.xyz"}},
	"gotosocial-testrig.json": {parser: "mastodon", hosts: []string{"example.org", "fossbros-anonymous.io"}},
	// Asked with ?filter=suspended,open, GoToSocial lists objects, blocked
	// domains among them; the crawler never asks so, and a list of objects
	// where strings belong is refused whole.
	"gotosocial-testrig-filter-suspended-open.json": {parser: "mastodon", err: true},
}

// readPeers reads body with the parser the crawler uses for a family.
func readPeers(t *testing.T, parser string, body []byte) ([]string, error) {
	var hosts []string
	add := func(h []byte) { hosts = append(hosts, string(h)) }
	r := bytes.NewReader(body)
	var err error
	switch parser {
	case "mastodon":
		err = parse.StringArray(r, func(h []byte, _ uint8) { add(h) })
	default:
		t.Fatalf("no parser %q", parser)
	}
	return hosts, err
}

func TestCorpusPeers(t *testing.T) {
	eachCorpusFile(t, "peers", corpusPeers, func(t *testing.T, body []byte, w wantPeers) {
		hosts, err := readPeers(t, w.parser, body)
		if (err != nil) != w.err || !w.err && !slices.Equal(hosts, w.hosts) {
			t.Errorf("%q, %v; want %q (refused: %v)", hosts, err, w.hosts, w.err)
		}
	})
}

func TestCorpusNodeInfo(t *testing.T) {
	eachCorpusFile(t, "nodeinfo", corpusNodeInfo, func(t *testing.T, body []byte, w want) {
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

func TestCorpusWellKnown(t *testing.T) {
	eachCorpusFile(t, "wellknown", corpusWellKnown, func(t *testing.T, body []byte, w []parse.Link) {
		ls, err := parse.ParseWellKnown(body)
		if (err != nil) != (w == nil) || !slices.Equal(ls, w) {
			t.Errorf("%+v, %v; want %+v", ls, err, w)
		}
	})
}

// eachCorpusFile runs check on every file of one kind of the corpus with
// its expectation, as a subtest named after the file; a file without an
// expectation, or an expectation without a file, fails.
func eachCorpusFile[W any](t *testing.T, kind string, wants map[string]W, check func(t *testing.T, body []byte, w W)) {
	files := corpusFiles(t, kind)
	for _, f := range files {
		w, ok := wants[f]
		if !ok {
			t.Errorf("%s/%s has no expectation", kind, f)
			continue
		}
		t.Run(f, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(corpusDir, kind, f))
			if err != nil {
				t.Fatal(err)
			}
			check(t, body, w)
		})
	}
	for f := range wants {
		if !slices.Contains(files, f) {
			t.Errorf("expectation for %s/%s, which is not in the corpus", kind, f)
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
	for _, kind := range []string{"nodeinfo", "wellknown", "peers"} {
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
