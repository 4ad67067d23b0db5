//go:build cgo

package main

import (
	"context"
	"fmt"

	"github.com/mlfeed/mlfeed/format"
	"github.com/mlfeed/mlfeed/internal/closer"
	"github.com/mlfeed/mlfeed/stats"
)

// opStats computes the statistics of a data set (mlfeed.stats in Python): the document of
// `mlfeed stats --json`.
func opStats(ctx context.Context, args []byte) (_ any, err error) {
	var a struct {
		openArgs
		Limit  int64  `json:"limit"`
		Sample int64  `json:"sample"`
		Seed   uint64 `json:"seed"`
		Bins   int    `json:"bins"`
		Top    int    `json:"top"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	switch {
	case a.Limit < 0, a.Sample < 0:
		return nil, fmt.Errorf("%w: limit and sample must not be negative", format.ErrUsage)
	case a.Bins < 0 || a.Bins > 10000:
		return nil, fmt.Errorf("%w: bins %d is out of range: it must be from 1 to 10000", format.ErrUsage, a.Bins)
	case a.Top < 0 || a.Top > 1000:
		return nil, fmt.Errorf("%w: top %d is out of range: it must be from 1 to 1000", format.ErrUsage, a.Top)
	}
	src, _, release, err := a.open(ctx, nil, false)
	if err != nil {
		return nil, err
	}
	defer closer.Into(&release, &err)
	return stats.Compute(ctx, src, &stats.Options{Limit: a.Limit, Sample: a.Sample, Seed: a.Seed, Bins: a.Bins, Top: a.Top})
}
