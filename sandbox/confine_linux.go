package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/fediverse-observer/observer"
)

// Confines: Confine applies its layers here (on Linux). Where it does,
// checks run in sandboxed checker processes by default (observer crawl's
// --isolation) and a crawl requires confinement by default
// (crawl.require_confinement).
const Confines = true

// Confine applies the checker's limits to the calling process, for all its
// threads. A checker calls it once, after it has loaded its CA certificates
// and before its first network request. Layers the kernel does not offer
// are listed as not applied in the Report; an error means a layer the
// kernel does offer failed, and the checker must not go on.
func Confine(opts ConfineOptions) (Report, error) {
	opts.setDefaults()
	var r Report
	var errs []error
	closeInherited(&r)
	if err := dropCapabilities(&r); err != nil {
		errs = append(errs, err)
	}
	rlimit := func(name string, res int, soft, hard uint64, detail string) {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: soft, Max: hard}); err != nil {
			r.add(name, false, "%v", err)
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return
		}
		r.add(name, true, "%s", detail)
	}
	rlimit(LayerNoFile, unix.RLIMIT_NOFILE, opts.MaxOpenFiles, opts.MaxOpenFiles, fmt.Sprint(opts.MaxOpenFiles))
	rlimit(LayerCPU, unix.RLIMIT_CPU, opts.CPUSeconds, opts.CPUSeconds+5, fmt.Sprintf("%d s", opts.CPUSeconds))
	// No file of any size can be written; core dumps neither.
	rlimit(LayerFSize, unix.RLIMIT_FSIZE, 0, 0, "0")
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		errs = append(errs, fmt.Errorf("rlimit_core: %w", err))
	}

	// RLIMIT_DATA counts private writable mappings, which is where the Go
	// heap lives (reserved address space is not counted until used), so
	// unlike RLIMIT_AS it is a hard ceiling that does not trip on the
	// runtime's reservations. GOMEMLIMIT below it makes the collector work
	// harder before the ceiling is reached.
	soft := opts.MemoryLimit / 4 * 3
	debug.SetMemoryLimit(soft)
	if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: uint64(opts.MemoryLimit), Max: uint64(opts.MemoryLimit)}); err != nil {
		r.add(LayerMemory, false, "GOMEMLIMIT %d MiB only; rlimit_data: %v", soft>>20, err)
		errs = append(errs, fmt.Errorf("rlimit_data: %w", err))
	} else {
		r.add(LayerMemory, true, "GOMEMLIMIT %d MiB, rlimit_data %d MiB", soft>>20, opts.MemoryLimit>>20)
	}

	if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		r.add(LayerNoNewPrv, false, "%v", err)
		errs = append(errs, fmt.Errorf("no_new_privs: %w", err))
		// Without it neither Landlock nor seccomp can be applied by an
		// unprivileged process.
		return r, errors.Join(errs...)
	}
	r.add(LayerNoNewPrv, true, "")

	applyLandlock(&r, &errs, opts)

	if !seccompSupported {
		r.add(LayerSeccomp, false, "no filter for %s", runtime.GOARCH)
	} else if err := installSeccomp(); err != nil {
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			r.add(LayerSeccomp, false, "kernel: %v", err)
		} else {
			r.add(LayerSeccomp, false, "%v", err)
			errs = append(errs, err)
		}
	} else {
		r.add(LayerSeccomp, true, "deny exec, ptrace, acting on other processes, file writes, namespaces, SysV IPC, sockets but TCP and UDP")
	}
	return r, errors.Join(errs...)
}

