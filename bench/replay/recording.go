package replay

import (
	"encoding/json"
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// The methods a Server answers, by full gRPC method name.
const (
	GetVersion                = rmspb.RackManager_GetVersion_FullMethodName
	GetJobStatus              = rmspb.RackManager_GetJobStatus_FullMethodName
	BatchGetPowerState        = rmspb.RackManager_BatchGetPowerState_FullMethodName
	ApplyStoredFirmwareObject = rmspb.RackManager_ApplyStoredFirmwareObject_FullMethodName
)

// Methods lists the recorded methods in a fixed order.
var Methods = []string{GetJobStatus, GetVersion, BatchGetPowerState, ApplyStoredFirmwareObject}

// Recording is one encoded reply per method.
type Recording struct {
	Replies map[string][]byte `json:"replies"`
}

// Record keeps reply's wire encoding as the answer to method.
func (r *Recording) Record(method string, reply proto.Message) error {
	b, err := proto.Marshal(reply)
	if err != nil {
		return fmt.Errorf("encode the %s reply: %w", method, err)
	}
	if r.Replies == nil {
		r.Replies = map[string][]byte{}
	}
	r.Replies[method] = b
	return nil
}

// Save writes the recording to path.
func (r *Recording) Save(path string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write the recording: %w", err)
	}
	return nil
}

// Load reads a recording Save wrote.
func Load(path string) (*Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the recording: %w", err)
	}
	var r Recording
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode the recording %s: %w", path, err)
	}
	return &r, nil
}
