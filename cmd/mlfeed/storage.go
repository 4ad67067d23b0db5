//go:build !mlfeed_nostorage

package main

// The object-storage drivers (s3://, gs://, azblob://). A build with -tags mlfeed_nostorage
// leaves them out, and with them about 200 of the CLI's 600 packages: scripts/demo.sh builds
// so, since the demo reads only local data. Such a build says so for a URL (noDriverError)
// and in `mlfeed version`.
import _ "github.com/mlfeed/mlfeed/storage/all"
