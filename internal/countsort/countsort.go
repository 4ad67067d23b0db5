// Package countsort orders entries by small integer keys in linear time, as the sparse formats
// need to turn coordinate lists into row- or column-major order.
package countsort

// Order returns order (nil means 0, 1, ..., len(key)-1) stably sorted by key[order[k]], whose
// values lie in [0, bound). Applying it twice, minor key first, sorts by (major, minor).
func Order(order []int64, key []int64, bound int64) []int64 {
	count := make([]int64, bound+1)
	for _, k := range key {
		count[k+1]++
	}
	for i := int64(1); i <= bound; i++ {
		count[i] += count[i-1]
	}
	out := make([]int64, len(key))
	for i := range key {
		p := int64(i)
		if order != nil {
			p = order[i]
		}
		k := key[p]
		out[count[k]] = p
		count[k]++
	}
	return out
}
