package libsvm

import (
	"io"
	"strconv"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// ReadParams are the reader options (--opt key=value).
var ReadParams = []format.Param{
	{Name: "zero_based", Doc: "true, false or auto (default: auto, scikit-learn's rule: one-based when every index is at least 1)"},
	{Name: "multilabel", Doc: "true, false or auto (default: auto, multi-label when a line has a label list or no label)"},
	{Name: "dim", Doc: "the features' dimension (default: the largest index + 1; a larger index is an error)"},
	{Name: "chunk_size", Doc: "text bytes per chunk, whole lines (default 4194304)"},
	{Name: "mmap", Doc: "false reads the file into memory instead of mapping it (default true)"},
}

// WriteParams are the writer options (--write-opt key=value).
var WriteParams = []format.Param{
	{Name: "zero_based", Doc: "true writes feature indices as they are (default false: one above, LIBSVM's one-based numbering)"},
	{Name: "dense_features", Doc: "true writes a dense features stream as its non-zero values (it reads back sparse; default false: refused)"},
	{Name: "labels", Doc: "the stream written as the labels (default \"labels\")"},
	{Name: "features", Doc: "the stream written as the features (default \"features\")"},
	{Name: "qid", Doc: "the stream written as qid:N (default \"qid\")"},
}

func init() {
	format.Register(format.Format{
		Name:        "libsvm",
		Extensions:  []string{".svm", ".libsvm", ".svmlight"},
		ReadParams:  ReadParams,
		WriteParams: WriteParams,
		Open: func(name string, o *format.Options) (mlfeed.Source, error) {
			opts, err := readerOptions(o.Params)
			if err != nil {
				return nil, err
			}
			return Open(name, opts)
		},
		Streamable: true,
		Create: func(out io.Writer, schema mlfeed.Schema, w *format.WriteOptions) (mlfeed.Sink, error) {
			opts, err := writerOptions(w.Params)
			if err != nil {
				return nil, err
			}
			return NewWriter(out, schema, opts)
		},
	})
}

// readerOptions reads the parameters zero_based, multilabel, dim, chunk_size and mmap.
func readerOptions(params map[string]string) (*ReaderOptions, error) {
	params, err := format.NormalizeParams("libsvm", params, ReadParams)
	if err != nil {
		return nil, err
	}
	o := &ReaderOptions{}
	switch v := params["zero_based"]; v {
	case "", "auto":
	case "true", "1":
		o.Base = BaseZero
	case "false", "0":
		o.Base = BaseOne
	default:
		return nil, format.UsageErrorf("libsvm: zero_based=%s: want true, false or auto", v)
	}
	switch v := params["multilabel"]; v {
	case "", "auto":
	case "true", "1":
		o.Labels = LabelsMulti
	case "false", "0":
		o.Labels = LabelsSingle
	default:
		return nil, format.UsageErrorf("libsvm: multilabel=%s: want true, false or auto", v)
	}
	for key, dst := range map[string]*int{"dim": &o.Dim, "chunk_size": &o.ChunkSize} {
		if v, ok := params[key]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > maxIndex+1 {
				return nil, format.UsageErrorf("libsvm: %s=%s: want a positive integer", key, v)
			}
			*dst = n
		}
	}
	if v, ok := params["mmap"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, format.UsageErrorf("libsvm: mmap=%s: want true or false", v)
		}
		o.NoMmap = !b
	}
	return o, nil
}

// writerOptions reads the parameters zero_based, dense_features, labels, features and qid.
func writerOptions(params map[string]string) (*WriterOptions, error) {
	params, err := format.NormalizeParams("libsvm", params, WriteParams)
	if err != nil {
		return nil, err
	}
	o := &WriterOptions{Labels: params["labels"], Features: params["features"], QID: params["qid"]}
	for key, dst := range map[string]*bool{"zero_based": &o.ZeroBased, "dense_features": &o.DenseFeatures} {
		if v, ok := params[key]; ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, format.UsageErrorf("libsvm: %s=%s: want true or false", key, v)
			}
			*dst = b
		}
	}
	return o, nil
}
