package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/hostname"
)

// PoolOptions configures a Pool. The zero value of each field means its
// documented default.
type PoolOptions struct {
	// Path is the checker executable; default os.Executable(), i.e. the
	// running binary re-executed.
	Path string
	// Args are the checker's arguments (argv[1:]), e.g. the hidden
	// subcommand and the flags it needs to build its crawler.
	Args []string
	// Env is added to the checker's environment, which otherwise holds
	// only SSL_CERT_FILE, SSL_CERT_DIR and TZ from ours, and
	// GODEBUG=netdns=go (the pure-Go resolver needs no libc plugins,
	// which Landlock would not let it load).
	Env []string
	// Size is the number of checker processes at most, one check each at
	// a time: the pass's concurrency. Default 1.
	Size int
	// Known are the hosts known before the pass; each checker process
	// gets them once, at start, to drop known peers itself.
	Known []string
	// CheckTimeout is the crawler's per-check deadline; a checker that has
	// not answered CheckTimeout + grace (10 s, or half the timeout if
	// less) after the request is killed.
	// Default 60 s.
	CheckTimeout time.Duration
	// StartTimeout bounds a checker's start: loading the known hosts,
	// confining itself, saying hello. Default 60 s.
	StartTimeout time.Duration
	// MemoryLimit is the resident memory above which a checker is killed
	// (polled from /proc), and the cgroup memory.max if CgroupParent is
	// set. Keep it above ConfineOptions.MemoryLimit, which the checker
	// enforces itself. Default 1 GiB.
	MemoryLimit int64
	// ChecksPerProcess retires a checker after this many checks; 1 runs
	// every check in a fresh process. Default 1000.
	ChecksPerProcess int
	// RetireCPUSeconds retires a checker whose CPU time reached it, so an
	// honest checker never meets its RLIMIT_CPU (ConfineOptions.CPUSeconds,
	// keep it above). Default 300.
	RetireCPUSeconds float64
	// CgroupParent, if set, is a cgroup v2 directory delegated to us in
	// which each checker gets its own cgroup with memory.max = MemoryLimit.
	// Empty: no cgroup, the /proc watchdog and RLIMIT_DATA only.
	CgroupParent string
	// Logger gets the confinement report (once) and the checkers' stderr
	// (bounded). Default slog.Default().
	Logger *slog.Logger
}

func (o *PoolOptions) setDefaults() error {
	if o.Path == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable: %w", err)
		}
		o.Path = exe
	}
	o.Size = max(o.Size, 1)
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 60 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = 1 << 30
	}
	if o.ChecksPerProcess <= 0 {
		o.ChecksPerProcess = 1000
	}
	if o.RetireCPUSeconds <= 0 {
		o.RetireCPUSeconds = 300
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// grace is how long past its own deadline a checker may take to answer.
func grace(timeout time.Duration) time.Duration { return min(10*time.Second, timeout/2) }

// Pool runs checks in checker processes. It implements crawl.Checker; a
// checker that dies, overruns its deadline, exceeds its memory or sends
// anything invalid is killed with its process group, its host gets
// checker_failed, and a fresh process takes its place.
type Pool struct {
	opts   PoolOptions
	log    *slog.Logger
	known  [][]byte // encoded known-hosts frames, shared by every start
	slots  chan struct{}
	idle   chan *proc
	nextID atomic.Uint64
	seq    atomic.Uint64
	report Report

	mu        sync.Mutex
	procs     map[*proc]struct{}
	closed    bool
	cgroup    bool   // put each checker in its own cgroup
	cgroupWhy string // why not, if CgroupParent was set
}

var _ crawl.Checker = (*Pool)(nil)

// NewPool starts one checker (so a broken setup fails here, not on every
// host), logs what confinement it applied and what it could not, and
// returns the pool. Close it when the pass is over. If ctx is done before
// the checker has said hello, the checker is killed and the error wraps
// ctx.Err().
func NewPool(ctx context.Context, opts PoolOptions) (*Pool, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	known := encodeKnown(opts.Known)
	// The encoded frames are what every checker is sent; the list itself
	// (a million hosts on a big pass) need not outlive this call.
	opts.Known = nil
	p := &Pool{
		opts:   opts,
		log:    opts.Logger,
		known:  known,
		slots:  make(chan struct{}, opts.Size),
		idle:   make(chan *proc, opts.Size),
		procs:  map[*proc]struct{}{},
		cgroup: opts.CgroupParent != "",
	}
	if p.cgroup {
		if why := notCgroup2(opts.CgroupParent); why != "" {
			p.cgroup = false
			p.cgroupWhy = why
		}
	}
	pr, err := p.start(ctx)
	if err != nil {
		return nil, fmt.Errorf("start checker %s: %w", opts.Path, err)
	}
	p.report = pr.report
	p.report.Layers = append(p.report.Layers, p.poolLayers()...)
	p.log.Info("checkers confined", "applied", p.report.String())
	for _, l := range p.report.Missing() {
		p.log.Warn("checker confinement layer not applied", "layer", l.Name, "why", l.Detail)
	}
	p.idle <- pr
	return p, nil
}

// Report is the confinement the first checker reported, with the pool's
// own layers (memory watchdog, cgroup).
func (p *Pool) Report() Report { return p.report }

func (p *Pool) poolLayers() []Layer {
	ls := []Layer{{Name: "rss_watchdog", Applied: true, Detail: fmt.Sprintf("kill above %d MiB resident", p.opts.MemoryLimit>>20)}}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.opts.CgroupParent == "":
		ls = append(ls, Layer{Name: "cgroup", Detail: "no cgroup parent configured"})
	case !p.cgroup:
		ls = append(ls, Layer{Name: "cgroup", Detail: observer.CleanText("could not use "+p.opts.CgroupParent+": "+p.cgroupWhy, 300)})
	default:
		ls = append(ls, Layer{Name: "cgroup", Applied: true, Detail: fmt.Sprintf("memory.max %d MiB under %s", p.opts.MemoryLimit>>20, p.opts.CgroupParent)})
	}
	return ls
}

