package s3_test

import (
	"testing"

	"github.com/mlfeed/mlfeed/internal/testutil"
	_ "github.com/mlfeed/mlfeed/storage/s3"
	"github.com/mlfeed/mlfeed/storage/storagetest"
)

// The driver against Versity's S3 gateway on the loopback address.
func TestConformance(t *testing.T) {
	bucket, _ := testutil.S3Server(t)
	storagetest.Run(t, bucket+"/conformance/")
}
