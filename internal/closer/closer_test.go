package closer

import (
	"errors"
	"testing"
)

func TestStack(t *testing.T) {
	var order []int
	e1, e3 := errors.New("one"), errors.New("three")
	s := Stack{
		func() error { order = append(order, 1); return e1 },
		func() error { order = append(order, 2); return nil },
		func() error { order = append(order, 3); return e3 },
	}
	err := s.Close()
	if !errors.Is(err, e1) || !errors.Is(err, e3) || len(order) != 3 || order[0] != 3 || order[2] != 1 {
		t.Errorf("got %v, order %v", err, order)
	}
	if s != nil || s.Close() != nil {
		t.Errorf("stack not emptied: %v", s)
	}
}

type closeErr struct{ err error }

func (c closeErr) Close() error { return c.err }

func TestInto(t *testing.T) {
	first, second := errors.New("first"), errors.New("close")
	for _, c := range []struct{ err, cerr, want error }{
		{nil, nil, nil},
		{nil, second, second},
		{first, second, first},
		{first, nil, first},
	} {
		err := c.err
		Into(closeErr{c.cerr}, &err)
		if err != c.want {
			t.Errorf("error %v, Close's %v: got %v, want %v", c.err, c.cerr, err, c.want)
		}
	}
}
