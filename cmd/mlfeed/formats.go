package main

// The formats this build of mlfeed knows. Each import registers one with package format.
import (
	_ "github.com/mlfeed/mlfeed/format/binsparse"
	_ "github.com/mlfeed/mlfeed/format/cbf"
	_ "github.com/mlfeed/mlfeed/format/ctf"
	_ "github.com/mlfeed/mlfeed/format/idv"
	_ "github.com/mlfeed/mlfeed/format/idx"
	_ "github.com/mlfeed/mlfeed/format/mtx"
)
