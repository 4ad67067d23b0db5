package countsort

import (
	"slices"
	"testing"
)

func TestOrderIsStableAndComposes(t *testing.T) {
	rows := []int64{2, 0, 2, 1, 0}
	cols := []int64{1, 3, 0, 2, 3}
	if got := Order(nil, rows, 3); !slices.Equal(got, []int64{1, 4, 3, 0, 2}) {
		t.Fatalf("by row: %v", got)
	}
	// Minor key first, then major: row-major order, ties kept in input order.
	if got := Order(Order(nil, cols, 4), rows, 3); !slices.Equal(got, []int64{1, 4, 3, 2, 0}) {
		t.Fatalf("row-major: %v", got)
	}
	if got := Order(nil, nil, 0); len(got) != 0 {
		t.Fatalf("empty: %v", got)
	}
}
