package sandbox

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fediverse-observer/observer"
)

// ConfineOptions sets the limits a checker process puts on itself. The zero
// value of each field means its documented default.
type ConfineOptions struct {
	// MaxOpenFiles is the hard RLIMIT_NOFILE; default 128 (one check at a
	// time needs a handful of sockets).
	MaxOpenFiles uint64
	// CPUSeconds is the process's RLIMIT_CPU (soft; the hard limit is 5 s
	// more). It is a lifetime budget: the pool retires a checker long
	// before an honest one gets near it. Default 600.
	CPUSeconds uint64
	// MemoryLimit is the hard memory budget in bytes: the Go runtime's
	// soft limit (GOMEMLIMIT) is set to 3/4 of it and RLIMIT_DATA (which
	// counts the Go heap) to all of it. Default 512 MiB.
	MemoryLimit int64
	// ReadPaths are files and directories the checker may still read once
	// confined, besides the defaults (the system CA directories,
	// /etc/resolv.conf, /etc/hosts, /etc/nsswitch.conf, and
	// SSL_CERT_FILE/SSL_CERT_DIR). Pass the --ca-cert files here.
	ReadPaths []string
	// ConnectPorts, if not empty, are the only TCP ports the checker may
	// connect to (Landlock ABI 4 and later): 443 and the ports of the
	// --connect-to rules. DNS (port 53) is always allowed. Empty: ports
	// are not restricted.
	ConnectPorts []uint16
}

func (o *ConfineOptions) setDefaults() {
	if o.MaxOpenFiles == 0 {
		o.MaxOpenFiles = 128
	}
	if o.CPUSeconds == 0 {
		o.CPUSeconds = 600
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = 512 << 20
	}
}

// Layer is one confinement measure and whether it is in force.
type Layer struct {
	Name    string `json:"name"`
	Applied bool   `json:"applied"`
	Detail  string `json:"detail,omitempty"` // what was applied, or why not
}

// Report says which layers a checker applied. A checker sends it to the
// orchestrator once, which logs it once per pool.
type Report struct {
	Layers []Layer `json:"layers"`
}

// maxDetail is the most characters of a layer's detail the orchestrator
// accepts; add cuts a detail to it, so that no configuration, however
// large, makes an honest checker's report invalid.
const maxDetail = 300

func (r *Report) add(name string, applied bool, format string, args ...any) {
	detail := observer.CleanText(fmt.Sprintf(format, args...), maxDetail)
	r.Layers = append(r.Layers, Layer{Name: name, Applied: applied, Detail: detail})
}

// Missing lists the layers not in force.
func (r Report) Missing() []Layer {
	var out []Layer
	for _, l := range r.Layers {
		if !l.Applied {
			out = append(out, l)
		}
	}
	return out
}

// Applied reports whether the layer called name is in force.
func (r Report) Applied(name string) bool {
	for _, l := range r.Layers {
		if l.Name == name {
			return l.Applied
		}
	}
	return false
}

// String lists the layers on one line, for the log.
func (r Report) String() string {
	parts := make([]string, len(r.Layers))
	for i, l := range r.Layers {
		mark := "+"
		if !l.Applied {
			mark = "-"
		}
		parts[i] = mark + l.Name
		if l.Detail != "" {
			parts[i] += " (" + l.Detail + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func (r Report) validate() error {
	if len(r.Layers) > maxLayers {
		return fmt.Errorf("report of %d layers", len(r.Layers))
	}
	for _, l := range r.Layers {
		if err := checkText(l.Name, 40); err != nil {
			return fmt.Errorf("report layer name: %w", err)
		}
		if err := checkText(l.Detail, maxDetail); err != nil {
			return fmt.Errorf("report layer %s: %w", l.Name, err)
		}
	}
	return nil
}

// NotConfinedError is NewPool's refusal, with PoolOptions.RequireConfinement,
// of a checker that could not apply a layer it must.
type NotConfinedError struct {
	Layer Layer
}

func (e *NotConfinedError) Error() string {
	why := e.Layer.Detail
	if why == "" {
		why = "not reported"
	}
	return fmt.Sprintf("checker confinement layer %s not applied (%s)", e.Layer.Name, why)
}

// firstMissing is the first of the required layers r does not have in
// force; a layer r does not mention is missing too.
func (r Report) firstMissing(required []string) (Layer, bool) {
	for _, name := range required {
		i := slices.IndexFunc(r.Layers, func(l Layer) bool { return l.Name == name })
		if i < 0 {
			return Layer{Name: name}, true
		}
		if !r.Layers[i].Applied {
			return r.Layers[i], true
		}
	}
	return Layer{}, false
}

// Layer names, as they appear in a Report.
const (
	LayerInherited = "inherited_fds"
	LayerCaps      = "capabilities"
	LayerNoFile    = "rlimit_nofile"
	LayerCPU       = "rlimit_cpu"
	LayerFSize     = "rlimit_fsize"
	LayerMemory    = "memory_limit"
	LayerNoNewPrv  = "no_new_privs"
	LayerSeccomp   = "seccomp"
	LayerLandlock  = "landlock"
	LayerLLNet     = "landlock_net"
)

// uniquePorts is ports sorted, each once.
func uniquePorts(ports []uint16) []uint16 {
	out := slices.Clone(ports)
	slices.Sort(out)
	return slices.Compact(out)
}

// summarisePorts names sorted, unique ports briefly: every one when they
// are few, else the first few, how many more and the highest.
func summarisePorts(ports []uint16) string {
	const shown = 8
	var b strings.Builder
	for i, p := range ports {
		if i == shown && len(ports) > shown+1 {
			fmt.Fprintf(&b, " … %d more, up to %d", len(ports)-shown, ports[len(ports)-1])
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}
