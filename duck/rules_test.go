package duck_test

import (
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// rules maps a configuration's [state] table to duck's Rules, as
// cmd/observer does, so the tests run with the shipped defaults; the zero
// State stands for those defaults.
func rules(st config.State) duck.Rules {
	if st == (config.State{}) {
		st = config.Default().State
	}
	return duck.Rules{
		FailuresToDead: st.FailuresToDead, DeadAfter: st.DeadAfter.D(), ReviveAfter: st.ReviveAfter.D(),
		LiveWindow: st.LiveWindow.D(), NewWindow: st.NewWindow.D(), Warmup: st.Warmup.D(),
		ActiveInterval: st.ActiveInterval.D(), ActiveJitter: st.ActiveJitter.D(),
		InactiveInterval: st.InactiveInterval.D(), InactiveJitter: st.InactiveJitter.D(),
		BackoffMax: st.BackoffMax.D(), DiscoveryDelay: st.DiscoveryDelay.D(),
	}
}

// defaultRules are the shipped defaults.
var defaultRules = rules(config.State{})
