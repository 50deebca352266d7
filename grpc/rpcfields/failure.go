package rpcfields

import (
	"google.golang.org/protobuf/proto"
)

// Failure says whether reply is an in-band FAILURE (its status field, or
// its response's, is RETURN_CODE_FAILURE) and returns its message or
// error_message.
func Failure(reply any) (string, bool) {
	pm, ok := reply.(proto.Message)
	if !ok {
		return "", false
	}
	m := pm.ProtoReflect()
	for range 2 {
		if !m.IsValid() {
			return "", false
		}
		fields := m.Descriptor().Fields()
		if st := fields.ByName("status"); st != nil && st.Enum() != nil {
			v := st.Enum().Values().ByNumber(m.Get(st).Enum())
			if v == nil || v.Name() != "RETURN_CODE_FAILURE" {
				return "", false
			}
			return StringField(m, "message", "error_message"), true
		}
		resp := fields.ByName("response")
		if resp == nil || resp.Message() == nil || !m.Has(resp) {
			return "", false
		}
		m = m.Get(resp).Message()
	}
	return "", false
}
