package sandbox

import (
	"errors"
	"runtime"
	"sync"
)

// spawner starts a pool's checkers from one OS thread of its own, which
// (with PoolOptions.DropCapabilities) holds an empty bounding set and no
// inheritable or ambient capability: a checker inherits its starting
// thread's, so one started by root execs holding no capability at all,
// and its own dropping (Confine) finds nothing to do. Dropping them there,
// with Go's threads running, takes a broadcast to every thread per
// capability, which cost a checker's start more than anything else on a
// loaded machine. The thread stays locked until the pool closes, and then
// ends, never to run other goroutines with its lessened capabilities.
type spawner struct {
	mu     sync.Mutex
	closed bool
	reqs   chan func()
	done   chan struct{}
}

func newSpawner(dropCaps bool) *spawner {
	s := &spawner{reqs: make(chan func()), done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		// Never unlocked: the goroutine's end ends the thread.
		runtime.LockOSThread()
		if dropCaps {
			dropThreadCapabilities()
		}
		close(ready)
		for f := range s.reqs {
			f()
		}
		close(s.done)
	}()
	<-ready
	return s
}

// run runs start on the spawner's thread and returns its error.
func (s *spawner) run(start func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("pool closed")
	}
	errc := make(chan error, 1)
	s.reqs <- func() { errc <- start() }
	return <-errc
}

// close ends the spawner's thread once the start under way, if any, is
// done. Its checkers get SIGKILL as the thread ends (Pdeathsig), so call it
// after they have been killed.
func (s *spawner) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.reqs)
		<-s.done
	}
}
