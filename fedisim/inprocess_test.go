package fedisim_test

import (
	"context"
	"crypto/x509"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/fedisim"
	"github.com/fediverse-observer/observer/internal/testsupport"
)

// The crawler answered in-process (testsupport.ModelChecker over
// Sim.Transport) reads what it reads from the served spread world over the
// network: for a sample of hosts (hubs, instances of every family, the
// dead, the unborn, names that never were servers) at several times, the
// same outcome, NodeInfo, peers list (its entries as parsed and
// normalised, the new ones among them), validators, bytes and peers bytes
// served; and, asked again with the validators, the same 304s.
func TestTransportAgreesWithServedWorld(t *testing.T) {
	const n = 3000
	sim := testsupport.StartSim(t, fedisim.Config{Seed: 26, Instances: n, Spread: &fedisim.Spread{}})
	rule, err := crawl.ParseConnectTo(sim.ConnectTo())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(sim.CAPEM())
	netOpts := crawl.Options{ConnectTo: []crawl.ConnectTo{rule}, AllowAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, RootCAs: roots}
	wire, err := crawl.New(netOpts)
	if err != nil {
		t.Fatal(err)
	}
	model, err := testsupport.ModelChecker(sim, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Known: the hubs and every tenth instance, so a list has new
	// entries and known ones.
	known := crawl.NewKnownSet(n)
	for i := 0; i < n; i += 10 {
		known.Add(observer.Host(sim.Host(i)))
	}
	day0 := sim.Config().Day0
	times := []time.Time{day0.Add(-200 * 24 * time.Hour), day0.Add(3*time.Hour + 17*time.Minute), day0.Add(20*24*time.Hour + 9*time.Hour), day0.Add(75 * 24 * time.Hour)}
	var alive, dead, lists, notModified, discoveries int
	families := map[string]bool{}
	ctx := context.Background()
	// The simulator's clock is elsewhere while the in-process checks
	// run: they answer for their own CheckedAt.
	elsewhere := day0.Add(37 * 24 * time.Hour)
	for _, at := range times {
		for i := 0; i < n; i += 23 {
			host := observer.Host(sim.Host(i))
			opts := crawl.CheckOptions{Known: known, FetchPeers: true, CheckedAt: at, PassID: "p"}
			before := sim.Stats().PeersBytes
			sim.SetNow(at)
			want, _ := wire.Check(ctx, host, opts)
			served := sim.Stats().PeersBytes - before
			sim.SetNow(elsewhere)
			got, _ := model.Check(ctx, host, opts)
			if modelled := sim.Stats().PeersBytes - before - served; modelled != served {
				t.Errorf("%s at %s: %d peers bytes served in-process, %d over the network", host, at, modelled, served)
			}
			sameCheck(t, host, at, got, want)
			switch want.Check.Outcome {
			case observer.OutcomeAlive:
				alive++
				families[want.Check.Software] = true
			case observer.OutcomeUnreachable:
				dead++
			}
			if want.Check.PeersFetched {
				lists++
			}
			discoveries += len(want.Discoveries)
			if want.Check.PeersValidators == (observer.PeersValidators{}) {
				continue
			}
			opts.PeersValidators = want.Check.PeersValidators
			sim.SetNow(at)
			want, _ = wire.Check(ctx, host, opts)
			sim.SetNow(elsewhere)
			got, _ = model.Check(ctx, host, opts)
			sameCheck(t, host, at, got, want)
			if want.Check.PeersNotModified {
				notModified++
			}
		}
	}
	// The sample must have covered what it claims to.
	if alive < 100 || dead < 50 || lists < 50 || notModified < 10 || discoveries < 100 || len(families) < 8 {
		t.Errorf("sample too thin: %d alive, %d dead, %d lists read, %d not modified, %d discoveries, %d software names",
			alive, dead, lists, notModified, discoveries, len(families))
	}
}

func sameCheck(t *testing.T, host observer.Host, at time.Time, got, want observer.Result) {
	t.Helper()
	g, w := got.Check, want.Check
	// What only the network has: time spent and bytes off the wire.
	g.DurationMS, w.DurationMS, g.WireBytes, w.WireBytes = 0, 0, 0, 0
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s at %s: in-process check\n%+v\nover the network\n%+v", host, at.Format(time.RFC3339), g, w)
	}
	if got.Bytes != want.Bytes {
		t.Errorf("%s at %s: %d bytes read in-process, %d over the network", host, at.Format(time.RFC3339), got.Bytes, want.Bytes)
	}
	hosts := func(r observer.Result) []observer.Host {
		var hs []observer.Host
		for _, d := range r.Discoveries {
			hs = append(hs, d.Host)
		}
		return hs
	}
	if !slices.Equal(hosts(got), hosts(want)) {
		t.Errorf("%s at %s: discovered in-process %v, over the network %v", host, at.Format(time.RFC3339), hosts(got), hosts(want))
	}
}
