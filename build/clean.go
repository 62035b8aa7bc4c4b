package build

import (
	"context"
	"iter"

	"github.com/fediverse-observer/observer"
)

// maxStateRunes bounds a state name; the real ones are short words.
const maxStateRunes = 32

// cleanData is the data source as the builder sees it: every text that came
// from an instance is cleaned once, here, where it comes in, by the same
// rule and caps the crawler applies (observer.CleanText), and an instance
// or transition whose host is not a host name is left out. The crawler
// stores only clean texts, so for its data this changes nothing; a
// hand-edited or foreign snapshot can hold anything, and without this its
// controls, bidi overrides, invalid UTF-8 and megabyte texts would reach
// every page, feed and list. Query results are the templates' own business
// and pass through as they are.
type cleanData struct{ Data }

func (d cleanData) NewInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return cleanInstances(d.Data.NewInstances(ctx))
}

func (d cleanData) LiveInstances(ctx context.Context) iter.Seq2[observer.Instance, error] {
	return cleanInstances(d.Data.LiveInstances(ctx))
}

func (d cleanData) Stats(ctx context.Context) (observer.Stats, error) {
	st, err := d.Data.Stats(ctx)
	if err != nil {
		return st, err
	}
	// A copy: the source may hand out a slice it keeps.
	by := make([]observer.SoftwareCount, len(st.BySoftware))
	for i, s := range st.BySoftware {
		s.Software = observer.CleanText(s.Software, observer.MaxSoftwareRunes)
		by[i] = s
	}
	st.BySoftware = by
	return st, nil
}

func (d cleanData) RecentTransitions(ctx context.Context, limit int) ([]observer.Transition, error) {
	ts, err := d.Data.RecentTransitions(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]observer.Transition, 0, len(ts))
	for _, t := range ts {
		if !hostShaped(t.Host) {
			continue
		}
		if !hostShaped(t.MovedTo) {
			t.MovedTo = ""
		}
		t.From, t.To = cleanState(t.From), cleanState(t.To)
		out = append(out, t)
	}
	return out, nil
}

// cleanInstances cleans each instance of a list and leaves out those whose
// host is not a host name. Skipping keeps the list's order.
func cleanInstances(seq iter.Seq2[observer.Instance, error]) iter.Seq2[observer.Instance, error] {
	return func(yield func(observer.Instance, error) bool) {
		for inst, err := range seq {
			if err != nil {
				if !yield(inst, err) {
					return
				}
				continue
			}
			if !hostShaped(inst.Host) {
				continue
			}
			if !yield(cleanInstance(inst), nil) {
				return
			}
		}
	}
}

func cleanInstance(inst observer.Instance) observer.Instance {
	inst.State = cleanState(inst.State)
	inst.Software = observer.CleanText(inst.Software, observer.MaxSoftwareRunes)
	inst.Version = observer.CleanText(inst.Version, observer.MaxVersionRunes)
	inst.Name = observer.CleanText(inst.Name, observer.MaxNameRunes)
	inst.Description = observer.CleanText(inst.Description, observer.MaxDescriptionRunes)
	return inst
}

func cleanState(s observer.State) observer.State {
	return observer.State(observer.CleanText(string(s), maxStateRunes))
}

// hostShaped reports whether h looks like a stored host name: lower-case
// ASCII letters, digits and hyphens in dot-separated labels of 1 to 63
// bytes, at most 253 bytes in all (hostname.Normalize's output; IDNs are in
// their xn-- form). It checks the shape only, not the Public Suffix List,
// which changes: a host stored under an older list stays listed.
func hostShaped(h string) bool {
	if h == "" || len(h) > observer.MaxHostBytes {
		return false
	}
	label := 0
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
			continue
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		default:
			return false
		}
		if label++; label > 63 {
			return false
		}
	}
	return label > 0
}
