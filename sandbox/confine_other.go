//go:build !linux

package sandbox

import "runtime"

// Confines: Confine applies no layer outside Linux (see confine_linux.go).
const Confines = false

// RequiredLayers are the layers Confine applies on Linux; none is applied
// here, so requiring confinement refuses to crawl.
func RequiredLayers() []string {
	return []string{LayerInherited, LayerCaps, LayerNoFile, LayerCPU, LayerFSize, LayerMemory, LayerNoNewPrv, LayerSeccomp, LayerLandlock}
}

// Confine applies nothing outside Linux: every layer is reported missing.
func Confine(opts ConfineOptions) (Report, error) {
	var r Report
	for _, name := range []string{LayerInherited, LayerCaps, LayerNoFile, LayerCPU, LayerFSize, LayerMemory, LayerNoNewPrv, LayerSeccomp, LayerLandlock, LayerLLNet} {
		r.add(name, false, "not implemented on %s", runtime.GOOS)
	}
	return r, nil
}
