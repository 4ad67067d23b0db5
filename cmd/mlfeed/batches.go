package main

import (
	"os"
	"strings"

	"github.com/mlfeed/mlfeed/cntkconfig"
	"github.com/mlfeed/mlfeed/format"
)

// splitConfig splits --config FILE[:SECTION]. The suffix is a section only when FILE:SECTION
// itself is not an existing file and FILE is.
func splitConfig(arg string) (file, section string) {
	if _, err := os.Stat(arg); err == nil {
		return arg, ""
	}
	if i := strings.LastIndexByte(arg, ':'); i > 0 {
		if _, err := os.Stat(arg[:i]); err == nil {
			return arg[:i], arg[i+1:]
		}
	}
	return arg, ""
}

// cntkReader parses the reader section that --config names, or returns nil without --config.
func (f *inputFlags) cntkReader() (*cntkconfig.Reader, error) {
	if f.config == "" {
		return nil, nil
	}
	file, section := splitConfig(f.config)
	cfg, err := cntkconfig.ParseFile(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, usageErr("--config: %v", err)
		}
		return nil, usageErr("%v", err)
	}
	r, err := cfg.Reader(section)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return r, nil
}

// applyConfig fills o's Inputs and Params from --config. Inputs come from every deserializer
// of the section, unless --input declares streams; --opt values override the section's.
func (f *inputFlags) applyConfig(o *format.Options) error {
	r, err := f.cntkReader()
	if r == nil {
		return err
	}
	o.Config, _ = splitConfig(f.config)
	for _, d := range r.Deserializers {
		if len(f.inputs) == 0 {
			o.Inputs = append(o.Inputs, d.Options.Inputs...)
		}
		o.Params = mergeParams(o.Params, d.Options.Params)
	}
	return nil
}

// mergeParams returns base with over's keys set; either may be nil.
func mergeParams(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	if base == nil {
		base = map[string]string{}
	}
	for k, v := range over {
		base[k] = v
	}
	return base
}
