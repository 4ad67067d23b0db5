package main

import (
	"errors"
	"strings"

	"github.com/mlfeed/mlfeed/storage"
)

// noDriverError rewrites, for the command line, storage's error for a URL whose driver is not
// in the binary (a build with -tags mlfeed_nostorage, as scripts/demo.sh makes): storage's
// message tells a Go programmer which package to import, a user of the CLI needs to know
// that this build has no object-storage drivers and how to get one that has them. The error
// still wraps storage.ErrNoDriver; other errors are returned as they are.
func noDriverError(err error) error {
	if err == nil || !errors.Is(err, storage.ErrNoDriver) {
		return err
	}
	msg := err.Error()
	// In place of storage's advice for a Go program (` in this program (import _ "PACKAGE")`),
	// or after the message if it has none.
	this := ""
	if len(storage.Schemes()) == 0 {
		this = " in this build of mlfeed: it was built without object-storage drivers (-tags mlfeed_nostorage, as scripts/demo.sh builds it)"
	}
	i := strings.Index(msg, " in this program (import _ ")
	j := -1
	if i >= 0 {
		j = strings.IndexByte(msg[i:], ')')
	}
	if j >= 0 {
		msg = msg[:i] + this + msg[i+j+1:]
	} else {
		msg += this
	}
	return &noDriver{msg: msg, err: err}
}

// noDriverHint says how to get a CLI with the object-storage drivers.
const noDriverHint = "a build with s3://, gs:// and azblob://: `go build -o mlfeed ./cmd/mlfeed` in the source tree, `go install github.com/mlfeed/mlfeed/cmd/mlfeed@latest`, or a release binary"

// noDriver is noDriverError's error: its own message, storage's error beneath.
type noDriver struct {
	msg string
	err error
}

func (e *noDriver) Error() string { return e.msg }
func (e *noDriver) Unwrap() error { return e.err }
