package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Each checker can have a cgroup v2 of its own (PoolOptions.CgroupParent),
// whose memory.max the kernel enforces however the checker allocates; the
// pool falls back to the /proc watchdog alone when the parent cannot hold
// one, and says why once.

// noCgroup turns the checkers' cgroups off for the rest of the pool's life.
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

// useCgroup reports whether new checkers get a cgroup of their own.
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

// removeCgroup removes the checker's cgroup, which the kernel allows once
// it is empty: the checker never started or has exited.
func (pr *proc) removeCgroup() {
	if pr.cgroup != "" {
		os.Remove(pr.cgroup)
	}
}
