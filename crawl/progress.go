package crawl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fediverse-observer/observer"
)

// Progress counts what a pass records on its way to the real sink and
// reports it (Report): a line rewritten in place on a terminal, a
// structured log line every few seconds otherwise.
type Progress struct {
	next   Sink
	due    int64         // the due list's hosts; admitted discoveries add to it
	budget time.Duration // the pass's time budget; 0: none
	start  time.Time     // wall clock, for the rate

	mu         sync.Mutex
	tally      observer.Tally
	discovered int64 // hosts discovered in the pass and admitted to it
}

// NewProgress counts toward due hosts within budget (0: none) what passes
// on to next.
func NewProgress(next Sink, due int, budget time.Duration) *Progress {
	return &Progress{next: next, due: int64(due), budget: budget, start: time.Now()}
}

// Admitting wraps the pass's admission of the hosts it discovers, so that
// the hosts to check count those it admits: a first pass from a seed list
// is mostly them, and done would otherwise run past due.
func (p *Progress) Admitting(admit func(hosts []observer.Host) []observer.Host) func(hosts []observer.Host) []observer.Host {
	return func(hosts []observer.Host) []observer.Host {
		admitted := admit(hosts)
		p.mu.Lock()
		p.discovered += int64(len(admitted))
		p.mu.Unlock()
		return admitted
	}
}

// Record counts r and passes it on (Sink).
func (p *Progress) Record(ctx context.Context, r observer.Result) error {
	p.mu.Lock()
	p.tally.Add(r)
	p.mu.Unlock()
	return p.next.Record(ctx, r)
}

// progressSnapshot is what one report shows.
type progressSnapshot struct {
	Done, Due  int64 // Due counts the admitted discoveries, Discovered
	Discovered int64
	Elapsed    time.Duration
	Budget     time.Duration
	ByOutcome  map[observer.Outcome]int64
}

func (p *Progress) snapshot() progressSnapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tally.Clone()
	return progressSnapshot{Done: t.Checks, Due: p.due + p.discovered, Discovered: p.discovered, Elapsed: time.Since(p.start), Budget: p.budget, ByOutcome: t.ByOutcome}
}

// rate is checks per second so far.
func (s progressSnapshot) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Done) / s.Elapsed.Seconds()
}

// left estimates the time to finish the due list at the current rate,
// bounded by what is left of the budget; negative when unknown.
func (s progressSnapshot) left() time.Duration {
	left := time.Duration(-1)
	if r := s.rate(); r > 0 {
		left = time.Duration(float64(s.Due-s.Done) / r * float64(time.Second))
	}
	if s.Budget > 0 {
		if rest := max(s.Budget-s.Elapsed, 0); left < 0 || rest < left {
			left = rest
		}
	}
	return left
}

// line is the terminal form: checks done of due, rate, outcomes, time left.
func (s progressSnapshot) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d checks", s.Done, s.Due)
	if s.Discovered > 0 {
		fmt.Fprintf(&b, " (%d discovered in this pass)", s.Discovered)
	}
	fmt.Fprintf(&b, ", %.1f/s", s.rate())
	for _, o := range observer.Outcomes() {
		if n := s.ByOutcome[o]; n > 0 {
			fmt.Fprintf(&b, ", %s %d", o, n)
		}
	}
	if l := s.left(); l >= 0 {
		fmt.Fprintf(&b, ", %s left", l.Round(time.Second))
	}
	return b.String()
}

func (s progressSnapshot) attrs() []any {
	attrs := []any{"done", s.Done, "due", s.Due, "discovered", s.Discovered, "rate", fmt.Sprintf("%.1f", s.rate())}
	for _, o := range observer.Outcomes() {
		if n := s.ByOutcome[o]; n > 0 {
			attrs = append(attrs, string(o), n)
		}
	}
	if l := s.left(); l >= 0 {
		attrs = append(attrs, "left", l.Round(time.Second).String())
	}
	return attrs
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// Report shows progress on w (a terminal) or log until ctx ends. quiet
// silences it.
func (p *Progress) Report(ctx context.Context, w io.Writer, log *slog.Logger, quiet bool) {
	if quiet {
		return
	}
	tty := isTerminal(w)
	every := 5 * time.Second
	if tty {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if tty {
				fmt.Fprint(w, "\r\033[K")
			}
			return
		case <-t.C:
			s := p.snapshot()
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", s.line())
			} else {
				log.Info("crawl progress", s.attrs()...)
			}
		}
	}
}
