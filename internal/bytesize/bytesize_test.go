package bytesize

import "testing"

// Sizes read as GNU coreutils read them.
func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "0": 0, "65536": 65536, "100B": 100, "1K": 1024, "1k": 1024, "1KiB": 1024, "1KB": 1000,
		"64M": 64 << 20, "64MiB": 64 << 20, "64mib": 64 << 20, "64MB": 64e6, "2G": 2 << 30, "1GB": 1e9,
		"3T": 3 << 40, "1TB": 1e12, "1P": 1 << 50, "1PiB": 1 << 50, " 5G ": 5 << 30,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "lots", "1.5G", "1MK", "2P", "1025T", "1 X", "K", "9223372036854775807", "/data/cache"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}
