package byteswap

import "testing"

// TestIntoWords runs TestInto without AVX2: the word-at-a-time code alone.
func TestIntoWords(t *testing.T) {
	defer func(old bool) { hasAVX2 = old }(hasAVX2)
	hasAVX2 = false
	TestInto(t)
}
