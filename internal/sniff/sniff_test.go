package sniff

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

func TestGunzip(t *testing.T) {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte("hello"))
	w.Close()
	for _, tc := range []struct {
		in []byte
		gz bool
	}{{z.Bytes(), true}, {[]byte("hello"), false}, {[]byte{0x1f}, false}, {nil, false}} {
		if IsGzip(tc.in) != tc.gz {
			t.Errorf("IsGzip(%x) = %v", tc.in, !tc.gz)
		}
		rc, gz, err := Gunzip(bytes.NewReader(tc.in))
		if err != nil || gz != tc.gz {
			t.Fatalf("Gunzip(%x): gz %v, err %v", tc.in, gz, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		want := tc.in
		if tc.gz {
			want = []byte("hello")
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Gunzip(%x) read %q, %v", tc.in, got, err)
		}
	}
	if _, gz, err := Gunzip(bytes.NewReader([]byte{0x1f, 0x8b, 0})); err == nil || !gz {
		t.Errorf("a broken gzip header: gz %v, err %v", gz, err)
	}
}