func encodeKnown(hosts []string) [][]byte {
	var frames [][]byte
	sent := 0
	for len(hosts) > 0 {
		buf, n := appendKnown(make([]byte, 0, maxRequestFrame-1), hosts, maxRequestFrame-1)
		for _, h := range hosts[:n] {
			if len(h) > 0 && len(h) <= maxHostBytes {
				sent++
			}
		}
		frames = append(frames, frame(msgKnown, buf))
		hosts = hosts[n:]
	}
	return append(frames, frame(msgKnownEnd, binary.AppendUvarint(nil, uint64(sent))))
}

func frame(t byte, payload []byte) []byte {
	var b bytes.Buffer
	writeFrame(&b, t, payload)
	return b.Bytes()
}

// Close kills every checker and waits for them.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	procs := make([]*proc, 0, len(p.procs))
	for pr := range p.procs {
		procs = append(procs, pr)
	}
	p.mu.Unlock()
	for _, pr := range procs {
		pr.kill()
	}
	return nil
}

// Check runs one check in a checker process. opts.Known is not sent: each
// checker filters peers with PoolOptions.Known, and the pass filters the
// discoveries again with its own set.
func (p *Pool) Check(ctx context.Context, host string, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
	start := time.Now()
	at := opts.CheckedAt
	if at.IsZero() {
		at = start
	}
	res := observer.Result{Check: observer.Check{Host: host, CheckedAt: at.UTC(), PassID: opts.PassID}}
	fail := func(o observer.Outcome, format string, args ...any) (observer.Result, crawl.Trace) {
		res.Check.Outcome = o
		// The text may quote the checker's stderr: cleaned, so no
		// control character or bidi override reaches the data.
		res.Check.Error = observer.CleanText(fmt.Sprintf(format, args...), 300)
		res.Check.DurationMS = time.Since(start).Milliseconds()
		return res, crawl.Trace{Steps: []crawl.Step{{Note: res.Check.Error}}}
	}
	norm, err := hostname.Normalize(host)
	if err != nil {
		return fail(observer.OutcomeError, "invalid host: %v", err)
	}
	res.Check.Host = norm
	req := wireRequest{Host: norm, FetchPeers: opts.FetchPeers, CheckedAt: res.Check.CheckedAt, PassID: opts.PassID,
		PeersETag: opts.PeersETag, PeersLastModified: opts.PeersLastModified}
	if opts.Addr.IsValid() {
		req.Addr = opts.Addr.String()
	}
	if err := req.validate(); err != nil {
		return fail(observer.OutcomeError, "%v", err)
	}

	if ctx.Err() != nil {
		return fail(observer.OutcomeCheckerFailed, "not started: %v", context.Cause(ctx))
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fail(observer.OutcomeCheckerFailed, "not started: %v", context.Cause(ctx))
	}
	defer func() { <-p.slots }()
	pr, err := p.get(ctx)
	if err != nil {
		return fail(observer.OutcomeCheckerFailed, "start checker: %v", err)
	}
	r, t, err := pr.check(ctx, p.nextID.Add(1), req, p.opts.CheckTimeout+grace(p.opts.CheckTimeout))
	if err != nil {
		pr.kill()
		why := pr.failure(err)
		p.log.Warn("checker failed", "host", norm, "pid", pr.pid, "err", why)
		return fail(observer.OutcomeCheckerFailed, "%s", why)
	}
	p.put(pr)
	return r, t
}

