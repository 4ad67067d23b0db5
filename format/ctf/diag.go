package ctf

import (
	"fmt"
	"strconv"
)

// diagKind names one of the conditions CNTK's parser reports. Each has CNTK's message (for the
// trace log, reproduced byte for byte) and a plain description (for errors and validation).
type diagKind uint8

const (
	dUnexpectedPrefix diagKind = iota
	dInvalidNameChar
	dUnknownInput
	dNameTooLong
	dExhaustedName
	dDenseTooLong
	dSparseSuffix
	dExhaustedDense
	dExhaustedSparse
	dSparseIndexRange
	dIndexDelim
	dNoUint
	dUintOverflow
	dExhaustedUint
	dFloatStart
	dFloatSign
	dFloatE
	dFloatExpSign
	dExhaustedRow
	dFloatInvalidState
	dEmptyRow
	dRowTooMany
	dRowFailed
	dSeqExhausted
	dEmptyInput
	dTooManySamples
	dFewerSamples
	dFinished
	// A sparse index twice in one sample (CNTK keeps both; mlfeed refuses the sample).
	dSparseRepeated
	// Checks of the strict validation only (no CNTK message).
	dStrictDuplicate
	dStrictByte
)

// Message levels, as CNTK's traceLevel counts them.
const (
	levelError   = 0
	levelWarning = 1
	levelInfo    = 2
)

// diag is one reported condition at a byte offset of the file.
type diag struct {
	kind diagKind
	off  int64  // byte offset in the file
	c    byte   // the offending byte
	a, b int64  // numbers the message needs
	key  uint64 // the sequence id
	name string // an input name
	// own and ownPos give the position mlfeed's messages name, when it differs from CNTK's.
	own    bool
	ownPos int64
}

func (d *diag) level() int {
	switch d.kind {
	case dUnknownInput, dNameTooLong, dFinished:
		return levelInfo
	case dEmptyInput:
		return levelError
	}
	return levelWarning
}

// cntk returns CNTK's message for d, without the trailing newline.
func (d *diag) cntk(file string) string {
	at := "at offset " + strconv.FormatInt(d.off, 10) + " in the input file (" + file + ")"
	c := string([]byte{d.c})
	switch d.kind {
	case dUnexpectedPrefix:
		return "WARNING: Unexpected character('" + c + "') in place of a name prefix ('|') in an input name " + at + "."
	case dInvalidNameChar:
		return "WARNING: Input name prefix ('|') is followed by an invalid character ('" + c + "') " + at + "."
	case dUnknownInput:
		return "INFO: Skipping unknown input ('" + d.name + "') " + at + ". Input name '" + d.name + "' was not specified in the reader config section."
	case dNameTooLong:
		return fmt.Sprintf("INFO: Skipping unknown input %s. Input name (with the %d-character prefix '%s') exceeds the maximum expected length (%d).", at, d.a, d.name, d.a)
	case dExhaustedName:
		return "WARNING: Exhausted all input expected for the current sequence while reading an input name " + at + "."
	case dDenseTooLong:
		return fmt.Sprintf("WARNING: Dense sample (size = %d) %s exceeds the expected size (%d).", d.a, at, d.b)
	case dSparseSuffix:
		return fmt.Sprintf("WARNING: A dense sample %s has a sparse suffix (expected size = %d, actual size = %d).", at, d.b, d.a)
	case dExhaustedDense:
		return "WARNING: Exhausted all input expected for the current sequence while reading a dense sample " + at + "."
	case dExhaustedSparse:
		return "WARNING: Exhausted all input expected for the current sequence while reading a sparse sample " + at + "."
	case dSparseIndexRange:
		return fmt.Sprintf("WARNING: Sparse index value (%d) %s exceeds the maximum expected value (%d).", uint64(d.a), at, d.b)
	case dIndexDelim:
		return fmt.Sprintf("WARNING: Unexpected character('%s') in place of the index delimiter (':') after a sparse value index (%d) %s.", c, uint64(d.a), at)
	case dNoUint:
		return "WARNING: Expected a uint64 value, but none found " + at + "."
	case dUintOverflow:
		return "WARNING: Overflow while reading a uint64 value " + at + "."
	case dExhaustedUint:
		return "WARNING: Exhausted all input expected for the current sequence while reading a uint64 value " + at + "."
	case dFloatStart:
		return "WARNING: Unexpected character ('" + c + "') in a floating point value " + at + "."
	case dFloatSign:
		return "WARNING: A sign symbol is followed by an invalid character('" + c + "') in a floating point value " + at + "."
	case dFloatE:
		return "WARNING: An exponent symbol is followed by an invalid character('" + c + "') in a floating point value " + at + "."
	case dFloatExpSign:
		return "WARNING: An exponent sign symbol followed by an unexpected character('" + c + "') in a floating point value " + at + "."
	case dExhaustedRow:
		return "WARNING: Exhausted all input expected for the current sequence while reading an input row " + at + ". Possibly, a trailing newline is missing."
	case dFloatInvalidState:
		return "WARNING: Reached an invalid state while reading a floating point value " + at + "."
	case dEmptyRow:
		return "WARNING: Empty input row " + at + "."
	case dRowTooMany:
		return fmt.Sprintf("WARNING: Input row %s contains more samples than expected (%d vs. %d).", at, d.a, d.b)
	case dRowFailed:
		return fmt.Sprintf("WARNING: Could not read a row (# %d) while loading sequence (id = %d) %s.", d.a, d.key, at)
	case dSeqExhausted:
		return fmt.Sprintf("WARNING: Exhausted all input expected for the current sequence (id = %d) %s, but only read %d out of %d expected rows.", d.key, at, d.a, d.b)
	case dEmptyInput:
		return fmt.Sprintf("ERROR: Input ('%s') is empty in sequence (id = %d) %s.", d.name, d.key, at)
	case dTooManySamples:
		return fmt.Sprintf("WARNING: Input ('%s') contains more samples than expected (%d vs. %d) for sequence (id = %d) %s.", d.name, d.a, d.b, d.key, at)
	case dFewerSamples:
		return fmt.Sprintf("WARNING: Number of samples for sequence (id = %d) %s is less than expected (%d vs. %d).", d.key, at, d.a, d.b)
	case dSparseRepeated:
		return fmt.Sprintf("WARNING: Sparse index value (%d) %s repeats an index of the same sample.", uint64(d.a), at)
	case dFinished:
		return fmt.Sprintf("INFO: Finished loading sequence (id = %d) %s, successfully read %d out of expected %d rows.", d.key, at, d.a, d.b)
	}
	return d.text()
}

