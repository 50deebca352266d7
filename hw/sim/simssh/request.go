package simssh

import (
	"encoding/binary"

	"golang.org/x/crypto/ssh"
)

// PayloadString is the SSH string at the start of a request payload (the
// command of "exec", the name of "subsystem"); "" when the payload is too
// short for the length it announces.
func PayloadString(payload []byte) string {
	if len(payload) < 4 {
		return ""
	}
	n := binary.BigEndian.Uint32(payload)
	if int(n) > len(payload)-4 {
		return ""
	}
	return string(payload[4 : 4+n])
}

// SendExitStatus tells the client a command ended with code.
func SendExitStatus(ch ssh.Channel, code int) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(code))
	_, _ = ch.SendRequest("exit-status", false, b[:])
}
