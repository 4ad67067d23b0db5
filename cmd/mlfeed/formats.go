package main

// The formats this build of mlfeed knows: all of them.
import _ "github.com/mlfeed/mlfeed/format/all"
