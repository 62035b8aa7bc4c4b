package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
)

// proc is one checker process.
type proc struct {
	pool   *Pool
	cmd    *exec.Cmd
	pid    int
	in     *os.File
	frames chan frameMsg // the hello (handshake)
	done   chan struct{} // closed when the proc is being discarded
	zombie chan struct{} // closed when the process has exited (not yet reaped)
	broken chan struct{} // closed when its output failed or broke the protocol (brokenErr)
	report Report
	cgroup string

	// Under pool.mu: whether it takes checks (after its hello, and not
	// while it runs a check alone), how many are under way on it and how
	// many it began, and whether it takes no more (retiring). unread is
	// its checks' time since its CPU time was last read (Pool.put), counted
	// up to counted; runq the seconds it had waited for a CPU by then (or
	// its start). killedAmong is how many checks were under way when it
	// was killed.
	ready, retiring bool
	inflight, begun int
	unread          time.Duration
	counted         time.Time
	runq            float64
	killedAmong     int

	killOnce  sync.Once
	mu        sync.Mutex
	calls     map[uint64]chan frameMsg // the checks waiting for their result, by request id
	brokenErr error
	why       string // why the pool killed it, if it did
	exit      string // how it ended
	stderr    *tail
}

type frameMsg struct {
	t       byte
	payload []byte
	err     error
}

// start starts a checker (in a cgroup of its own when configured, without
// one if the kernel refuses it) and shakes hands with it (handshake). If ctx
// is done first, it kills the checker and returns an error wrapping
// ctx.Err().
func (p *Pool) start(ctx context.Context) (*proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start interrupted: %w", err)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("pool closed")
	}
	p.mu.Unlock()

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	var rootsR, rootsW *os.File
	if p.roots != nil {
		if rootsR, rootsW, err = os.Pipe(); err != nil {
			for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
				f.Close()
			}
			return nil, err
		}
	}
	cmd := p.checkerCmd(inR, outW, errW, rootsR)
	pr := &proc{
		pool:   p,
		cmd:    cmd,
		in:     inW,
		frames: make(chan frameMsg),
		done:   make(chan struct{}),
		zombie: make(chan struct{}),
		broken: make(chan struct{}),
		calls:  map[uint64]chan frameMsg{},
		stderr: newTail(),
	}
	var cgFD *os.File
	if p.useCgroup() {
		dir, fd, err := p.makeCgroup()
		if err != nil {
			p.noCgroup(err)
		} else {
			pr.cgroup, cgFD = dir, fd
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(fd.Fd())
		}
	}
	err = p.spawn.run(cmd.Start)
	if err != nil && cgFD != nil {
		// The kernel may refuse CLONE_INTO_CGROUP (too old, or the
		// directory is no cgroup): start without it from now on.
		p.noCgroup(err)
		pr.removeCgroup()
		pr.cgroup = ""
		cgFD.Close()
		cgFD = nil
		cmd = p.checkerCmd(inR, outW, errW, rootsR)
		pr.cmd = cmd
		err = p.spawn.run(cmd.Start)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	if rootsR != nil {
		rootsR.Close()
	}
	if cgFD != nil {
		cgFD.Close()
	}
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		if rootsW != nil {
			rootsW.Close()
		}
		pr.removeCgroup()
		return nil, err
	}
	pr.pid = cmd.Process.Pid
	p.mu.Lock()
	p.procs[pr] = struct{}{}
	p.mu.Unlock()

	go pr.waitExit()
	if rootsW != nil {
		go p.roots.send(rootsW, pr.done)
	}
	go pr.readStderr(errR)
	go pr.readFrames(outR)
	go pr.watchMemory()

	if err := pr.handshake(ctx, inW); err != nil {
		return nil, err
	}
	runq := pr.runqSeconds()
	p.mu.Lock()
	pr.runq = runq
	p.mu.Unlock()
	return pr, nil
}

