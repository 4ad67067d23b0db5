package binsparse_test

import (
	"fmt"
	"log"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format/binsparse"
)

// A 3x4 CSR matrix built from its arrays, converted to COO and to a dense row-major matrix.
func Example() {
	ptr := mlfeed.NewBuffer(mlfeed.Uint8, 4)
	copy(ptr.Bytes, []byte{0, 2, 2, 3})
	idx := mlfeed.NewBuffer(mlfeed.Uint8, 3)
	copy(idx.Bytes, []byte{1, 3, 0})
	vals := mlfeed.NewBuffer(mlfeed.Float64, 3)
	copy(vals.Float64s(), []float64{1.5, -2, 4})

	m, err := binsparse.New(binsparse.CSR, []int64{3, 4}, map[string]mlfeed.Buffer{
		"pointers_to_1": ptr, "indices_1": idx, "values": vals}, false)
	if err != nil {
		log.Fatal(err)
	}
	coo, err := m.Convert(binsparse.COOR, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(coo.Format(), coo.Arrays["indices_0"].Uint8s(), coo.Arrays["indices_1"].Uint8s(), coo.Values().Float64s())
	dense, _ := m.Convert(binsparse.DMATR, nil)
	fmt.Println(dense.Values().Float64s())
	js, _ := m.Descriptor.Marshal()
	fmt.Println(string(js))
	// Output:
	// COOR [0 0 2] [1 3 0] [1.5 -2 4]
	// [0 1.5 0 -2 0 0 0 0 4 0 0 0]
	// {
	//   "binsparse": {
	//     "version": "0.1",
	//     "format": "CSR",
	//     "shape": [
	//       3,
	//       4
	//     ],
	//     "number_of_stored_values": 3,
	//     "data_types": {
	//       "values": "float64",
	//       "pointers_to_1": "uint8",
	//       "indices_1": "uint8"
	//     }
	//   }
	// }
}
