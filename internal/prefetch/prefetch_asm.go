//go:build amd64 || arm64

package prefetch

// line prefetches the cache line holding *p into every cache level.
//
//go:noescape
func line(p *byte)