// checkerCmd is the command of a checker on the given pipe ends (roots nil
// when the pool has no root certificates to give).
func (p *Pool) checkerCmd(stdin, stdout, stderr, roots *os.File) *exec.Cmd {
	cmd := exec.Command(p.opts.Path, p.opts.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = childEnv(p.opts.Env)
	cmd.ExtraFiles = p.checkerFiles(roots)
	cmd.SysProcAttr = checkerAttr()
	return cmd
}

// handshake sends a started checker the known table's frame (on in) once
// the table is written, and waits for its hello, for StartTimeout at most;
// on any failure, or when ctx is done first, it kills the checker.
func (pr *proc) handshake(ctx context.Context, in *os.File) error {
	p := pr.pool
	known := p.opts.Known
	select {
	case <-known.written:
	case <-pr.done: // the pool closed
		return errors.New("pool closed")
	case <-ctx.Done():
		pr.kill()
		return fmt.Errorf("start interrupted: %w", ctx.Err())
	}
	if known.err != nil {
		pr.kill()
		return known.err
	}
	knownFrame := frame(msgKnown, binary.AppendUvarint(nil, uint64(known.Len())))
	// Sent while waiting for the hello: a checker that does not read it
	// must not block the start past its timeout.
	sent := make(chan error, 1)
	go func() {
		if _, err := in.Write(knownFrame); err != nil {
			sent <- fmt.Errorf("send known table: %w", err)
			return
		}
		sent <- nil
	}()
	timer := time.NewTimer(p.opts.StartTimeout)
	defer timer.Stop()
	var err error
	select {
	case f := <-pr.frames:
		err = f.err
		if err == nil {
			if refusal := pr.checkHello(f); refusal != nil {
				// Named as the orchestrator's refusal: killing the
				// checker for it is no death of its own.
				pr.setWhy(fmt.Sprintf("hello refused: %v", refusal))
				err = refusal
			}
		} else if errors.Is(err, errFrameTooLarge) {
			pr.setWhy(fmt.Sprintf("hello refused: %v", err))
		}
		if err == nil {
			// An honest checker says hello after it read the end marker.
			select {
			case err = <-sent:
			case <-timer.C:
				err = errors.New("hello before the known table was read")
			case <-ctx.Done():
				pr.kill()
				return fmt.Errorf("start interrupted: %w", ctx.Err())
			}
		}
	case <-timer.C:
		pr.setWhy(fmt.Sprintf("no hello within %s", p.opts.StartTimeout))
		err = errors.New("start timeout")
	case <-ctx.Done():
		// Killing the checker also ends the sending of the known
		// table's frame: its write fails once the pipe is closed.
		pr.kill()
		return fmt.Errorf("start interrupted: %w", ctx.Err())
	}
	if err != nil {
		pr.kill()
		return errors.New(pr.failure(err))
	}
	return nil
}

// checkHello reads a checker's hello into pr.report, or says why the
// orchestrator refuses it.
func (pr *proc) checkHello(f frameMsg) error {
	if f.t != msgHello {
		return fmt.Errorf("first message %q, want hello", f.t)
	}
	if err := strictJSON(f.payload, &pr.report); err != nil {
		return err
	}
	return pr.report.validate()
}

// checkerAttr starts a checker as the leader of a new session, and so of a
// process group of its own that kill signals whole. Only a new session
// takes it off the orchestrator's controlling terminal, which it could
// otherwise open as /dev/tty wherever Landlock does not stop it, to read
// what the operator types or push input with TIOCSTI. It dies with the
// thread that started it, the pool's spawner, which lives until the pool
// closes or the orchestrator dies.
func checkerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// childEnv is the checker's whole environment: it gets nothing of ours it
// does not need.
func childEnv(extra []string) []string {
	var env []string
	for _, k := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// One P, though a checker runs several checks at once: they mostly
	// wait for servers, and with more Ps every goroutine woken (a response
	// read, a timer) woke an idle P's thread to look for work too, a third
	// of a checker's context switches; two Ps measured no faster on the
	// first-pass world. The heap grows to three times what is live before
	// a collection, not twice: a checker's live heap is a few megabytes
	// between checks, and collecting it half as often saved two thirds of
	// its collector's CPU (33 ms of 550 per first pass, perf at load 11);
	// the soft memory limit (Confine) still collects as often as it must
	// near the limit.
	env = append(env, "GODEBUG=netdns=go", "GOMAXPROCS=1", "GOGC=200")
	return append(env, extra...)
}

// check sends one request and waits for its result, beside the other
// checks under way on the checker.
func (pr *proc) check(ctx context.Context, id uint64, req wireRequest, deadline time.Duration) (observer.Result, crawl.Trace, error) {
	req.ID = id
	payload, err := json.Marshal(req)
	if err != nil {
		return observer.Result{}, crawl.Trace{}, err
	}
	answer := make(chan frameMsg, 1)
	pr.mu.Lock()
	pr.calls[id] = answer
	pr.mu.Unlock()
	defer func() {
		pr.mu.Lock()
		delete(pr.calls, id)
		pr.mu.Unlock()
	}()
	sent := time.Now()
	// Whole: the writes of checks under way at once do not interleave
	// (an os.File holds its write lock for a whole Write).
	if _, err := pr.in.Write(frame(msgRequest, payload)); err != nil {
		return observer.Result{}, crawl.Trace{}, fmt.Errorf("send request: %w", err)
	}
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	var f frameMsg
	select {
	case f = <-answer:
	case <-pr.broken:
		// A result read before the break is still this check's.
		select {
		case f = <-answer:
		default:
			pr.mu.Lock()
			defer pr.mu.Unlock()
			return observer.Result{}, crawl.Trace{}, pr.brokenErr
		}
	case <-timer.C:
		pr.setWhy(fmt.Sprintf("no result within %s (deadline overrun)", deadline))
		return observer.Result{}, crawl.Trace{}, errors.New("deadline")
	case <-ctx.Done():
		pr.setWhy("pass interrupted")
		return observer.Result{}, crawl.Trace{}, context.Cause(ctx)
	case <-pr.done:
		if pr.pool.isClosed() {
			pr.setWhy("pool closed")
			return observer.Result{}, crawl.Trace{}, errors.New("pool closed")
		}
		// Killed for another check under way on it: its own why.
		return observer.Result{}, crawl.Trace{}, errors.New("killed while another check failed")
	}
	w, err := decodeResult(f.payload)
	if err != nil {
		return observer.Result{}, crawl.Trace{}, fmt.Errorf("invalid result: %w", err)
	}
	r, t, err := w.validate(expect{id: id, req: req, elapsed: time.Since(sent)})
	if err != nil {
		return observer.Result{}, crawl.Trace{}, fmt.Errorf("invalid result: %w", err)
	}
	return r, t, nil
}

// readFrames reads the checker's output: its hello, for the handshake,
// then results, each handed to the check waiting for it. Anything else, a
// result no check waits for, or a failed read breaks the checker for every
// check under way (brokenErr).
func (pr *proc) readFrames(out *os.File) {
	defer out.Close()
	r := bufio.NewReaderSize(out, 64<<10)
	t, payload, err := readFrame(r, maxResultFrame)
	select {
	case pr.frames <- frameMsg{t, payload, err}:
	case <-pr.done:
		return
	}
	for err == nil {
		t, payload, err = readFrame(r, maxResultFrame)
		if err == nil && t != msgResult {
			err = fmt.Errorf("unexpected message %q", t)
		}
		if err != nil {
			break
		}
		id, n := binary.Uvarint(payload)
		pr.mu.Lock()
		answer := pr.calls[id]
		delete(pr.calls, id)
		pr.mu.Unlock()
		if n <= 0 || answer == nil {
			err = fmt.Errorf("invalid result: id %d is no request under way", id)
			break
		}
		answer <- frameMsg{t, payload, nil}
	}
	pr.mu.Lock()
	pr.brokenErr = err
	pr.mu.Unlock()
	close(pr.broken)
}

// waitExit learns when the process has exited without reaping it, so its
// pid (and process group id) stay reserved until kill has signalled the
// group.
func (pr *proc) waitExit() {
	defer close(pr.zombie)
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pr.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// kill kills the checker's process group, reaps it and releases its
// resources. It is safe to call more than once.
func (pr *proc) kill() {
	pr.killOnce.Do(func() {
		p := pr.pool
		p.mu.Lock()
		// It takes no more checks from here: those under way are all
		// it was killed among.
		pr.retiring = true
		pr.killedAmong = pr.inflight
		p.mu.Unlock()
		close(pr.done)
		// The leader is alive or an unreaped zombie here, so the group
		// id cannot have been reused.
		syscall.Kill(-pr.pid, syscall.SIGKILL)
		pr.in.Close()
		<-pr.zombie
		err := pr.cmd.Wait()
		pr.mu.Lock()
		if err != nil {
			pr.exit = err.Error()
		} else {
			pr.exit = "exited"
		}
		pr.mu.Unlock()
		pr.removeCgroup()
		p.mu.Lock()
		delete(p.procs, pr)
		p.wakeLocked(-1)
		p.mu.Unlock()
	})
}

// exited is how the checker ended, once killed.
func (pr *proc) exited() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.exit
}

func (pr *proc) setWhy(s string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.why == "" {
		pr.why = s
	}
}

// failure explains, after kill, why a check failed: the pool's reason if
// it killed the checker, else what the protocol saw and how the process
// ended, with the telling line of its stderr (a panic or fatal error).
func (pr *proc) failure(err error) string {
	select {
	case <-pr.stderr.done:
	case <-time.After(2 * time.Second): // a stray holder of the pipe must not block us
	}
	pr.mu.Lock()
	why, exit := pr.why, pr.exit
	pr.mu.Unlock()
	var b strings.Builder
	switch {
	case why != "":
		b.WriteString(why)
	case errors.Is(err, errFrameTooLarge), strings.HasPrefix(err.Error(), "invalid result"), strings.HasPrefix(err.Error(), "unexpected message"):
		fmt.Fprintf(&b, "rejected: %v", err)
	default:
		fmt.Fprintf(&b, "checker died (%s)", exit)
	}
	if line := pr.stderr.telling(); line != "" {
		fmt.Fprintf(&b, ": %s", line)
	}
	return b.String()
}

// watchMemory kills the checker when its resident memory passes the limit.
func (pr *proc) watchMemory() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	path := "/proc/" + strconv.Itoa(pr.pid) + "/statm"
	page := int64(os.Getpagesize())
	for {
		select {
		case <-pr.done:
			return
		case <-pr.zombie:
			return
		case <-t.C:
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		// Resident less shared: the pages of the known table (and of
		// the executable) are the crawl's, not the checker's own.
		resident, err1 := strconv.ParseInt(f[1], 10, 64)
		shared, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if rss := (resident - shared) * page; rss > pr.pool.opts.MemoryLimit {
			pr.setWhy(fmt.Sprintf("memory limit exceeded (%d MiB resident, limit %d MiB)", rss>>20, pr.pool.opts.MemoryLimit>>20))
			syscall.Kill(-pr.pid, syscall.SIGKILL)
			return
		}
	}
}

// cpuSeconds is the checker's CPU time so far (user + system).
func (pr *proc) cpuSeconds() float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pr.pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces and parentheses: fields count
	// from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // USER_HZ is 100 on Linux
}

