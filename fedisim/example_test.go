package fedisim_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fediverse-observer/observer/fedisim"
)

// A test starts a simulator, hands the crawler its CA and --connect-to
// value, crawls from the seeds, advances the day and crawls again.
func Example() {
	sim, err := fedisim.New(fedisim.Config{Seed: 1, Instances: 2000, HostileHosts: true})
	if err != nil {
		panic(err)
	}
	if err := sim.Start("127.0.0.1:0"); err != nil {
		panic(err)
	}
	defer sim.Close()
	dir, _ := os.MkdirTemp("", "fedisim")
	defer os.RemoveAll(dir)
	if err := sim.WriteCA(filepath.Join(dir, "ca.pem")); err != nil {
		panic(err)
	}
	_ = sim.ConnectTo() // "*:443:127.0.0.1:PORT" for --connect-to
	seeds := sim.Seeds(3)
	fmt.Println(len(seeds), sim.StateOn(seeds[0], 0).State)

	sim.SetDay(7) // the next pass sees a week later
	fmt.Println(sim.Hostile()["hostile-gzip-bomb.social"] != "")
	// Output:
	// 3 alive
	// true
}
