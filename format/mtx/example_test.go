package mtx_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mlfeed/mlfeed/format/binsparse"
	"github.com/mlfeed/mlfeed/format/mtx"
)

// Reading a symmetric Matrix Market file: the stored lower triangle becomes a COOR matrix with
// the structure symmetric_lower; writing it as CSR keeps the structure.
func Example() {
	in := `%%MatrixMarket matrix coordinate real symmetric
% a small example
3 3 3
1 1 2.5
3 1 -1
2 2 4
`
	m, err := mtx.Read(strings.NewReader(in), "example.mtx")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Format(), m.Descriptor.Structure, m.Descriptor.ValueType(), m.Arrays["indices_0"].Type)
	csr, err := m.Convert(binsparse.CSR, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := mtx.Write(os.Stdout, csr, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// COOR symmetric_lower float64 uint8
	// %%MatrixMarket matrix coordinate real symmetric
	// % a small example
	// 3 3 3
	// 1 1 2.5
	// 2 2 4
	// 3 1 -1
}
