package manifest

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched by every refusal of Parse; the gRPC edge answers it
// with INVALID_ARGUMENT.
var ErrInvalid = errors.New("manifest: invalid firmware manifest")

// maxShown is how many problems an Error spells out before counting the rest.
const maxShown = 10

// Error lists every problem Parse found. It matches ErrInvalid.
type Error struct {
	Problems []string
}

// Error reads "config_json: <problem>; <problem>; ... and N more".
func (e *Error) Error() string {
	shown := e.Problems
	more := 0
	if len(shown) > maxShown {
		more = len(shown) - maxShown
		shown = shown[:maxShown]
	}
	msg := "config_json: " + strings.Join(shown, "; ")
	if more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	return msg
}

// Is matches ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// problems collects Parse's findings, each once, in the order found.
type problems struct {
	list []string
	seen map[string]bool
}

func (p *problems) addf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[msg] {
		p.seen[msg] = true
		p.list = append(p.list, msg)
	}
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &Error{Problems: p.list}
}
