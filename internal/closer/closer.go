// Package closer holds what a reader releases on Close: its file, mapping and decoders.
package closer

import "errors"

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
