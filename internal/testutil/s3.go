package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// S3Bucket is the bucket S3Server creates.
const S3Bucket = "mlfeed-test"

// S3Server starts Versity's S3 gateway (versitygw, with its POSIX backend in a temporary
// directory) on a free loopback port for the test, points the AWS SDK at it through the
// standard environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...: child processes inherit
// them) and returns the bucket's URL, "s3://mlfeed-test", and the directory that holds the
// bucket's objects as files. The test is skipped when versitygw is not installed (CI installs
// it: scripts/setup.sh). The server stops when the test ends.
func S3Server(tb testing.TB) (bucketURL, dir string) {
	tb.Helper()
	bin, err := exec.LookPath("versitygw")
	if err != nil {
		gopath, _ := exec.Command("go", "env", "GOPATH").Output()
		bin = filepath.Join(strings.TrimSpace(string(gopath)), "bin", "versitygw")
		if _, err := os.Stat(bin); err != nil {
			tb.Skip("versitygw is not installed (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
		}
	}
	root := tb.TempDir()
	if err := os.Mkdir(filepath.Join(root, S3Bucket), 0o755); err != nil {
		tb.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--access", "mlfeedtest", "--secret", "mlfeedtestsecret", "--port", addr, "posix", root)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("versitygw did not listen on %s: %s", addr, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":          "http://" + addr,
		"AWS_ACCESS_KEY_ID":         "mlfeedtest",
		"AWS_SECRET_ACCESS_KEY":     "mlfeedtestsecret",
		"AWS_REGION":                "us-east-1",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		tb.Setenv(k, v)
	}
	return fmt.Sprintf("s3://%s", S3Bucket), filepath.Join(root, S3Bucket)
}
