// Package all registers every object-storage driver of mlfeed: s3://, gs:// and azblob://.
// The CLI and the Python package's library import it; a Go program that needs one service
// imports that driver alone.
package all

import (
	_ "github.com/mlfeed/mlfeed/storage/azblob" // azblob://
	_ "github.com/mlfeed/mlfeed/storage/gcs"    // gs://
	_ "github.com/mlfeed/mlfeed/storage/s3"     // s3://
)
