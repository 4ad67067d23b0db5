// Package closer holds what a reader releases on Close (its file, mapping and decoders), and
// keeps a deferred Close's error.
package closer

import (
	"errors"
	"io"
)

// Stack holds close functions in the order their resources were acquired.
type Stack []func() error

// Close calls the functions in reverse order, empties the stack and returns their errors
// joined (nil if none failed).
func (s *Stack) Close() error {
	var errs []error
	for i := len(*s) - 1; i >= 0; i-- {
		errs = append(errs, (*s)[i]())
	}
	*s = nil
	return errors.Join(errs...)
}

// Into closes c and, when *err is nil, sets it to Close's error: for a deferred Close whose
// error must not be lost (`defer closer.Into(src, &err)` in a function with a named error).
func Into(c io.Closer, err *error) {
	if cerr := c.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}
