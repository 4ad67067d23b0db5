package cntkconfig_test

import (
	"fmt"

	"github.com/mlfeed/mlfeed/cntkconfig"
)

func Example() {
	text := `
train = [
    precision = "float"
    reader = [
        readerType = "CNTKTextFormatReader"
        file = "$DataDir$/Train-28x28_cntk_text.txt"
        randomize = true
        input = [
            features = [ dim = 784 ; format = "dense" ; alias = "x" ]
            labels = [ dim = 10 ; format = "dense" ; alias = "y" ]
        ]
    ]
]`
	cfg, err := cntkconfig.Parse("mnist.cntk", []byte(text), "DataDir=/data")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := cfg.Reader("train")
	if err != nil {
		fmt.Println(err)
		return
	}
	d := r.Deserializers[0]
	fmt.Println(d.Format, d.File, r.Randomize, r.RandomizationWindow)
	for _, in := range d.Options.Inputs {
		fmt.Println(in)
	}
	// Output:
	// ctf /data/Train-28x28_cntk_text.txt true 128
	// features (alias x) dense float32 784
	// labels (alias y) dense float32 10
}

// Open reads one of CNTK's own configuration files, a BrainScript network and all, with the
// data directory set as on CNTK's command line (`DataDir=/data/mnist`).
func ExampleOpen() {
	cfg, err := cntkconfig.Open("testdata/cntk/Examples/Image/Classification/ConvNet/BrainScript/ConvNet_MNIST.cntk",
		&cntkconfig.Options{Defines: map[string]string{"DataDir": "/data/mnist"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := cfg.Reader("trainNetwork")
	if err != nil {
		fmt.Println(err)
		return
	}
	d := r.Deserializers[0]
	fmt.Println(r.Section, d.Format, d.File)
	for _, in := range d.Options.Inputs {
		fmt.Println(in)
	}
	// Output:
	// trainNetwork.reader ctf /data/mnist/Train-28x28_cntk_text.txt
	// features dense float32 784
	// labels dense float32 10
}
