package format_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mlfeed/mlfeed"
	"github.com/mlfeed/mlfeed/format"
)

// A remedy marks an error without changing its text or hiding its sentinel.
func TestNeeds(t *testing.T) {
	base := fmt.Errorf("%w: stream %q is sparse", mlfeed.ErrUnsupported, "x")
	err := fmt.Errorf("writing: %w", format.Needs(base, format.ErrNeedsDense))
	if err.Error() != "writing: "+base.Error() {
		t.Errorf("message %q", err)
	}
	if !errors.Is(err, mlfeed.ErrUnsupported) || !errors.Is(err, format.ErrNeedsDense) || errors.Is(err, format.ErrNeedsType) {
		t.Errorf("%v: the sentinel and the remedy, and no other", err)
	}
	both := format.Needs(format.Needs(base, format.ErrNeedsDense), format.ErrNeedsStreams)
	if !errors.Is(both, format.ErrNeedsDense) || !errors.Is(both, format.ErrNeedsStreams) {
		t.Errorf("two remedies: %v", both)
	}
}
