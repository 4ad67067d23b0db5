package view_test

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/mlfeed/mlfeed/dataset"
	_ "github.com/mlfeed/mlfeed/format/all"
	"github.com/mlfeed/mlfeed/view"
)

// Serve a data set's page on the loopback address, as `mlfeed view` does.
func Example() {
	ctx := context.Background()
	names := []string{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}
	src, err := (&dataset.Spec{Paths: names}).Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // the loopback address only
	if err != nil {
		fmt.Println(err)
		return
	}
	token := view.NewToken()
	port := ln.Addr().(*net.TCPAddr).Port
	h, err := view.New([]view.DataSet{{Name: "MNIST test set", Format: "idx", Files: names, Source: src}},
		view.Options{Token: token, Port: port})
	if err != nil {
		fmt.Println(err)
		return
	}
	h.Start(ctx) // the statistics pass, in the background
	fmt.Printf("open http://127.0.0.1:%d/?token=%s\n", port, token)
	http.Serve(ln, h)
}