// get takes an idle checker or starts one.
func (p *Pool) get(ctx context.Context) (*proc, error) {
	for {
		select {
		case pr := <-p.idle:
			select {
			case <-pr.zombie: // died while idle (e.g. the kernel's OOM killer)
				pr.kill()
				p.log.Warn("idle checker had died", "pid", pr.pid, "exit", pr.exit)
				continue
			default:
				return pr, nil
			}
		default:
			return p.start(ctx)
		}
	}
}

// put returns a checker for reuse, or retires it.
func (p *Pool) put(pr *proc) {
	pr.checks++
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed || pr.checks >= p.opts.ChecksPerProcess || pr.cpuSeconds() >= p.opts.RetireCPUSeconds {
		pr.kill()
		return
	}
	select {
	case p.idle <- pr:
	default:
		pr.kill()
	}
}

// proc is one checker process.
type proc struct {
	pool   *Pool
	cmd    *exec.Cmd
	pid    int
	in     *os.File
	frames chan frameMsg
	done   chan struct{} // closed when the proc is being discarded
	zombie chan struct{} // closed when the process has exited (not yet reaped)
	report Report
	checks int
	cgroup string

	killOnce sync.Once
	mu       sync.Mutex
	why      string // why the pool killed it, if it did
	exit     string // how it ended
	stderr   *tail
}

type frameMsg struct {
	t       byte
	payload []byte
	err     error
}

