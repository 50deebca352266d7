package simssh

import (
	"slices"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Session is what a simulator offers on one SSH session channel. Serve
// answers its requests: the types in Accept are answered yes and nothing
// more (pty-req, env); exec, shell and the sftp subsystem go to Exec, Shell
// and SFTP; anything else, or a request whose field is nil, is refused.
type Session struct {
	// Accept are the request types answered yes without further action.
	Accept []string
	// Exec is called with an exec request's command before the request is
	// answered. It returns the command's run, which Serve calls once it
	// accepted the request and whose result it sends as the exit status;
	// or nil, to end the session unanswered (the callee drops what it must).
	Exec func(cmd string) (run func() int)
	// Shell runs an interactive shell on the accepted channel and returns
	// its exit status.
	Shell func() int
	// SFTP is the file system of the sftp subsystem, or false to refuse it
	// at this moment.
	SFTP func() (sftp.Handlers, bool)
}

// Serve answers the requests of the session channel ch until one of exec,
// shell or sftp ends it, or the client closes it.
func (s Session) Serve(ch ssh.Channel, reqs <-chan *ssh.Request) {
	for req := range reqs {
		switch {
		case slices.Contains(s.Accept, req.Type):
			_ = req.Reply(true, nil)
		case req.Type == "exec" && s.Exec != nil:
			run := s.Exec(PayloadString(req.Payload))
			if run == nil {
				return
			}
			_ = req.Reply(true, nil)
			SendExitStatus(ch, run())
			return
		case req.Type == "shell" && s.Shell != nil:
			_ = req.Reply(true, nil)
			SendExitStatus(ch, s.Shell())
			return
		case req.Type == "subsystem" && s.SFTP != nil && PayloadString(req.Payload) == "sftp":
			handlers, ok := s.SFTP()
			if !ok {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			srv := sftp.NewRequestServer(ch, handlers)
			_ = srv.Serve()
			_ = srv.Close()
			return
		default:
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
}
