package rmsserver

import "errors"

// maxLogged bounds the text of an error a handler logs: the bound its
// reply already has (maxMessage). A caller's value quoted in an error (a
// 3.8 MB filename) must not grow the log by its size on every request.
const maxLogged = maxMessage

// loggedErr is err as a handler logs it: unchanged when its text fits in
// maxLogged bytes, else a plain error carrying the clipped text (the log
// needs the words, not the chain).
func loggedErr(err error) error {
	if err == nil {
		return nil
	}
	if s := err.Error(); len(s) > maxLogged {
		return errors.New(clip(s, maxLogged))
	}
	return err
}