// text describes d plainly, saying what was expected.
func (d *diag) text() string {
	c := strconv.QuoteRune(rune(d.c))
	if d.c >= 0x80 {
		c = fmt.Sprintf("byte 0x%02X", d.c)
	}
	switch d.kind {
	case dUnexpectedPrefix:
		return "unexpected " + c + " where a sample ('|' and an input name) should start"
	case dInvalidNameChar:
		return "'|' is followed by " + c + ", not an input name"
	case dUnknownInput:
		return fmt.Sprintf("input name %q is not declared", d.name)
	case dNameTooLong:
		return fmt.Sprintf("input name starting %q is longer than any declared input name", d.name)
	case dExhaustedName:
		return "the sequence ends inside an input name"
	case dDenseTooLong:
		return fmt.Sprintf("dense sample has %d values, more than the dimension %d", d.a, d.b)
	case dSparseSuffix:
		return fmt.Sprintf("dense sample has %d values, fewer than the dimension %d", d.a, d.b)
	case dExhaustedDense, dExhaustedSparse, dExhaustedUint, dExhaustedRow:
		return "the file ends without a final newline"
	case dSparseIndexRange:
		return fmt.Sprintf("sparse index %d is not below the dimension %d", uint64(d.a), d.b+1)
	case dIndexDelim:
		return fmt.Sprintf("expected ':' after the sparse index %d, found %s", uint64(d.a), c)
	case dNoUint:
		return "expected a sparse index (digits), found " + c
	case dUintOverflow:
		return "sparse index overflows 64 bits"
	case dFloatStart:
		return "bad number: expected a digit or a sign, found " + c
	case dFloatSign:
		return "bad number: expected a digit after the sign, found " + c
	case dFloatE:
		return "bad number: expected a digit or a sign after the exponent letter, found " + c
	case dFloatExpSign:
		return "bad number: expected a digit after the exponent sign, found " + c
	case dFloatInvalidState:
		return "bad number: it ends after a sign or an exponent letter"
	case dEmptyRow:
		return "the line holds no valid sample"
	case dRowTooMany:
		return fmt.Sprintf("the line holds %d samples for %d inputs", d.a, d.b)
	case dRowFailed:
		return fmt.Sprintf("line %d of sequence %d could not be read", d.a, d.key)
	case dSeqExhausted:
		return fmt.Sprintf("sequence %d: only %d of its %d lines could be read", d.key, d.a, d.b)
	case dEmptyInput:
		return fmt.Sprintf("input %q has no sample in sequence %d (every input needs one in every sequence)", d.name, d.key)
	case dTooManySamples:
		return fmt.Sprintf("input %q has %d samples in sequence %d, which spans %d lines: an input appears twice on a line", d.name, d.a, d.key, d.b)
	case dFewerSamples:
		return fmt.Sprintf("sequence %d has %d samples but spans %d lines", d.key, d.a, d.b)
	case dSparseRepeated:
		return fmt.Sprintf("sparse index %d appears twice in the sample (first at column %d); an index may appear once per sample (CNTK keeps both values, and packed dense the later one wins)", uint64(d.a), d.b)
	case dFinished:
		return fmt.Sprintf("sequence %d read: %d of %d lines", d.key, d.a, d.b)
	case dStrictDuplicate:
		return fmt.Sprintf("input %q appears twice on the line", d.name)
	case dStrictByte:
		return fmt.Sprintf("unexpected control or non-ASCII byte 0x%02X outside a comment", d.c)
	}
	return "malformed input"
}