// start starts a checker, sends it the known hosts and waits for its hello,
// for StartTimeout at most. If ctx is done first, it kills the checker and
// returns an error wrapping ctx.Err().
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
	cmd := exec.Command(p.opts.Path, p.opts.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.Env = childEnv(p.opts.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr := &proc{
		pool:   p,
		cmd:    cmd,
		in:     inW,
		frames: make(chan frameMsg),
		done:   make(chan struct{}),
		zombie: make(chan struct{}),
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
	err = cmd.Start()
	if err != nil && cgFD != nil {
		// The kernel may refuse CLONE_INTO_CGROUP (too old, or the
		// directory is no cgroup): start without it from now on.
		p.noCgroup(err)
		pr.removeCgroup()
		pr.cgroup = ""
		cgFD.Close()
		cgFD = nil
		cmd = exec.Command(p.opts.Path, p.opts.Args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		cmd.Env = childEnv(p.opts.Env)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		pr.cmd = cmd
		err = cmd.Start()
	}
	inR.Close()
	outW.Close()
	errW.Close()
	if cgFD != nil {
		cgFD.Close()
	}
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		pr.removeCgroup()
		return nil, err
	}
	pr.pid = cmd.Process.Pid
	p.mu.Lock()
	p.procs[pr] = struct{}{}
	p.mu.Unlock()

	go pr.waitExit()
	go pr.readStderr(errR)
	go pr.readFrames(outR)
	go pr.watchMemory()

	// Send the known hosts while waiting for the hello: a checker that
	// does not read them must not block the start past its timeout.
	sent := make(chan error, 1)
	go func() {
		for _, f := range p.known {
			if _, err := inW.Write(f); err != nil {
				sent <- fmt.Errorf("send known hosts: %w", err)
				return
			}
		}
		sent <- nil
	}()
	timer := time.NewTimer(p.opts.StartTimeout)
	defer timer.Stop()
	select {
	case f := <-pr.frames:
		err = f.err
		if err == nil && f.t != msgHello {
			err = fmt.Errorf("first message %q, want hello", f.t)
		}
		if err == nil {
			err = strictJSON(f.payload, &pr.report)
		}
		if err == nil {
			err = pr.report.validate()
		}
		if err == nil {
			// An honest checker says hello after it read the end marker.
			select {
			case err = <-sent:
			case <-timer.C:
				err = errors.New("hello before the known hosts were read")
			case <-ctx.Done():
				pr.kill()
				return nil, fmt.Errorf("start interrupted: %w", ctx.Err())
			}
		}
	case <-timer.C:
		pr.setWhy(fmt.Sprintf("no hello within %s", p.opts.StartTimeout))
		err = errors.New("start timeout")
	case <-ctx.Done():
		// Killing the checker also ends the sending of the known hosts:
		// their writes fail once the pipe is closed.
		pr.kill()
		return nil, fmt.Errorf("start interrupted: %w", ctx.Err())
	}
	if err != nil {
		pr.kill()
		return nil, errors.New(pr.failure(err))
	}
	return pr, nil
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
	env = append(env, "GODEBUG=netdns=go")
	return append(env, extra...)
}

// check sends one request and waits for its result.
func (pr *proc) check(ctx context.Context, id uint64, req wireRequest, deadline time.Duration) (observer.Result, crawl.Trace, error) {
	req.ID = id
	payload, err := json.Marshal(req)
	if err != nil {
		return observer.Result{}, crawl.Trace{}, err
	}
	sent := time.Now()
	if _, err := pr.in.Write(frame(msgRequest, payload)); err != nil {
		return observer.Result{}, crawl.Trace{}, fmt.Errorf("send request: %w", err)
	}
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case f := <-pr.frames:
		if f.err != nil {
			return observer.Result{}, crawl.Trace{}, f.err
		}
		if f.t != msgResult {
			return observer.Result{}, crawl.Trace{}, fmt.Errorf("unexpected message %q", f.t)
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
	case <-timer.C:
		pr.setWhy(fmt.Sprintf("no result within %s (deadline overrun)", deadline))
		return observer.Result{}, crawl.Trace{}, errors.New("deadline")
	case <-ctx.Done():
		pr.setWhy("pass interrupted")
		return observer.Result{}, crawl.Trace{}, context.Cause(ctx)
	case <-pr.done:
		pr.setWhy("pool closed")
		return observer.Result{}, crawl.Trace{}, errors.New("pool closed")
	}
}

func (pr *proc) readFrames(out *os.File) {
	defer out.Close()
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		t, payload, err := readFrame(r, maxResultFrame)
		select {
		case pr.frames <- frameMsg{t, payload, err}:
		case <-pr.done:
			return
		}
		if err != nil {
			return
		}
	}
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
		p := pr.pool
		p.mu.Lock()
		delete(p.procs, pr)
		p.mu.Unlock()
	})
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
		if len(f) < 2 {
			continue
		}
		pages, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		if rss := pages * page; rss > pr.pool.opts.MemoryLimit {
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

func (p *Pool) noCgroup(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cgroup {
		p.cgroup = false
		p.cgroupWhy = err.Error()
		p.log.Warn("checker cgroups not used", "parent", p.opts.CgroupParent, "err", err)
	}
}

// notCgroup2 says why dir cannot hold checker cgroups, or "".
func notCgroup2(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return err.Error()
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return "not a cgroup v2 directory"
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err.Error()
	}
	if !strings.Contains(" "+strings.TrimSpace(string(b))+" ", " memory ") {
		return "memory controller not enabled in its cgroup.subtree_control"
	}
	return ""
}

func (p *Pool) useCgroup() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cgroup
}

// makeCgroup creates the checker's cgroup, sets its memory limit and
// returns its directory open for CLONE_INTO_CGROUP.
func (p *Pool) makeCgroup() (string, *os.File, error) {
	dir := filepath.Join(p.opts.CgroupParent, fmt.Sprintf("checker-%d-%d", os.Getpid(), p.seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	limit := []byte(strconv.FormatInt(p.opts.MemoryLimit, 10))
	if err := os.WriteFile(filepath.Join(dir, "memory.max"), limit, 0); err != nil {
		os.Remove(dir)
		return "", nil, fmt.Errorf("set memory.max: %w", err)
	}
	os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0) // absent without swap accounting
	fd, err := os.Open(dir)
	if err != nil {
		os.Remove(dir)
		return "", nil, err
	}
	return dir, fd, nil
}

func (pr *proc) removeCgroup() {
	if pr.cgroup != "" {
		os.Remove(pr.cgroup)
	}
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
