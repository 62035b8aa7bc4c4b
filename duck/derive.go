package duck

// derivedViews lists the views over the derived state (state, transitions,
// live, new, stats). Placeholder until the derivations land.
func (s *Store) derivedViews(p ViewParams) ([]view, error) { return nil, nil }
