package nvue

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// WaitDownUp waits for a switch reboot to complete: it probes path (e.g.
// "/nvue_v1/platform/firmware") every interval, for at most timeout, and
// returns nil only after it has seen the switch unreachable (a transport
// error or timeout) and then answer 200 again, as RMS requires after a
// power cycle. Each probe is bounded by the client's RequestTimeout.
func (c *Client) WaitDownUp(ctx context.Context, path string, interval, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sawDown := false
	err := poll(ctx, interval, func() (bool, error) {
		status, err := c.Probe(ctx, path)
		switch {
		case err != nil:
			if errors.Is(err, ErrTransport) || errors.Is(err, ErrTimeout) {
				sawDown = true
			}
			return false, nil
		case status == http.StatusOK && sawDown:
			return true, nil
		}
		return false, nil
	})
	if errors.Is(err, errPollTimeout) {
		return fmt.Errorf("wait for reboot of %s: %w (went down: %v)", c.ep.Host(), ErrTimeout, sawDown)
	}
	return err
}