// RequiredLayers are the layers a checker must apply when confinement is
// required (PoolOptions.RequireConfinement): every layer of Confine's on any
// kernel with Landlock (5.13 and later), and Landlock's network rules where
// the kernel offers them (ABI 4, 6.7 and later). The seccomp filter exists
// for amd64 only; elsewhere requiring confinement refuses to crawl.
func RequiredLayers() []string {
	layers := []string{LayerInherited, LayerCaps, LayerNoFile, LayerCPU, LayerFSize, LayerMemory, LayerNoNewPrv, LayerSeccomp, LayerLandlock}
	if abi, err := llsys.LandlockGetABIVersion(); err == nil && abi >= 4 {
		layers = append(layers, LayerLLNet)
	}
	return layers
}

// closeInherited closes descriptors the checker inherited by accident:
// those opened by C code in the orchestrator (DuckDB) without O_CLOEXEC.
// Landlock and seccomp do not govern descriptors already open, so one left
// open could be a way to write the database. Only descriptors without
// FD_CLOEXEC can have crossed execve; the Go runtime opens all of its own
// (e.g. the cgroup CPU limit files it rereads) with it, so they stay.
func closeInherited(r *Report) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		r.add(LayerInherited, false, "list descriptors: %v", err)
		return
	}
	var closed []string
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		link, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if unix.Close(fd) == nil {
			closed = append(closed, fmt.Sprintf("%d %s", fd, link))
		}
	}
	detail := fmt.Sprintf("closed %d", len(closed))
	if len(closed) > 0 {
		detail += ": " + observer.CleanText(strings.Join(closed, ", "), 200)
	}
	r.add(LayerInherited, true, "%s", detail)
}

func applyLandlock(r *Report, errs *[]error, opts ConfineOptions) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		r.add(LayerLandlock, false, "not offered by this kernel (%v)", err)
		r.add(LayerLLNet, false, "not offered by this kernel")
		return
	}
	var rules []landlock.Rule
	for _, p := range readPaths(opts.ReadPaths) {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		} else {
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
		}
	}
	paths := len(rules)
	// BestEffort downgrades to what the kernel offers; its errata may make
	// go-landlock use an older ABI than the kernel reports.
	cfg := landlock.V11.BestEffort()
	netRestricted := len(opts.ConnectPorts) > 0 && abi >= 4
	ports := uniquePorts(append(slices.Clone(opts.ConnectPorts), 53))
	if netRestricted {
		for _, port := range ports {
			rules = append(rules, landlock.ConnectTCP(port))
		}
		rules = append(rules, landlock.ConnectSendUDP(53))
		err = cfg.Restrict(rules...)
	} else {
		err = cfg.RestrictPaths(rules...)
		if err == nil && abi >= 6 {
			err = cfg.RestrictScoped()
		}
	}
	if err != nil {
		r.add(LayerLandlock, false, "%v", err)
		r.add(LayerLLNet, false, "landlock failed")
		*errs = append(*errs, fmt.Errorf("landlock: %w", err))
		return
	}
	detail := fmt.Sprintf("ABI %d: read-only %d paths", abi, paths)
	if abi >= 6 {
		detail += ", signals and abstract sockets scoped"
	}
	r.add(LayerLandlock, true, "%s", detail)
	switch {
	case netRestricted:
		r.add(LayerLLNet, true, "TCP connect only to %d ports: %s", len(ports), summarisePorts(ports))
	case abi < 4:
		r.add(LayerLLNet, false, "ABI %d has no network rules", abi)
	default:
		r.add(LayerLLNet, false, "no ports given")
	}
}

// readPaths lists what a confined checker may read: CA certificates and
// the resolver's configuration, with symlinks resolved (Landlock checks the
// file a path ends at, and /etc/resolv.conf is often a link into /run).
func readPaths(extra []string) []string {
	paths := []string{
		"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates",
		"/usr/local/share/ca-certificates", "/etc/resolv.conf", "/etc/hosts",
		"/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	}
	for _, env := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR"} {
		for p := range strings.SplitSeq(os.Getenv(env), ":") {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	paths = append(paths, extra...)
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
		}
		for _, q := range []string{p, evalLinks(p)} {
			if q != "" && !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}

func evalLinks(p string) string {
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return q
}
