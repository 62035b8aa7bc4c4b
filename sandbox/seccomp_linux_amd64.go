package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter is a deny list, not an allow list: the Go runtime, cgo
// and the TLS client use a large and version-dependent set of system calls,
// and a missed one would kill honest checkers at random. What it denies is
// what an attacker who controls a checker wants next: running programs,
// inspecting or writing other processes, writing files, new namespaces,
// kernel attack surface that a TLS client never needs, sockets other than
// TCP and UDP over IP (no raw socket, which Landlock's port rules do not
// govern, and no netlink: Go's resolver uses none), and any new process:
// only threads may be cloned.

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	// openat2 and clone3 pass their flags in memory a filter cannot
	// read; ENOSYS makes libc and Go fall back to openat and clone.
	retENOSYS       = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retEAFNOSUPPORT = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)

	// Opening for writing, creating or truncating.
	openWriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC | unix.O_APPEND | 0x400000 // __O_TMPFILE
	// clone flags that make new namespaces.
	cloneNSFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
		unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME
	x32Bit = 0x40000000
)

var deniedSyscalls = []uintptr{
	// Running programs, new processes (clone is checked below), leaving
	// the process group the orchestrator kills, touching other processes.
	unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_SETSID,
	unix.SYS_SETPGID, unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV,
	unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD, unix.SYS_KCMP,
	// Acting on processes found by pidfd, or on every process of a user
	// (the calls that name one process by pid are checked below).
	unix.SYS_PIDFD_SEND_SIGNAL, unix.SYS_PROCESS_MADVISE, unix.SYS_SETPRIORITY, unix.SYS_IOPRIO_SET,
	// Writing the file system (opening for writing is checked below).
	unix.SYS_CREAT, unix.SYS_TRUNCATE, unix.SYS_FTRUNCATE, unix.SYS_UNLINK, unix.SYS_UNLINKAT,
	unix.SYS_RENAME, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2, unix.SYS_MKDIR, unix.SYS_MKDIRAT,
	unix.SYS_RMDIR, unix.SYS_LINK, unix.SYS_LINKAT, unix.SYS_SYMLINK, unix.SYS_SYMLINKAT,
	unix.SYS_CHMOD, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2, unix.SYS_CHOWN,
	unix.SYS_FCHOWN, unix.SYS_LCHOWN, unix.SYS_FCHOWNAT, unix.SYS_MKNOD, unix.SYS_MKNODAT,
	unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_UTIMENSAT, unix.SYS_FUTIMESAT,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_REMOVEXATTR,
	unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR, unix.SYS_MEMFD_CREATE,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	// Namespaces, mounts and the like.
	unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
	unix.SYS_CHROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSMOUNT,
	unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	// Kernel attack surface a TLS client does not need.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_KEYCTL,
	unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER,
	unix.SYS_IO_URING_REGISTER, unix.SYS_FANOTIFY_INIT, unix.SYS_INIT_MODULE,
	unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_ADJTIMEX, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME, unix.SYS_IOPL, unix.SYS_IOPERM,
	unix.SYS_SYSLOG, unix.SYS_VHANGUP, unix.SYS_PERSONALITY, unix.SYS_MODIFY_LDT,
	// System V IPC: shared memory, semaphores and message queues are
	// namespaced, not process-scoped, so another process of the user (or,
	// as root, any) could be reached through them.
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT, unix.SYS_SEMGET,
	unix.SYS_SEMOP, unix.SYS_SEMCTL, unix.SYS_SEMTIMEDOP, unix.SYS_MSGGET, unix.SYS_MSGSND,
	unix.SYS_MSGRCV, unix.SYS_MSGCTL,
}

// BPF opcodes.
const (
	ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	andK   = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	retK   = unix.BPF_RET | unix.BPF_K
	offNr  = 0 // struct seccomp_data: nr, arch, instruction_pointer, args[6]
	offArc = 4
)

// offArg is the offset of the low 32 bits of argument i (little endian).
func offArg(i int) uint32 { return uint32(16 + 8*i) }

// ownPIDSyscalls take a pid as their first argument and act on that process
// (or group): signals, resource limits, scheduling, memory placement. The
// kernel lets any process of the same user use them on any other, so a
// checker could kill the orchestrator (or, with kill(-1), every process of
// the user), set its RLIMIT_FSIZE to 0 or starve it, where Landlock does not
// scope signals and not at all for the others. They are allowed on the
// checker itself only: pid 0 or its own.
var ownPIDSyscalls = []uintptr{
	unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO,
	unix.SYS_PIDFD_OPEN, unix.SYS_PRLIMIT64, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_SETSCHEDULER,
	unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_SETATTR, unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES,
}

// fioSetOwn is FIOSETOWN, which golang.org/x/sys does not name.
const fioSetOwn = 0x8901

