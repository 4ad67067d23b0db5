package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mlfeed/mlfeed/storage"
)

// noDriverError rewrites, for the command line, storage's error for a URL whose driver is not
// in the binary (a build with -tags mlfeed_nostorage, as scripts/demo.sh makes): storage's
// message tells a Go programmer which package to import, a user of the CLI needs to know
// that this build has no object-storage drivers and how to get one that has them. The error
// still wraps storage.ErrNoDriver; other errors are returned as they are.
func noDriverError(err error) error {
	var nd *storage.NoDriverError
	if err == nil || !errors.As(err, &nd) {
		return err
	}
	// storage's message, in what wraps it, gives way to the CLI's: without the package to
	// import, and saying so where this build has no drivers at all.
	msg := fmt.Sprintf("%s: %v %s://", nd.Name, storage.ErrNoDriver, nd.Scheme)
	if len(storage.Schemes()) == 0 {
		msg += " in this build of mlfeed: it was built without object-storage drivers (-tags mlfeed_nostorage, as scripts/demo.sh builds it)"
	}
	return &noDriver{msg: strings.Replace(err.Error(), nd.Error(), msg, 1), err: err}
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
