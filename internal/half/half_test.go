package half

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
)

// Every float16 converts to float32 and back exactly; floats between are refused.
func TestRoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := ToFloat32(uint16(h))
		back, ok := FromFloat32(f)
		if !ok || back != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x %v", h, f, back, ok)
		}
	}
	for _, f := range []float32{0.1, 65520, 1e-8, 1 + 1.0/2048} {
		if _, ok := FromFloat32(f); ok {
			t.Errorf("%v taken as a float16", f)
		}
	}
}

// Widen gives numpy's float32 for every float16 bit pattern, NaN payloads included, in both
// byte orders, also in place (src the second half of dst); AppendWiden likewise.
func TestWidenAsNumpy(t *testing.T) {
	py := testutil.Python(t, "numpy")
	out, err := exec.Command(py, "-c", `import hashlib, numpy as np
print(hashlib.sha256(np.arange(65536, dtype="<u2").view("<f2").astype("<f4").tobytes()).hexdigest())`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(out))
	le, be := make([]byte, 1<<17), make([]byte, 1<<17)
	for h := range 1 << 16 {
		binary.LittleEndian.PutUint16(le[2*h:], uint16(h))
		binary.BigEndian.PutUint16(be[2*h:], uint16(h))
	}
	inPlace := func(src []byte, bigEndian bool) []byte {
		dst := make([]byte, 2*len(src))
		copy(dst[len(src):], src)
		Widen(dst, dst[len(src):], bigEndian)
		return dst
	}
	for name, got := range map[string][]byte{
		"little": widen(le, false), "big": widen(be, true),
		"append":          AppendWiden(nil, le),
		"little in place": inPlace(le, false), "big in place": inPlace(be, true),
	} {
		if s := sha256.Sum256(got); hex.EncodeToString(s[:]) != want {
			t.Errorf("%s: differs from numpy's astype(float32)", name)
		}
	}
}

func widen(src []byte, bigEndian bool) []byte {
	dst := make([]byte, 2*len(src))
	Widen(dst, src, bigEndian)
	return dst
}

func BenchmarkWiden(b *testing.B) {
	src, dst := make([]byte, 1<<20), make([]byte, 2<<20)
	b.SetBytes(int64(len(src)))
	for range b.N {
		Widen(dst, src, false)
	}
}