// runqSeconds is the time the checker's threads have spent runnable but
// waiting for a CPU, from each thread's schedstat; 0 where the kernel does
// not keep it.
func (pr *proc) runqSeconds() float64 {
	dir := "/proc/" + strconv.Itoa(pr.pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		// Time on a CPU and time waiting on a run queue, in ns, then
		// timeslices.
		if f := strings.Fields(string(b)); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			ns += n
		}
	}
	return float64(ns) / 1e9
}

// tail forwards a checker's stderr to the log, bounded, and keeps the lines
// that explain a death.
type tail struct {
	done chan struct{}
	mu   sync.Mutex
	last []string
	hint string // first "panic:" or "fatal error:" line
}

const (
	maxStderrLines = 100
	maxStderrLine  = 512
)

func newTail() *tail { return &tail{done: make(chan struct{})} }

func (pr *proc) readStderr(f *os.File) {
	defer close(pr.stderr.done)
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	logged := 0
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			// Cleaned for the log as for the data: a compromised
			// checker's escapes and bidi overrides go no further.
			s := observer.CleanText(string(line), maxStderrLine)
			pr.stderr.add(s)
			if logged < maxStderrLines {
				pr.pool.log.Warn("checker stderr", "pid", pr.pid, "line", s)
				logged++
				if logged == maxStderrLines {
					pr.pool.log.Warn("checker stderr: further lines dropped", "pid", pr.pid)
				}
			}
			// A line longer than the buffer comes in pieces; drop the rest.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (t *tail) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hint == "" && (strings.HasPrefix(s, "panic:") || strings.HasPrefix(s, "fatal error:")) {
		t.hint = s
	}
	t.last = append(t.last, s)
	if len(t.last) > 8 {
		t.last = t.last[1:]
	}
}

// telling is the line that best explains a death.
func (t *tail) telling() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hint != "" {
		return t.hint
	}
	for i := len(t.last) - 1; i >= 0; i-- {
		if s := t.last[i]; s != "" {
			return observer.CleanText(s, 200)
		}
	}
	return ""
}
