package azblob_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	az "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	_ "github.com/mlfeed/mlfeed/storage/azblob"
	"github.com/mlfeed/mlfeed/storage/storagetest"
)

// The account and key every Azure Storage emulator serves (Microsoft's documented
// development credentials, not a secret).
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// azurite starts Azure Storage's emulator (npm's azurite, installed by scripts/setup.sh in
// internal/azurite) on a free loopback port, in memory, and returns its connection string. The
// test is skipped when it is not installed.
func azurite(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), "..", "..", "internal", "azurite", "node_modules", ".bin", "azurite-blob")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("azurite is not installed (scripts/setup.sh installs it: npm install in internal/azurite)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var log bytes.Buffer
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", fmt.Sprint(port), "--inMemoryPersistence", "--skipApiVersionCheck", "--silent")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("azurite did not listen: %s", log.String())
		}
	}
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=http://127.0.0.1:%d/%s;", devAccount, devKey, port, devAccount)
}

func TestConformance(t *testing.T) {
	cs := azurite(t)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", cs)
	c, err := az.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(context.Background(), "mlfeed-test", nil); err != nil {
		t.Fatal(err)
	}
	storagetest.Run(t, "azblob://mlfeed-test/conformance/")
}
