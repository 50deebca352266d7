package ctl

import (
	"google.golang.org/protobuf/proto"
)

// perNode reads each of ids with get (one RPC a node): a JSON line per
// reply with -o json, else a table of header with the rows each reply
// gives, flushed also when a call fails half-way. inBand turns a reply
// into its in-band failure (nil when it succeeded). A failed call stops
// the loop; the first failure is the result.
func perNode[Resp proto.Message](a *app, ids []string, header []string,
	get func(id string) (Resp, error), rows func(id string, r Resp) [][]string, inBand func(id string, r Resp) error) error {
	var errs []error
	t := newTable(a.streams.Out, header...)
	if a.output != "json" {
		defer t.flush() // also what was read before an error
	}
	for _, id := range ids {
		resp, err := get(id)
		if err != nil {
			return firstFailure(append(errs, err))
		}
		if a.output == "json" {
			if err := writeJSONLine(a.streams.Out, resp); err != nil {
				return err
			}
		} else {
			for _, r := range rows(id, resp) {
				t.row(r...)
			}
		}
		errs = append(errs, inBand(id, resp))
	}
	return firstFailure(errs)
}
