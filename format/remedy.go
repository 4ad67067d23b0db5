package format

import "errors"

// Remedies are the conversions that let a writer take data it refuses as it is. A writer
// marks such an error with one (Needs); each front end then names it in its own words (the
// CLI's flags, Python's arguments), while the error's text stays the library's.
var (
	// ErrNeedsDense marks a sparse stream the format holds only densely (convert.Options.Densify).
	ErrNeedsDense = errors.New("store the sparse stream densely")
	// ErrNeedsType marks an element type the format cannot hold (convert.Options.Type).
	ErrNeedsType = errors.New("convert the element type")
	// ErrNeedsStreams marks data the output can hold only some of the streams of: a format of
	// one stream, or a stream the format cannot hold beside others it can
	// (convert.Options.Streams).
	ErrNeedsStreams = errors.New("choose the streams")
)

// Needs returns err marked with remedy (one of the ErrNeeds... above): errors.Is finds both,
// and the message is err's.
func Needs(err, remedy error) error { return &needsError{err, remedy} }

type needsError struct{ err, remedy error }

func (e *needsError) Error() string   { return e.err.Error() }
func (e *needsError) Unwrap() []error { return []error{e.err, e.remedy} }
