// Package libsvm reads and writes the LIBSVM / SVMlight text format of LIBSVM, liblinear,
// XGBoost and scikit-learn's load_svmlight_file / dump_svmlight_file:
//
//	<label>[,<label>...] [qid:<n>] <index>:<value> <index>:<value> ...  [# comment]
//
// Each non-empty line is one record: one sequence of one sample of each stream. A file reads
// as up to three streams:
//
//   - "labels": dense float64 of dimension 1, or, for multi-label files (a label list such as
//     "1,3", or lines with no label at all), a sparse multi-hot float64 stream whose indices
//     are the labels (non-negative integers) and whose values are 1. A file in which no line
//     has a label has no labels stream.
//   - "features": sparse float64; its dimension is ReaderOptions.Dim, or the largest index + 1.
//   - "qid": int64, dimension 1, when the lines carry qid:N.
//
// Indices are one-based, as LIBSVM defines the format, or zero-based; by default the base is
// detected as scikit-learn's load_svmlight_file(zero_based="auto") does: one-based when every
// index in the file is at least 1 (and the file has any), else zero-based. Indices within a
// line must increase. Everything after '#' on a line is a comment.
//
// The format has no header: Open scans the whole file once to find the records, the largest
// index, the base, qid and multi-label use (parsing indices and labels, skipping values), so
// `mlfeed info` costs a pass over the file; values are parsed when a chunk is read.
// Errors name the line and column.
package libsvm

import (
	"fmt"

	"github.com/mlfeed/mlfeed"
)

var (
	// ErrFormat is wrapped by errors for text that is not valid LIBSVM.
	ErrFormat = fmt.Errorf("libsvm: %w", mlfeed.ErrFormat)
	// ErrRange is wrapped by errors for indices or labels that do not fit their types.
	ErrRange = fmt.Errorf("libsvm: %w", mlfeed.ErrRange)
	// ErrUnsupported is wrapped by errors for data LIBSVM cannot hold (text, complex values,
	// streams other than labels, features and qid, sequences of several samples).
	ErrUnsupported = fmt.Errorf("libsvm: %w", mlfeed.ErrUnsupported)
	// ErrTooLarge is wrapped by errors for a dimension that the options or the index type
	// cannot hold.
	ErrTooLarge = fmt.Errorf("libsvm: %w", mlfeed.ErrTooLarge)
)

// Base says how feature indices are numbered in a file.
type Base uint8

const (
	// BaseAuto detects the base as scikit-learn's zero_based="auto" does: one-based when the
	// file has indices and all are at least 1, zero-based otherwise.
	BaseAuto Base = iota
	// BaseZero reads and writes indices as they are.
	BaseZero
	// BaseOne reads and writes indices one above the stream's (index 0 is an error).
	BaseOne
)

// String returns "auto", "zero" or "one".
func (b Base) String() string {
	switch b {
	case BaseZero:
		return "zero"
	case BaseOne:
		return "one"
	}
	return "auto"
}

// Labels says whether a file's labels are single values or lists.
type Labels uint8

const (
	// LabelsAuto reads a file as multi-label when a line has a label list ("1,3") or no label.
	LabelsAuto Labels = iota
	// LabelsSingle reads one float label per line, as load_svmlight_file(multilabel=False).
	LabelsSingle
	// LabelsMulti reads label lists, as load_svmlight_file(multilabel=True).
	LabelsMulti
)

// Stream names.
const (
	LabelsName   = "labels"
	FeaturesName = "features"
	QIDName      = "qid"
)
