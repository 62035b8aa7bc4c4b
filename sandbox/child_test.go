package sandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
	"github.com/fediverse-observer/observer/crawl"
	"github.com/fediverse-observer/observer/sandbox"
)

// The test binary doubles as the checker: with envChild set, TestMain runs
// the checker loop with a fake crawl.Checker instead of the tests.
const (
	envChild     = "SANDBOX_TEST_CHILD"
	envConfine   = "SANDBOX_TEST_CONFINE"
	envWrite     = "SANDBOX_TEST_WRITE"      // the file write.social tries to create
	envSleep     = "SANDBOX_TEST_SLEEP"      // the grandchild of spawn.social
	envBadHello  = "SANDBOX_TEST_BAD_HELLO"  // the hello's report has an unclean layer name
	envDropLayer = "SANDBOX_TEST_DROP_LAYER" // the layer the report says was not applied
	envReady     = "SANDBOX_TEST_READY"      // say "ready" on stderr once confined, before serving
)

// rootsInherited has the checker read the inherited root certificates,
// which roots.social reports (PoolOptions.RootsArgs).
var rootsInherited = flag.Bool("roots-inherited", false, "read the inherited root certificates")

func TestMain(m *testing.M) {
	if os.Getenv(envSleep) != "" {
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	if os.Getenv(envChild) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

func child() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var rep sandbox.Report
	var checker crawl.Checker = fake{}
	copts := sandbox.ConfineOptions{MemoryLimit: 256 << 20}
	if raceEnabled {
		copts.MemoryLimit = 64 << 30
	}
	for f := range strings.SplitSeq(os.Getenv(envPorts), ",") {
		if p, err := strconv.Atoi(f); err == nil {
			copts.ConnectPorts = append(copts.ConnectPorts, uint16(p))
		}
	}
	if spec := os.Getenv(envReal); spec != "" {
		c, o, err := realCrawler(spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crawler:", err)
			return 1
		}
		checker, copts = c, o
		copts.MemoryLimit = max(copts.MemoryLimit, 256<<20)
		if raceEnabled {
			copts.MemoryLimit = 64 << 30
		}
	}
	flag.Parse()
	if *rootsInherited {
		der, err := sandbox.ReadRoots()
		if err != nil {
			fmt.Fprintln(os.Stderr, "roots:", err)
			return 1
		}
		if len(der) > 0 {
			inheritedRoots = fmt.Sprintf("%d bytes, sha256 %x", len(der), sha256.Sum256(der))
		}
	}
	var known *os.File
	if os.Getenv(envConfine) != "" {
		k, err := sandbox.InheritedKnown()
		if err != nil {
			fmt.Fprintln(os.Stderr, "known:", err)
			return 1
		}
		known = k
		r, err := sandbox.Confine(copts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "confine:", err)
			return 1
		}
		rep = r
	}
	if os.Getenv(envReady) != "" {
		fmt.Fprintln(os.Stderr, "ready")
	}
	if drop := os.Getenv(envDropLayer); drop != "" {
		for i, l := range rep.Layers {
			if l.Name == drop {
				rep.Layers[i] = sandbox.Layer{Name: drop, Detail: "simulated: not offered"}
			}
		}
	}
	if os.Getenv(envBadHello) != "" {
		rep.Layers = append(rep.Layers, sandbox.Layer{Name: "forged\x1b[2J", Applied: true})
	}
	if err := sandbox.Serve(context.Background(), os.Stdin, os.Stdout, checker, sandbox.ServeOptions{Report: rep, Logger: log, Known: known}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// hogged keeps hog.social's allocations reachable.
var hogged [][]byte

// inheritedRoots describes the root certificates the checker read.
var inheritedRoots string

// begun counts the checks the checker process began.
var begun atomic.Int64

// fake behaves as its host name says.
type fake struct{}

func (fake) Check(ctx context.Context, host observer.Host, opts crawl.CheckOptions) (observer.Result, crawl.Trace) {
	nth := begun.Add(1)
	c := observer.Check{Host: observer.Host(host), CheckedAt: opts.CheckedAt, PassID: opts.PassID, Outcome: observer.OutcomeAlive, DurationMS: 1}
	r := observer.Result{Check: c, Bytes: 42}
	tr := crawl.Trace{Steps: []crawl.Step{{Method: "GET", URL: string("https://" + host + "/.well-known/nodeinfo"), Status: 200, Bytes: 42}}}
	report := func(err error) {
		r.Check.Outcome = observer.OutcomeError
		r.Check.Error = "ok"
		if err != nil {
			r.Check.Error = err.Error()
		}
	}
	switch host {
	case "pid.social":
		r.Check.Name = strconv.Itoa(os.Getpid())
	case "wait.social":
		// Alive at once as a checker's first check; else it waits,
		// saying so on stderr, for the end of its checker.
		if nth > 1 {
			fmt.Fprintln(os.Stderr, "waiting")
			time.Sleep(time.Hour)
		}
		r.Check.Name = strconv.Itoa(os.Getpid())
	case "session.social":
		sid, err := unix.Getsid(0)
		if err != nil {
			report(err)
			break
		}
		r.Check.Name = strconv.Itoa(sid)
	case "peers.social":
		r.Check.PeersFetched = true
		r.Check.PeersCount = 3
		for _, h := range []string{"known.social", "new1.social", "new2.social"} {
			if !opts.Known.Has(observer.Host(h)) {
				r.Discoveries = append(r.Discoveries, observer.Discovery{Host: observer.Host(h), DiscoveredAt: c.CheckedAt, Via: string(host)})
				r.Check.NewPeersCount++
			}
		}
	case "moved.social":
		r.Check.Outcome = observer.OutcomeMoved
		r.Check.MovedTo = "target.social"
		r.Discoveries = []observer.Discovery{{Host: "target.social", DiscoveredAt: c.CheckedAt, Via: observer.ViaRedirect}}
	case "many.social":
		r.Check.PeersFetched = true
		r.Check.PeersCount, r.Check.NewPeersCount = 300_000, 300_000
		for i := range 300_000 {
			r.Discoveries = append(r.Discoveries, observer.Discovery{Host: observer.Host(fmt.Sprintf("h%06d.many.social", i)), DiscoveredAt: c.CheckedAt, Via: string(host)})
		}
	case "panic.social":
		panic("boom from " + string(host))
	case "exit.social":
		os.Exit(7)
	case "hog.social":
		for {
			b := make([]byte, 8<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hogged = append(hogged, b)
		}
	case "sleep.social":
		// The line tells a test, through the pool's log, that the check
		// has reached the checker.
		fmt.Fprintln(os.Stderr, "sleeping")
		time.Sleep(time.Hour) // ignores ctx, as a wedged checker would
	case "spawn.social":
		// A grandchild in the checker's process group, then a hang: the
		// kill must take both.
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = []string{envSleep + "=1"}
		if err := cmd.Start(); err != nil {
			report(err)
			break
		}
		fmt.Fprintf(os.Stderr, "grandchild %d\n", cmd.Process.Pid)
		time.Sleep(time.Hour)
	case "exec.social":
		// ForkExec, not os/exec: os/exec opens /dev/null first, which
		// Landlock would refuse before execve is even tried.
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
		if err == nil {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, 0, nil)
		}
		report(err)
	case "write.social":
		f, err := os.OpenFile(os.Getenv(envWrite), os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
		}
		report(err)
	case "fds.social":
		// The descriptors ≥ 3 that name files.
		var files []string
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			n, _ := strconv.Atoi(e.Name())
			if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && n > 2 && strings.HasPrefix(link, "/") && !strings.HasPrefix(link, "/proc/") {
				files = append(files, link)
			}
		}
		r.Check.Outcome = observer.OutcomeError
		r.Check.Error = "files: " + strings.Join(files, " ")
	case "execve.social":
		// Replaces the checker if it is allowed; only the confined test asks.
		report(unix.Exec("/bin/true", []string{"true"}, nil))
	case "fork.social":
		r1, _, errno := unix.RawSyscall(unix.SYS_FORK, 0, 0, 0)
		switch {
		case errno != 0:
			report(errno)
		case r1 == 0: // the child, if the filter failed
			unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		default:
			var ws unix.WaitStatus
			unix.Wait4(int(r1), &ws, 0, nil)
			report(nil)
		}
	case "setpgid.social":
		// A checker leads its session, which the kernel never lets change
		// group; an invalid group tells the kernel's EINVAL from the
		// filter's EPERM.
		err := unix.Setpgid(0, -1)
		if err == unix.EINVAL {
			err = nil
		}
		report(err)
	case "ptrace.social":
		// Seizing does not stop the tracee; only the confined test asks.
		err := unix.PtraceSeize(os.Getppid())
		if err == nil {
			unix.PtraceDetach(os.Getppid())
		}
		report(err)
	case "prlimit.social":
		// Reads the orchestrator's limit: a checker allowed that much
		// could as well set its RLIMIT_FSIZE to 0.
		var old unix.Rlimit
		report(unix.Prlimit(os.Getppid(), unix.RLIMIT_NOFILE, nil, &old))
	case "setown.social", "setownex.social", "fiosetown.social":
		// Making the orchestrator the owner of a descriptor would let the
		// checker signal it through the descriptor (SIGIO, or the signal
		// F_SETSIG picks) where Landlock scopes no signals.
		var fds [2]int
		err := unix.Pipe2(fds[:], unix.O_CLOEXEC)
		if err == nil {
			ppid := os.Getppid()
			switch host {
			case "setown.social":
				_, err = unix.FcntlInt(uintptr(fds[0]), unix.F_SETOWN, ppid)
			case "setownex.social":
				owner := struct{ typ, pid int32 }{1, int32(ppid)} // F_OWNER_PID
				_, _, errno := unix.Syscall(unix.SYS_FCNTL, uintptr(fds[0]), unix.F_SETOWN_EX, uintptr(unsafe.Pointer(&owner)))
				if errno != 0 {
					err = errno
				}
			default:
				// A socket's owner, which a pipe does not have.
				var sock int
				if sock, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
					err = unix.IoctlSetPointerInt(sock, 0x8901, ppid) // FIOSETOWN
					unix.Close(sock)
				}
			}
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		report(err)
	case "kill.social":
		// Signal 0 only asks whether a signal could be sent.
		report(unix.Kill(os.Getppid(), 0))
	case "dial.social":
		r.Check.Outcome = observer.OutcomeError
		r.Check.Error = dialBoth(os.Getenv(envDial))
	case "read.social":
		_, err := os.ReadFile("/etc/passwd")
		report(err)
	case "huge.social":
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], 1<<30)
		os.Stdout.Write(hdr[:])
		time.Sleep(time.Hour)
	case "garbage.social":
		os.Stdout.Write([]byte("\x00\x00\x00\x05Zjunk"))
		time.Sleep(time.Hour)
	case "badoutcome.social":
		r.Check.Outcome = "pwned"
	case "baddisc.social":
		r.Discoveries = []observer.Discovery{{Host: "127.0.0.1", DiscoveredAt: c.CheckedAt, Via: string(host)}}
	case "badvia.social":
		r.Discoveries = []observer.Discovery{{Host: "other.social", DiscoveredAt: c.CheckedAt, Via: observer.ViaRedirect}}
	case "badtime.social":
		r.Check.CheckedAt = c.CheckedAt.Add(time.Hour)
	case "badhost.social":
		r.Check.Host = "other.social"
	case "negusers.social":
		n := int64(-5)
		r.Check.Users = &n
	case "longname.social":
		r.Check.Name = strings.Repeat("é", 201)
	case "badstatus.social":
		r.Check.HTTPStatus = 70000
	case "slowclaim.social":
		r.Check.DurationMS = int64(time.Hour / time.Millisecond)
	case "unix.social":
		// A socket outside IP: the way to a local daemon's socket.
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		report(err)
	case "roots.social":
		r.Check.Error = inheritedRoots
	case "caps.social":
		// The capability sets of the thread running the check (Landlock
		// hides /proc; the confinement applied to every thread alike).
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			report(err)
			break
		}
		set := func(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }
		var bnd, amb uint64
		for c := range 64 {
			if v, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && v == 1 {
				bnd |= 1 << c
			}
			if v, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && v == 1 {
				amb |= 1 << c
			}
		}
		r.Check.Error = fmt.Sprintf("CapInh %016x; CapPrm %016x; CapEff %016x; CapAmb %016x; CapBnd %016x",
			set(data[0].Inheritable, data[1].Inheritable), set(data[0].Permitted, data[1].Permitted),
			set(data[0].Effective, data[1].Effective), amb, bnd)
	case "raw.social", "netlink.social", "ping.social":
		// Sockets Landlock's TCP port rules do not govern.
		family, typ, proto := unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP
		switch host {
		case "netlink.social":
			family, typ, proto = unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE
		case "ping.social":
			typ = unix.SOCK_DGRAM
		}
		fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
		if err == nil {
			unix.Close(fd)
		}
		report(err)
	case "rdwr.social":
		// Opening an existing file for reading and writing.
		f, err := os.OpenFile(os.Getenv(envWrite), os.O_RDWR, 0)
		if err == nil {
			f.Close()
		}
		report(err)
	case "limits.social":
		var fsize, data unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_FSIZE, &fsize)
		unix.Getrlimit(unix.RLIMIT_DATA, &data)
		r.Check.Outcome = observer.OutcomeError
		r.Check.Error = fmt.Sprintf("fsize %d/%d data %d/%d", fsize.Cur, fsize.Max, data.Cur, data.Max)
	case "env.social":
		r.Check.Outcome = observer.OutcomeError
		r.Check.Error = "env: secret=" + os.Getenv("OBSERVER_TEST_SECRET")
	case "burn.social":
		// CPU time, not wall time: on a loaded machine 300 ms of the clock
		// held less than the pool's 0.1 s budget, and the test failed.
		for start := cpuTime(); cpuTime()-start < 300*time.Millisecond; {
		}
	case "badmoved.social":
		r.Check.Outcome = observer.OutcomeMoved
		r.Check.MovedTo = "Not a host"
	}
	return r, tr
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
