//go:build !linux

package sandbox

import "runtime"

// Confine applies nothing outside Linux: every layer is reported missing.
func Confine(opts ConfineOptions) (Report, error) {
	var r Report
	for _, name := range []string{LayerInherited, LayerNoFile, LayerCPU, LayerFSize, LayerMemory, LayerNoNewPrv, LayerSeccomp, LayerLandlock, LayerLLNet} {
		r.add(name, false, "not implemented on %s", runtime.GOOS)
	}
	return r, nil
}
