package inflate

import (
	"bytes"
	stdflate "compress/flate"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
)

// samples returns inputs of different shapes: text-like, runs, random, tiny, empty.
func samples() [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"alpha ", "beta ", "gamma ", "delta ", "x", "\n", "0.125 ", "idv "}
	var text []byte
	for len(text) < 300000 {
		text = append(text, words[rng.IntN(len(words))]...)
	}
	runs := make([]byte, 200000)
	for i := range runs {
		if rng.IntN(40) == 0 {
			runs[i] = byte(rng.IntN(4))
		}
	}
	random := make([]byte, 100000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	mixed := append(append(append([]byte{}, text[:50000]...), random[:70000]...), runs[:90000]...)
	return [][]byte{text, runs, random, mixed, []byte("a"), []byte("abcabcabcabcabcabcabcabc"), {}}
}

func compress(t testing.TB, p []byte, level int, std bool) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	if std {
		w, err = stdflate.NewWriter(&buf, level)
	} else {
		w, err = flate.NewWriter(&buf, level)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Several writes and a flush, so that streams hold several blocks and a sync marker.
	half := len(p) / 2
	w.Write(p[:half])
	if f, ok := w.(interface{ Flush() error }); ok {
		f.Flush()
	}
	w.Write(p[half:])
	w.Close()
	return buf.Bytes()
}

func TestDecompress(t *testing.T) {
	for si, p := range samples() {
		for _, std := range []bool{true, false} {
			for _, level := range []int{-2, 0, 1, 2, 5, 6, 9} {
				z := compress(t, p, level, std)
				got := make([]byte, len(p))
				if err := Decompress(got, z); err != nil {
					t.Fatalf("sample %d level %d std %v: %v", si, level, std, err)
				}
				if !bytes.Equal(got, p) {
					t.Fatalf("sample %d level %d std %v: output differs", si, level, std)
				}
				// A shorter destination takes a prefix; a longer one is an error.
				if len(p) > 10 {
					short := make([]byte, len(p)/3)
					if err := Decompress(short, z); err != nil || !bytes.Equal(short, p[:len(short)]) {
						t.Fatalf("sample %d level %d: prefix: %v", si, level, err)
					}
				}
				if err := Decompress(make([]byte, len(p)+1), z); err != ErrShort {
					t.Fatalf("sample %d level %d: longer destination: %v, want ErrShort", si, level, err)
				}
				if len(z) > 4 && len(p) > 0 {
					if err := Decompress(make([]byte, len(p)), z[:len(z)/2]); err == nil {
						t.Fatalf("sample %d level %d: truncated stream accepted", si, level)
					}
				}
			}
		}
	}
}

// FuzzDecompress compares the decoder with compress/flate on arbitrary input.
func FuzzDecompress(f *testing.F) {
	for _, p := range samples() {
		if len(p) > 5000 {
			p = p[:5000]
		}
		f.Add(compress(f, p, 6, true), uint16(len(p)))
		f.Add(compress(f, p, 1, false), uint16(len(p)))
	}
	for _, p := range []string{"", "a", "abababababab", "hello, hello, hello world", "\x00\x00\x00\x00\x00\x00\x00\x01"} {
		for _, level := range []int{-2, 0, 1, 9} {
			f.Add(compress(f, []byte(p), level, true), uint16(len(p)))
		}
	}
	f.Fuzz(func(t *testing.T, z []byte, n uint16) {
		got := make([]byte, n)
		err := Decompress(got, z)
		want, werr := io.ReadAll(io.LimitReader(stdflate.NewReader(bytes.NewReader(z)), int64(n)))
		if err == nil {
			if len(want) < int(n) && werr == nil {
				t.Fatalf("decoded %d bytes, compress/flate only %d", n, len(want))
			}
			if !bytes.Equal(got[:len(want)], want) {
				t.Fatalf("output differs from compress/flate")
			}
		} else if werr == nil && len(want) == int(n) && err != ErrCorrupt {
			t.Fatalf("compress/flate decodes %d bytes, we fail: %v", n, err)
		}
	})
}

func BenchmarkDecompress(b *testing.B) {
	for _, name := range []string{"text", "runs"} {
		p := samples()[map[string]int{"text": 0, "runs": 1}[name]]
		z := compress(b, p, 6, false)
		dst := make([]byte, len(p))
		b.Run(name+"/inflate", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				if err := Decompress(dst, z); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/klauspost", func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				io.ReadFull(flate.NewReader(bytes.NewReader(z)), dst)
			}
		})
	}
}
