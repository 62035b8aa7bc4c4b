package duck_test

import (
	"github.com/fediverse-observer/observer/config"
	"github.com/fediverse-observer/observer/duck"
)

// rules are duck's Rules from a configuration's [state] table, mapped as
// the commands map it (config.Config.Rules), so the tests run with the
// shipped defaults; the zero State stands for those defaults.
func rules(st config.State) duck.Rules {
	cfg := config.Default()
	if st != (config.State{}) {
		cfg.State = st
	}
	return cfg.Rules()
}

// defaultRules are the shipped defaults.
var defaultRules = rules(config.State{})
