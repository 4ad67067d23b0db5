// Package cputime tells how much CPU time the process has used, user and system together:
// what benchmarks report beside the wall clock (the fairer figure on a loaded machine).
package cputime

// Seconds returns Used in seconds.
func Seconds() float64 { return Used().Seconds() }
