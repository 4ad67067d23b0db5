//go:build amd64 || arm64

package prefetch

// line prefetches the cache line holding *p into every cache level.
//
//go:noescape
func line(p *byte)

// span prefetches every cache line holding one of the n bytes from p on (n > 0).
//
//go:noescape
func span(p *byte, n int)