// ownerCommands make a process the owner of a descriptor, which the kernel
// then signals (SIGIO, or any signal chosen with F_SETSIG) when the
// descriptor is ready: a way to signal another process that the kill
// syscalls' filter below does not see, open to any process of the same
// user. A checker has no use for them. Denied per syscall and command
// (argument 1).
var ownerCommands = []struct {
	nr   uintptr
	cmds []uint32
}{
	{unix.SYS_FCNTL, []uint32{unix.F_SETOWN, unix.F_SETOWN_EX, unix.F_SETSIG}},
	{unix.SYS_IOCTL, []uint32{fioSetOwn, unix.SIOCSPGRP}},
}

// seccompProgram is the filter for the process whose id is pid.
func seccompProgram(pid int) []unix.SockFilter {
	ins := func(code uint16, jt, jf uint8, k uint32) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	p := []unix.SockFilter{
		ins(ldAbs, 0, 0, offArc),
		ins(jeq, 1, 0, unix.AUDIT_ARCH_X86_64),
		ins(retK, 0, 0, retKill),
		ins(ldAbs, 0, 0, offNr),
		ins(jge, 0, 1, x32Bit),
		ins(retK, 0, 0, retKill),
	}
	for _, nr := range deniedSyscalls {
		p = append(p, ins(jeq, 0, 1, uint32(nr)), ins(retK, 0, 0, retEPERM))
	}
	for _, nr := range []uintptr{unix.SYS_OPENAT2, unix.SYS_CLONE3} {
		p = append(p, ins(jeq, 0, 1, uint32(nr)), ins(retK, 0, 0, retENOSYS))
	}
	// A syscall whose argument decides: load it, deny if flags are set,
	// else allow. Both branches return, so the accumulator need not be
	// restored for the checks after.
	flagged := func(nr uintptr, arg int, mask uint32) {
		p = append(p,
			ins(jeq, 0, 4, uint32(nr)),
			ins(ldAbs, 0, 0, offArg(arg)),
			ins(jset, 0, 1, mask),
			ins(retK, 0, 0, retEPERM),
			ins(retK, 0, 0, retAllow),
		)
	}
	// Commands are ints: the low 32 bits are what the kernel reads. An
	// equal one jumps past the rest and the allow, to the EPERM.
	for _, oc := range ownerCommands {
		n := len(oc.cmds)
		p = append(p, ins(jeq, 0, uint8(n+3), uint32(oc.nr)), ins(ldAbs, 0, 0, offArg(1)))
		for i, cmd := range oc.cmds {
			p = append(p, ins(jeq, uint8(n-i), 0, cmd))
		}
		p = append(p, ins(retK, 0, 0, retAllow), ins(retK, 0, 0, retEPERM))
	}
	// pid_t is an int: the low 32 bits are what the kernel reads.
	for _, nr := range ownPIDSyscalls {
		p = append(p,
			ins(jeq, 0, 5, uint32(nr)),
			ins(ldAbs, 0, 0, offArg(0)),
			ins(jeq, 2, 0, 0),
			ins(jeq, 1, 0, uint32(pid)),
			ins(retK, 0, 0, retEPERM),
			ins(retK, 0, 0, retAllow),
		)
	}
	flagged(unix.SYS_OPEN, 1, openWriteFlags)
	flagged(unix.SYS_OPENAT, 2, openWriteFlags)
	// clone makes threads only: CLONE_THREAD set, no namespace flags. A
	// checker has no use for a child process, and one could leave the
	// process group and outlive the checker.
	p = append(p,
		ins(jeq, 0, 5, unix.SYS_CLONE),
		ins(ldAbs, 0, 0, offArg(0)),
		ins(jset, 0, 2, unix.CLONE_THREAD),
		ins(jset, 1, 0, cloneNSFlags),
		ins(retK, 0, 0, retAllow),
		ins(retK, 0, 0, retEPERM),
	)
	// socket: IPv4 or IPv6 (else EAFNOSUPPORT), stream or datagram (the
	// type's low bits; its high ones are SOCK_NONBLOCK and SOCK_CLOEXEC),
	// protocol TCP, UDP or the type's default (0): else EPERM.
	p = append(p,
		ins(jeq, 0, 14, unix.SYS_SOCKET),
		ins(ldAbs, 0, 0, offArg(0)),
		ins(jeq, 2, 0, unix.AF_INET),
		ins(jeq, 1, 0, unix.AF_INET6),
		ins(retK, 0, 0, retEAFNOSUPPORT),
		ins(ldAbs, 0, 0, offArg(1)),
		ins(andK, 0, 0, 0xf),
		ins(jeq, 1, 0, unix.SOCK_STREAM),
		ins(jeq, 0, 4, unix.SOCK_DGRAM),
		ins(ldAbs, 0, 0, offArg(2)),
		ins(jeq, 3, 0, 0),
		ins(jeq, 2, 0, unix.IPPROTO_TCP),
		ins(jeq, 1, 0, unix.IPPROTO_UDP),
		ins(retK, 0, 0, retEPERM),
		ins(retK, 0, 0, retAllow),
	)
	return append(p, ins(retK, 0, 0, retAllow))
}

// installSeccomp installs the filter on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC). no_new_privs must already be set.
func installSeccomp() error {
	prog := seccompProgram(os.Getpid())
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not be synchronised", r)
	}
	return nil
}

const seccompSupported = true
